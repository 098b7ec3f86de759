//go:build !wasm

package e2e

import (
	"testing"
)

func TestLearnerSmoke(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.navigate(site + "/lesson/garage")
	b.screenshot("learner-smoke")
	t.Log(b.mustState())
}
