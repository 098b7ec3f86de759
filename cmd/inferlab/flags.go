package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/inferlab/inferlab/lessons"
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

// onceValue refuses a second value for a flag: the flag package would
// silently keep the last one (`bench --runs 1 --runs 2` ran 2), where each
// flag is meant to be given once.
type onceValue struct {
	flag.Value
	first string
	set   bool
}

func (o *onceValue) Set(v string) error {
	if o.set {
		return fmt.Errorf("given twice (%q and %q): give it once", o.first, v)
	}
	if err := o.Value.Set(v); err != nil {
		return err
	}
	o.first, o.set = v, true
	return nil
}

// String is safe on the zero value, which the flag package makes to print
// the defaults.
func (o *onceValue) String() string {
	if o == nil || o.Value == nil {
		return ""
	}
	return o.Value.String()
}

// IsBoolFlag keeps --flag (without =true) working for a boolean flag.
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// giveOnce makes every flag of fs defined so far refuse a second value,
// except those named in repeatable (--set key=value).
func giveOnce(fs *flag.FlagSet, repeatable ...string) {
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(repeatable, f.Name) {
			f.Value = &onceValue{Value: f.Value}
		}
	})
}

// printable is a message for the terminal: each line's control characters
// escaped (lessons.PrintableName), so that a path or a name in it cannot
// send escape sequences to the terminal.
func printable(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = lessons.PrintableName(l)
	}
	return strings.Join(lines, "\n")
}

// messages writes what a package logs as the command's own lines: each
// after "inferlab " and through printable (`static: …` reads as
// `inferlab static: …`, as the command's errors do).
type messages struct{ w io.Writer }

func (m messages) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if _, err := fmt.Fprintln(m.w, printable("inferlab "+line)); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
