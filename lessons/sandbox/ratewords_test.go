package sandbox

import (
	"strings"
	"testing"
)

// The rate knob counts conversations when the workload is chats: the
// setup says so in the units the price step uses ("32 req/s (8
// conversations/s)"), not "8 per second" of 200 requests.
func TestSetupRateInBothUnits(t *testing.T) {
	s, _, err := lesson.Run(map[string]string{"workload": "chats", "rate": "8"})
	if err != nil {
		t.Fatal(err)
	}
	setup := s.Steps[0].Narration
	for _, want := range []string{"8 conversations per second", "32 req/s"} {
		if !strings.Contains(setup, want) {
			t.Errorf("the setup does not say %q: %s", want, setup)
		}
	}
	if strings.Contains(setup, "at 8 per second") {
		t.Errorf("the setup gives the conversations' rate as a request rate: %s", setup)
	}
}
