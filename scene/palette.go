package scene

// Palette is the number of distinct request styles a renderer draws:
// 12 colours × 3 fills (plain, dotted, striped). Each style is also
// labelled, so colour is never the only carrier of meaning.
const Palette = 36

// Colours gives each request a style (a palette slot) that no other request
// on screen holds at the same time, and that it keeps for as long as it is
// on screen. Newcomers take slots never used first, then the slot freed
// longest ago, so a newcomer is not mistaken for the request that just
// left. Beyond Palette requests at once, slots repeat (the labels still
// tell them apart).
type Colours struct {
	slot map[int]int // owner → slot
	free []int       // free slots, freed longest ago first
	next int         // slots never used start here
}

// NewColours returns an allocator with every slot free.
func NewColours() *Colours {
	return &Colours{slot: map[int]int{}}
}

// Resident tells the allocator which requests are on screen now: those
// that left free their slots (in the order given by the previous call),
// newcomers take one each, in the order given.
func (c *Colours) Resident(owners []int) {
	now := make(map[int]bool, len(owners))
	for _, o := range owners {
		if o != Free {
			now[o] = true
		}
	}
	// Free the slots of those that left, lowest slot first (deterministic).
	var gone []int
	for o, s := range c.slot {
		if !now[o] {
			gone = append(gone, s)
			delete(c.slot, o)
		}
	}
	sortInts(gone)
	c.free = append(c.free, gone...)
	for _, o := range owners {
		if o == Free {
			continue
		}
		if _, ok := c.slot[o]; ok {
			continue
		}
		if c.next >= Palette && len(c.free) > 0 {
			c.slot[o] = c.free[0]
			c.free = c.free[1:]
			continue
		}
		c.slot[o] = c.next % Palette
		c.next++
	}
}

// Of returns the style of a resident owner for Block.Colour and its
// siblings (slot + 1), or 0 for one that is not resident.
func (c *Colours) Of(owner int) int {
	if s, ok := c.slot[owner]; ok {
		return s + 1
	}
	return 0
}

// sortInts is an insertion sort: the lists are a handful of slots, and the
// package stays free of imports.
func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
