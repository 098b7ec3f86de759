//go:build !wasm

package e2e

import "testing"

func TestZZProbe(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	for _, q := range []string{"?step=99999", "?step=99999&seed=7", "?block_size=16&block_size=999", "?nosuchknob=1&Block_Size=1"} {
		b.navigate(site + "/lesson/garage" + q)
		b.waitFor("settled", `document.querySelector("#lab").dataset.step !== ""`)
		s := b.mustState()
		t.Logf("%s: step %s notice %q", q, s.Step, s.Notice)
	}
}
