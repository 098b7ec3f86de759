package server

// The tests run on every lesson, as the lab's entry points do.
import _ "github.com/inferlab/inferlab/lessons/all"
