package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestServeCmdBadArgs(t *testing.T) {
	var out, errb bytes.Buffer
	if code := serveCmd([]string{"--nope"}, &out, &errb); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	errb.Reset()
	if code := serveCmd([]string{"extra"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "extra") {
		t.Errorf("extra argument: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := serveCmd([]string{"--web", t.TempDir() + "/missing"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not found") {
		t.Errorf("missing web dir: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := serveCmd([]string{"--addr", "256.0.0.1:bad", "--web", t.TempDir()}, &out, &errb); code != 1 {
		t.Errorf("bad address: exit %d, %q", code, errb.String())
	}
}
