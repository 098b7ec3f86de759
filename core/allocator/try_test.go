package allocator

import (
	"errors"
	"testing"
)

// TryAllocateSlots reports the same shortfall AllocateSlots returns as an
// error, as a value and without allocating; room and bad requests behave as
// in AllocateSlots.
func TestTryAllocateSlots(t *testing.T) {
	paged, err := NewPaged(4, 16) // 64 slots
	if err != nil {
		t.Fatal(err)
	}
	contig, err := NewContiguous(64, exact)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]interface {
		KVPool
		TryPool
	}{"paged": paged, "contiguous": contig} {
		if _, ok, err := p.TryAllocateSlots(1, Slots{New: 40, Final: 40}); !ok || err != nil {
			t.Fatalf("%s: admitting 40 of 64 slots: ok %v, %v", name, ok, err)
		}
		big := Slots{New: 30, Final: 30}
		short, ok, err := p.TryAllocateSlots(2, big)
		if ok || err != nil || short.Need == 0 {
			t.Errorf("%s: 30 more slots: short %+v, ok %v, err %v; want a shortfall", name, short, ok, err)
		}
		var want *NoSpaceError
		if err := p.AllocateSlots(2, big); !errors.As(err, &want) || *want != short || !errors.Is(err, ErrNoSpace) {
			t.Errorf("%s: AllocateSlots = %v; want the shortfall %+v", name, err, short)
		}
		if n := testing.AllocsPerRun(100, func() { p.TryAllocateSlots(2, big) }); n != 0 {
			t.Errorf("%s: a refused TryAllocateSlots allocated %v times", name, n)
		}
		if _, ok, err := p.TryAllocateSlots(3, Slots{New: -1}); ok || err == nil {
			t.Errorf("%s: New = -1: ok %v, err %v; want an error", name, ok, err)
		}
	}
	// The paged pool's handle path reports the same error type.
	s := paged.Seq(1)
	if err := paged.GrowSeq(s, 100, nil); !errors.Is(err, ErrNoSpace) {
		t.Errorf("GrowSeq past the pool: %v", err)
	}
}
