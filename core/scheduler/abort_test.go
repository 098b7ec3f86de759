package scheduler

import "testing"

// TestAbort: an aborted request leaves the queue or the running list,
// frees its blocks, and is not reported as finished; the others finish.
func TestAbort(t *testing.T) {
	reqs := []Request{
		{ID: 0, Arrival: 0, Prompt: 40, Output: 50},
		{ID: 1, Arrival: 0, Prompt: 40, Output: 50},
		{ID: 2, Arrival: 0, Prompt: 40, Output: 50},
	}
	c := cfg(64, 2, 64) // two run at once: request 2 waits
	s := mustNew(t, c, reqs)
	for range 3 {
		mustStep(t, s)
	}
	free := s.Pool().FreeBlocks()
	if err := s.Abort(1); err != nil { // running
		t.Fatal(err)
	}
	if got := s.Pool().FreeBlocks(); got <= free {
		t.Errorf("free blocks %d after aborting a running request, want more than %d", got, free)
	}
	if err := s.Abort(1); err != nil {
		t.Errorf("aborting twice: %v", err)
	}
	if err := s.Abort(7); err == nil {
		t.Error("aborting an unknown request: no error")
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, m := range s.Requests() {
		ids = append(ids, m.ID)
	}
	if len(ids) != 2 || ids[0] != 0 || ids[1] != 2 || s.Finished() != 2 {
		t.Errorf("finished %v (%d), want [0 2]", ids, s.Finished())
	}

	s = mustNew(t, c, reqs)
	mustStep(t, s)
	if err := s.Abort(2); err != nil { // waiting
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if s.Finished() != 2 {
		t.Errorf("finished %d after aborting a waiting request, want 2", s.Finished())
	}
}
