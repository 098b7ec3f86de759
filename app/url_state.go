package app

import (
	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/lessons"
)

// A page's state in its address is read and written by package urlstate
// (shared with the simulation worker).

// Hide lists the parts of a lesson page that ?hide= removes.
type Hide = urlstate.Hide

// EncodeQuery writes the step (1-based) and every knob, in the lesson's
// order, as a query string (without "?"); see urlstate.EncodeQuery.
func EncodeQuery(l *lessons.Lesson, v lessons.Values, step int) string {
	return urlstate.EncodeQuery(l, v, step)
}
