package scene

import "testing"

// Requests on screen together never share a style, keep theirs while they
// stay, and a freed style goes to the back of the line.
func TestColoursUniqueAndStable(t *testing.T) {
	c := NewColours()
	steps := [][]int{
		{1, 2, 3},
		{1, 2, 3, 4},
		{2, 3, 4, 5}, // 1 leaves
		{2, 3, 4, 5, 6},
		{3, 4, 5, 6, 7, Free},
	}
	held := map[int]int{}
	for i, owners := range steps {
		c.Resident(owners)
		seen := map[int]int{}
		for _, o := range owners {
			if o == Free {
				if c.Of(o) != 0 {
					t.Errorf("step %d: Free has a style", i)
				}
				continue
			}
			s := c.Of(o)
			if s < 1 || s > Palette {
				t.Fatalf("step %d: owner %d has style %d, want 1..%d", i, o, s, Palette)
			}
			if other, dup := seen[s]; dup {
				t.Errorf("step %d: owners %d and %d share style %d", i, other, o, s)
			}
			seen[s] = o
			if h, ok := held[o]; ok && h != s {
				t.Errorf("step %d: owner %d changed style %d → %d while on screen", i, o, h, s)
			}
			held[o] = s
		}
	}
	// Unused styles go first: 5 and 7 do not take the styles 1 and 2 just
	// freed.
	if c.Of(1) != 0 || held[5] != 5 || held[7] != 7 {
		t.Errorf("Of(1)=%d, 5 → %d, 7 → %d; want 0, 5, 7", c.Of(1), held[5], held[7])
	}
}

// Once every style has been used, the one freed longest ago goes first.
func TestColoursReuseOldestFreed(t *testing.T) {
	c := NewColours()
	var all []int
	for o := 0; o < Palette; o++ {
		all = append(all, o)
	}
	c.Resident(all)
	c.Resident(all[2:])                   // 0 and 1 leave (styles 1, 2)
	c.Resident(append(all[3:], 100))      // 2 leaves (style 3); 100 takes style 1
	c.Resident(append(all[3:], 100, 101)) // 101 takes style 2
	if c.Of(100) != 1 || c.Of(101) != 2 {
		t.Errorf("Of(100) = %d, Of(101) = %d; want 1 and 2", c.Of(100), c.Of(101))
	}
}

// Beyond the palette, styles repeat rather than fail.
func TestColoursWrap(t *testing.T) {
	c := NewColours()
	var owners []int
	for o := 0; o < Palette+3; o++ {
		owners = append(owners, o)
	}
	c.Resident(owners)
	if c.Of(Palette) != 1 || c.Of(Palette-1) != Palette {
		t.Errorf("Of(%d) = %d, Of(%d) = %d; want 1 and %d", Palette, c.Of(Palette), Palette-1, c.Of(Palette-1), Palette)
	}
}
