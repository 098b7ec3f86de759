package main

import (
	"errors"
	"fmt"
	"strings"
)

// textFlag is a string flag that may be given once and never empty: a
// repeated flag would silently keep the last value, and an empty one would
// silently mean "not given".
type textFlag struct {
	value string
	set   bool
}

func (f *textFlag) String() string { return f.value }

func (f *textFlag) Set(v string) error {
	if f.set {
		return fmt.Errorf("given twice (%q and %q): give it once", f.value, v)
	}
	if strings.TrimSpace(v) == "" {
		return errors.New("empty: give a value or leave the flag out")
	}
	f.value, f.set = v, true
	return nil
}

// or returns the flag's value, or def when it was not given.
func (f *textFlag) or(def string) string {
	if f.set {
		return f.value
	}
	return def
}

// setFlags collects repeated --set key=value pairs, each key once.
type setFlags map[string]string

func (s setFlags) String() string { return "" }

func (s setFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want key=value", kv)
	}
	if old, dup := s[k]; dup {
		return fmt.Errorf("%s is given twice (%q and %q): give each parameter once", k, old, v)
	}
	s[k] = v
	return nil
}
