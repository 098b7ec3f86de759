package lessons_test

// The external tests see every lesson, as the lab's entry points do.
import _ "github.com/inferlab/inferlab/lessons/all"
