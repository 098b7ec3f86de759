// Package all registers every lesson of the lab: importing it for its side
// effects (import _ "github.com/inferlab/inferlab/lessons/all") fills
// lessons.All and lessons.Get, as importing an image format or a
// database/sql driver registers it. This file is the only list of the
// lessons: adding one is a folder under lessons/ and a line here (the
// index orders them by their own Group and Rank, not by this list);
// removing one is deleting both.
package all

import (
	_ "github.com/inferlab/inferlab/lessons/batching"
	_ "github.com/inferlab/inferlab/lessons/blocktable"
	_ "github.com/inferlab/inferlab/lessons/chunkedprefill"
	_ "github.com/inferlab/inferlab/lessons/conversations"
	_ "github.com/inferlab/inferlab/lessons/cowfork"
	_ "github.com/inferlab/inferlab/lessons/cudagraphs"
	_ "github.com/inferlab/inferlab/lessons/disaggregation"
	_ "github.com/inferlab/inferlab/lessons/engines"
	_ "github.com/inferlab/inferlab/lessons/garage"
	_ "github.com/inferlab/inferlab/lessons/kvbudget"
	_ "github.com/inferlab/inferlab/lessons/kvtiers"
	_ "github.com/inferlab/inferlab/lessons/measuring"
	_ "github.com/inferlab/inferlab/lessons/parallelism"
	_ "github.com/inferlab/inferlab/lessons/planner"
	_ "github.com/inferlab/inferlab/lessons/prefixcache"
	_ "github.com/inferlab/inferlab/lessons/roofline"
	_ "github.com/inferlab/inferlab/lessons/sandbox"
	_ "github.com/inferlab/inferlab/lessons/smartrouting"
	_ "github.com/inferlab/inferlab/lessons/specdecode"
)
