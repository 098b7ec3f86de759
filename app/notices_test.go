package app

import (
	"net/url"
	"strings"
	"testing"
)

// A step past the last is a notice however the page reaches it: go-app
// reads the address twice on a first visit (OnInit, then OnNav), and the
// second read found the state already shown and dropped the notice
// (`?step=99999` at the defaults showed step 20 silently in every lesson).
func TestStepOutOfRangeNoticeSurvivesSecondRead(t *testing.T) {
	l, k := intKnob(t)
	p := &Player{}
	u, _ := url.Parse(LessonPath(l.Slug) + "?step=99999&" + k.Key + "=" + k.DefaultText() + "&" + k.Key + "=" + k.DefaultText() + "&nosuchknob=1")
	for read := 1; read <= 2; read++ {
		p.load(u)
		all := strings.Join(p.notices, "\n")
		n := len(p.st.Script.Steps)
		for _, want := range []string{"step = 99999 is out of range", k.Key + " is given 2 times", "nosuchknob is not a parameter"} {
			if strings.Count(all, want) != 1 {
				t.Errorf("read %d: notices %q; want %q once", read, all, want)
			}
		}
		if p.st.Step != n-1 {
			t.Errorf("read %d: step %d of %d", read, p.st.Step+1, n)
		}
	}
}
