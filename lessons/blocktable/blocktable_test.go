package blocktable

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestBlockTableAddressByFormula(t *testing.T) {
	for _, tc := range []struct {
		model, dtype string
		b, length, t int
		sEntry       float64
	}{
		{"llama-3.1-8b", "bf16", 16, 72, 0, 131072},
		{"llama-3.1-8b", "bf16", 16, 72, 15, 131072}, // last slot of block 0
		{"llama-3.1-8b", "bf16", 16, 72, 16, 131072}, // first slot of block 1
		{"llama-3.1-8b", "bf16", 16, 72, 31, 131072},
		{"llama-3.1-8b", "bf16", 16, 72, 32, 131072},
		{"llama-3.1-8b", "bf16", 16, 72, 71, 131072}, // last token
		{"llama-3.1-70b", "bf16", 32, 200, 100, 327680},
		{"llama-3.1-8b", "fp8", 8, 40, 39, 65536},
		{"qwen2.5-7b", "bf16", 1, 10, 9, 57344},
	} {
		set := map[string]string{"model": tc.model, "kv_dtype": tc.dtype, "block_size": fmt.Sprint(tc.b),
			"length": fmt.Sprint(tc.length), "token": fmt.Sprint(tc.t)}
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatalf("%v: %v", set, err)
		}
		get := func(k string) float64 { v, _ := s.Metric(k); return v }
		if get("s_entry_bytes") != tc.sEntry {
			t.Errorf("%v: S_entry %v, want %v", set, get("s_entry_bytes"), tc.sEntry)
		}
		if get("logical_block") != float64(tc.t/tc.b) || get("offset") != float64(tc.t%tc.b) {
			t.Errorf("%v: logical %v offset %v, want %d and %d", set, get("logical_block"), get("offset"), tc.t/tc.b, tc.t%tc.b)
		}
		want := get("physical_block")*float64(tc.b)*tc.sEntry + get("offset")*tc.sEntry
		if get("physical_address_bytes") != want {
			t.Errorf("%v: address %v, want %v by the formula", set, get("physical_address_bytes"), want)
		}
		if get("table_blocks") != float64((tc.length+tc.b-1)/tc.b) {
			t.Errorf("%v: %v blocks in the table", set, get("table_blocks"))
		}
	}
}

func TestBlockTableRejectsTokenOutsideRequest(t *testing.T) {
	for _, tok := range []string{"72", "500", "-1", "x"} {
		_, _, err := lesson.Run(map[string]string{"length": "72", "token": tok})
		var pe *lessons.ParamError
		if !errors.As(err, &pe) || pe.Key != "token" || !strings.Contains(err.Error(), tok) {
			t.Errorf("token=%s: err %v, want an error naming token and its value", tok, err)
		}
	}
}

// With neighbours churning, the request's blocks are scattered; alone, they
// come off the free queue in order.
func TestBlockTableScatter(t *testing.T) {
	alone, _, _ := lesson.Run(map[string]string{"neighbours": "0", "length": "160"})
	busy, _, _ := lesson.Run(map[string]string{"neighbours": "4", "length": "160"})
	if r, _ := alone.Metric("contiguous_runs"); r != 1 {
		t.Errorf("alone: %v runs, want 1", r)
	}
	if r, _ := busy.Metric("contiguous_runs"); r < 3 {
		t.Errorf("with 4 neighbours: %v runs, want the blocks scattered", r)
	}
}

// The run's openings follow A's growth: each opened block is the next
// logical block, its table is a prefix of A's final table, and the address
// comes from that table.
func TestBlockTableRunFollowsTheTable(t *testing.T) {
	v, err := lesson.ResolveChecked(map[string]string{"length": "300", "neighbours": "5", "token": "250"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runBlockTable(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.opened) == 0 || len(r.opened) > 2*maxTableSteps {
		t.Fatalf("%d openings shown, want 1 to %d", len(r.opened), 2*maxTableSteps)
	}
	last := -1
	for _, o := range r.opened {
		if o.logical <= last || len(o.table) != o.logical+1 || !slices.Equal(o.table, r.table[:len(o.table)]) || o.token != o.logical*r.blockSize {
			t.Fatalf("opening %+v after logical %d; final table %v", o, last, r.table)
		}
		last = o.logical
	}
	if last != len(r.table)-1 {
		t.Errorf("the last opening is logical %d, the table has %d blocks", last, len(r.table))
	}
	if r.addr.Physical != r.table[r.addr.Logical] || r.addr.Logical != 250/r.blockSize {
		t.Errorf("address %+v, table %v", r.addr, r.table)
	}
}

// The block-table lesson frees blocks as vLLM v0.8–v0.10 did
// (core/allocator.Paged.Free); its engine line names that version rather
// than "vLLM v1" alone.
func TestBlockTableFreeOrderVersion(t *testing.T) {
	if !strings.Contains(lesson.Engine, "v0.8–v0.10") {
		t.Errorf("engine line %q does not name the free order's version", lesson.Engine)
	}
}
