package sandbox

import (
	"math"
	"sync"

	"github.com/inferlab/inferlab/core/workload"
)

// The Mooncake preset: whole conversations from the whole hour. The
// trace's prefix reuse (a prompt's leading blocks that an earlier prompt
// already had: 37.4% of its prompt tokens over the hour) comes from
// conversations resending their history, minutes apart (half the reuse
// comes more than 114 s after the block was last seen), so the first
// requests of the trace show almost none: 4.6% of the first 152, 20.7% of
// the first 918 (300 s). Its prompts average 12,035 tokens, so the work
// bound admits about 200 of them, not the thousands whose window would
// reuse as the trace does. The sandbox keeps the hour and thins it
// instead: one conversation in mooncakeThinning (every turn of each, so
// each prompt finds its history as in the trace). Of the
// mooncakeThinning such samples (conversations numbered by first
// arrival, those whose number leaves each remainder), it replays the one
// whose mean prompt, mean output and share of requests in conversations
// of several turns come nearest the whole trace's; its reuse is then
// what TestMooncakeSampleReusesAsTheTrace checks, not what chose it.

// mooncakeID is the Mooncake preset's workload choice.
const mooncakeID = "mooncake-conversation"

// mooncakeThinning keeps one conversation in this many: about 180 of the
// trace's 12,031 requests, within the work bound at vLLM's defaults.
const mooncakeThinning = 64

// mooncakeHour is the trace's span, s: it samples one hour.
const mooncakeHour = 3600

// mooncakeTraceReuse is kit.PrefixReuse of the whole trace, for the narration
// (TestMooncakeSampleReusesAsTheTrace computes it again).
const mooncakeTraceReuse = 0.3736

// mooncakeSampleLengths are the sample's prompt and output tokens, in
// arrival order, for Check, which cannot load the trace in the page and
// bounds the work of the first n requests by theirs exactly
// (TestMooncakeSampleLengths checks them against the trace).
var mooncakeSampleLengths = [...][2]int{{45922, 265}, {13616, 492}, {2016, 302}, {1641, 567}, {4743, 541}, {81445, 365}, {2214, 520}, {9667, 114},
	{4535, 370}, {1087, 257}, {1300, 377}, {9851, 454}, {1845, 190}, {6068, 130}, {914, 503}, {7057, 372},
	{81847, 746}, {3507, 98}, {24623, 5}, {5947, 659}, {1691, 693}, {82630, 618}, {8021, 284}, {6617, 662},
	{3480, 235}, {121471, 1059}, {1501, 395}, {1845, 151}, {83274, 676}, {1329, 242}, {11724, 409}, {2008, 160},
	{4760, 194}, {4731, 42}, {11358, 42}, {899, 254}, {2772, 165}, {9231, 860}, {11443, 47}, {4884, 229},
	{895, 485}, {2421, 474}, {15610, 55}, {67223, 15}, {4812, 641}, {15675, 415}, {8687, 592}, {1475, 61},
	{11502, 20}, {17357, 447}, {41114, 409}, {18038, 241}, {13933, 64}, {1713, 232}, {12524, 401}, {5237, 112},
	{895, 196}, {12947, 365}, {905, 19}, {2224, 403}, {1116, 139}, {8965, 203}, {8832, 570}, {1260, 200},
	{900, 592}, {4450, 208}, {1276, 146}, {26027, 385}, {10335, 285}, {19039, 19}, {1724, 200}, {4519, 233},
	{46522, 430}, {5461, 667}, {21862, 569}, {17361, 322}, {19836, 546}, {5334, 223}, {15755, 362}, {6804, 669},
	{10397, 156}, {25745, 371}, {5594, 561}, {8785, 5}, {13969, 198}, {895, 22}, {10693, 609}, {5412, 215},
	{16085, 359}, {12191, 499}, {1196, 122}, {15362, 360}, {19832, 462}, {6159, 267}, {913, 406}, {1302, 174},
	{894, 208}, {9319, 727}, {19082, 360}, {12873, 358}, {5573, 67}, {7627, 30}, {15497, 277}, {7546, 416},
	{18597, 552}, {4395, 341}, {7302, 365}, {18139, 371}, {23872, 369}, {5613, 543}, {5065, 189}, {2554, 600},
	{902, 644}, {10731, 3}, {3137, 448}, {17139, 475}, {3613, 379}, {900, 541}, {21714, 319}, {986, 7},
	{6093, 448}, {13957, 423}, {7986, 171}, {901, 28}, {7119, 493}, {6493, 372}, {20370, 701}, {45953, 235},
	{904, 374}, {10223, 361}, {3171, 581}, {19669, 258}, {895, 316}, {6857, 476}, {25561, 621}, {20093, 196},
	{20098, 15}, {9101, 312}, {20235, 28}, {5998, 456}, {6178, 33}, {11031, 392}, {32513, 361}, {16837, 9},
	{16477, 199}, {11151, 476}, {912, 402}, {2808, 671}, {21298, 897}, {5202, 310}, {32905, 363}, {912, 531},
	{896, 187}, {2808, 576}, {899, 364}, {912, 435}, {1359, 198}, {22768, 628}, {14390, 82}, {5104, 143},
	{8920, 536}, {1206, 329}, {3730, 455}, {7250, 1005}, {7408, 363}, {13115, 248}, {4614, 316}, {15909, 122},
	{42591, 9}, {8268, 549}, {4880, 226}, {7751, 510}, {7775, 388}, {12786, 298}, {5216, 142}, {8826, 547},
	{8473, 334}, {902, 251}, {2900, 359}, {9491, 495},
}

