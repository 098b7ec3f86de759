package allocator

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// checkPaged verifies the block-pool invariants of engines.md §7 that hold
// in this first cut: ref counts equal the tables holding a block, a block is
// free exactly when nobody references it, nothing is lost or duplicated.
func checkPaged(t *testing.T, p *Paged) {
	t.Helper()
	holders := make([]int, p.NumBlocks())
	for req, tbl := range p.tables {
		if want := p.BlocksFor(p.tokens[req]); len(tbl) != want {
			t.Fatalf("request %d holds %d blocks for %d tokens, want %d", req, len(tbl), p.tokens[req], want)
		}
		for _, b := range tbl {
			holders[b]++
		}
	}
	seen := map[int]bool{}
	for _, b := range p.free.order() {
		if seen[b] {
			t.Fatalf("block %d twice in the free queue", b)
		}
		seen[b] = true
	}
	if len(seen) != p.free.len() {
		t.Fatalf("free queue walks %d blocks but counts %d", len(seen), p.free.len())
	}
	held := 0
	for b := range holders {
		if holders[b] != p.refs[b] {
			t.Fatalf("block %d: ref count %d, held by %d tables", b, p.refs[b], holders[b])
		}
		if (p.refs[b] == 0) != seen[b] {
			t.Fatalf("block %d: refs %d but in free queue = %v", b, p.refs[b], seen[b])
		}
		if p.refs[b] > 0 {
			held++
		}
	}
	if held+p.FreeBlocks() != p.NumBlocks() {
		t.Fatalf("blocks not conserved: %d held + %d free != %d", held, p.FreeBlocks(), p.NumBlocks())
	}
	u := p.Usage()
	if u.Reserved-u.Stored > u.Resident*(p.BlockSize()-1) {
		t.Fatalf("waste %d slots exceeds (B-1) per request (%d requests, B=%d)", u.Reserved-u.Stored, u.Resident, p.BlockSize())
	}
}

// runPagedOps applies a sequence of operations decoded from ops and checks
// the invariants after each one. Failed allocations must change nothing.
func runPagedOps(t *testing.T, numBlocks, blockSize int, ops []byte) {
	p, err := NewPaged(numBlocks, blockSize)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%3, int(ops[i+1])
		req := arg % 8
		before := p.Usage()
		beforeFree := p.FreeBlocks()
		switch op {
		case 0:
			err = p.Admit(req, arg)
		case 1:
			err = p.Append(req, arg%40)
		case 2:
			err = p.Free(req)
		}
		if errors.Is(err, ErrNoSpace) && (p.Usage() != before || p.FreeBlocks() != beforeFree) {
			t.Fatalf("op %d failed with ErrNoSpace but changed the pool", op)
		}
		p.Events()
		checkPaged(t, p)
	}
}

func TestPagedInvariantsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		ops := make([]byte, 400)
		for i := range ops {
			ops[i] = byte(r.IntN(256))
		}
		runPagedOps(t, 1+r.IntN(64), 1+r.IntN(32), ops)
	}
}

func FuzzPagedOps(f *testing.F) {
	f.Add(uint8(16), uint8(4), []byte{0, 17, 1, 3, 1, 30, 2, 1, 0, 200, 2, 17})
	f.Add(uint8(1), uint8(1), []byte{0, 0, 0, 1, 1, 1, 2, 0})
	f.Add(uint8(64), uint8(16), []byte{0, 255, 0, 254, 1, 39, 1, 39, 2, 255, 0, 9})
	f.Fuzz(func(t *testing.T, blocks, size uint8, ops []byte) {
		runPagedOps(t, 1+int(blocks)%128, 1+int(size)%64, ops)
	})
}

func TestPagedOnDemandAndTailFirstFree(t *testing.T) {
	p, _ := NewPaged(8, 4)
	if err := p.Admit(0, 5); err != nil { // 5 tokens → 2 blocks
		t.Fatal(err)
	}
	if got := p.Table(0); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("table after admit = %v, want [0 1] (head of the free queue)", got)
	}
	for i := 0; i < 3; i++ { // tokens 6..8 fit in block 1
		if err := p.Append(0, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(p.Table(0)); n != 2 {
		t.Fatalf("8 tokens in blocks of 4 hold %d blocks, want 2", n)
	}
	_ = p.Append(0, 1) // token 9 opens block 2
	if got := p.Table(0); len(got) != 3 || got[2] != 2 {
		t.Fatalf("table = %v, want a third block 2", got)
	}
	_ = p.Free(0)
	// free queue: 3..7 then the freed blocks tail first: 2, 1, 0
	want := []int{3, 4, 5, 6, 7, 2, 1, 0}
	got := p.free.order()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("free queue = %v, want %v", got, want)
		}
	}
}

func TestPagedAllOrNothing(t *testing.T) {
	p, _ := NewPaged(4, 16)
	_ = p.Admit(0, 40) // 3 blocks
	if err := p.Admit(1, 20); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("admit needing 2 of 1 free blocks: err = %v", err)
	}
	if p.Table(1) != nil || p.FreeBlocks() != 1 {
		t.Fatalf("failed admit left state behind")
	}
	if err := p.Append(0, 30); !errors.Is(err, ErrNoSpace) { // 70 tokens need 5 blocks
		t.Fatalf("append past the pool: err = %v", err)
	}
	if p.Tokens(0) != 40 || len(p.Table(0)) != 3 {
		t.Fatalf("failed append changed the request: %d tokens, %d blocks", p.Tokens(0), len(p.Table(0)))
	}
}

func TestPagedWasteBound(t *testing.T) {
	// Waste per request is B-1 at most and (B - L mod B) mod B exactly.
	for _, tc := range []struct{ b, tokens, waste int }{
		{16, 16, 0}, {16, 17, 15}, {16, 31, 1}, {16, 1024, 0}, {16, 1025, 15}, {1, 77, 0}, {32, 100, 28},
	} {
		p, _ := NewPaged(1000, tc.b)
		_ = p.Admit(0, tc.tokens)
		u := p.Usage()
		if got := u.Reserved - u.Stored; got != tc.waste {
			t.Errorf("B=%d L=%d: waste %d slots, want %d", tc.b, tc.tokens, got, tc.waste)
		}
	}
}
