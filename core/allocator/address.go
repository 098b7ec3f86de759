package allocator

import "fmt"

// Address is where one token's KV entry lives (Part 14, formulation 1).
type Address struct {
	Token    int   // t, the token's index in its sequence
	Logical  int   // ⌊t/B⌋
	Offset   int   // t mod B
	Physical int   // block table[logical]
	Byte     int64 // physical·B·S_entry + offset·S_entry
}

// Translate maps token t of request req to its physical address, for KV
// entries of sEntry bytes per token (all layers, K and V; see
// core/hardware).
func (p *Paged) Translate(req, t int, sEntry int64) (Address, error) {
	r := p.reqs.get(req)
	if r == nil {
		return Address{}, fmt.Errorf("allocator: request %d holds no blocks", req)
	}
	if n := r.tokens(); t < 0 || t >= n {
		return Address{}, fmt.Errorf("allocator: token %d is outside the sequence: want 0 to %d", t, n-1)
	}
	if sEntry < 1 {
		return Address{}, fmt.Errorf("allocator: S_entry = %d bytes, want ≥ 1", sEntry)
	}
	a := Address{Token: t, Logical: t / p.blockSize, Offset: t % p.blockSize}
	a.Physical = r.blocks[a.Logical]
	a.Byte = int64(a.Physical)*int64(p.blockSize)*sEntry + int64(a.Offset)*sEntry
	return a, nil
}