// mooncakeSampleBounds are the sample's bounds: its requests, its longest
// request and its mean rate over the hour (the means are Check's exact
// lengths' business).
var mooncakeSampleBounds = workload.PresetBounds{Requests: len(mooncakeSampleLengths), Longest: 122530, Rate: float64(len(mooncakeSampleLengths)) / mooncakeHour}

// mooncakeLeading is the sample's first n requests' lengths, for Check.
func mooncakeLeading(n int) []workload.Request {
	out := make([]workload.Request, min(n, len(mooncakeSampleLengths)))
	for i := range out {
		out[i] = workload.Request{ID: i, Prompt: mooncakeSampleLengths[i][0], Output: mooncakeSampleLengths[i][1], PrefixGroup: -1, Conversation: -1, Prev: -1}
	}
	return out
}

var (
	mooncakeOnce   sync.Once
	mooncakeSample []workload.Request
)

// mooncakeRequests is the sample, in arrival order, numbered from 0 (Prev
// renumbered with it).
func mooncakeRequests() []workload.Request {
	mooncakeOnce.Do(func() {
		all, err := workload.LoadWholeTrace(mooncakeID)
		if err != nil {
			panic(err) // the preset is tested to load
		}
		mooncakeSample = thinConversations(all, mooncakeThinning, balancedRemainder(all, mooncakeThinning))
	})
	return append([]workload.Request(nil), mooncakeSample...)
}

// thinConversations keeps the requests of w whose conversation's number
// leaves remainder r modulo k, renumbered.
func thinConversations(w []workload.Request, k, r int) []workload.Request {
	var out []workload.Request
	id := map[int]int{}
	for _, q := range w {
		if q.Conversation%k != r {
			continue
		}
		id[q.ID] = len(out)
		if q.Prev >= 0 {
			q.Prev = id[q.Prev]
		}
		q.ID = len(out)
		out = append(out, q)
	}
	return out
}

// sampleFigures are what balancedRemainder matches: mean prompt, mean
// output, and the share of requests in conversations of several turns.
func sampleFigures(w []workload.Request) [3]float64 {
	turns := map[int]int{}
	for _, q := range w {
		turns[q.Conversation]++
	}
	var f [3]float64
	for _, q := range w {
		f[0] += float64(q.Prompt)
		f[1] += float64(q.Output)
		if turns[q.Conversation] > 1 {
			f[2]++
		}
	}
	for i := range f {
		f[i] /= float64(max(1, len(w)))
	}
	return f
}

// balancedRemainder is the remainder modulo k whose sample of w's
// conversations has the sampleFigures nearest w's: the smallest largest
// relative difference (the first such remainder on a tie).
func balancedRemainder(w []workload.Request, k int) int {
	whole := sampleFigures(w)
	best, bestDev := 0, math.Inf(1)
	for r := range k {
		f := sampleFigures(thinConversations(w, k, r))
		dev := 0.0
		for i := range f {
			dev = max(dev, math.Abs(f[i]/whole[i]-1))
		}
		if dev < bestDev {
			best, bestDev = r, dev
		}
	}
	return best
}
