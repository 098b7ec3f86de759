package workload

// Vocab is the size of the token-id space: Llama 3's vocabulary of 128,256
// tokens. Token ids are in [0, Vocab).
const Vocab = 128256

// Request is one request of a workload.
type Request struct {
	// ID numbers the requests of a workload 0, 1, 2, … in arrival order
	// (generators and ParseTrace number them so).
	ID int
	// Arrival is when the request arrives, in seconds from the start.
	Arrival float64
	// Prompt is the number of prompt tokens.
	Prompt int
	// Output is the number of output tokens to generate (at least 1).
	Output int
	// PrefixGroup says which requests share a prefix: requests of one group
	// share their first PrefixLen prompt tokens (the smaller PrefixLen, if
	// theirs differ). −1 means none. For chats it is the system prompt.
	PrefixGroup int
	// PrefixLen is the number of shared prompt tokens, 0 to Prompt.
	PrefixLen int

	// Segments, when not empty, spell out where the prompt's token ids come
	// from, run by run, and TokenIDs uses them instead of PrefixGroup and
	// PrefixLen (which then only describe the sharing). Tokens past the
	// segments' total are unique to the request; segments past Prompt are
	// cut. Chats lets consecutive turns of a conversation share the
	// backing array: treat Segments as read-only.
	Segments []Segment
	// OutputSource is the source of the output token ids (OutputTokenIDs);
	// 0 means a source unique to the request. Chats sets it so that the
	// next turn's prompt repeats this turn's output.
	OutputSource int64

	// Conversation is the index of the request's conversation (Chats), or
	// −1 when it is not part of one.
	Conversation int
	// Turn is the request's 0-based turn within its conversation (0 when
	// it is not part of one).
	Turn int
	// Prev is the ID of the conversation's previous turn, or −1. A
	// simulator may hold a turn back until Prev has finished.
	Prev int
}

// Segment is a run of Len token ids taken from the start of a source. A
// source is any int64 naming a fixed pseudo-random sequence of ids; two
// segments with the same source and length have identical ids. This
// package's own sources set the top byte to a kind from 1 to 6; a caller
// building its own segments should use sources in [0, 1<<56) to stay clear
// of them.
type Segment struct {
	Source int64
	Len    int
}

// Kinds of source, kept in the top byte of a Source.
const (
	kindGroup    = 1 // PrefixGroup shorthand: value = group
	kindUnique   = 2 // prompt tokens unique to a request: value = ID
	kindOutput   = 3 // output tokens unique to a request: value = ID
	kindSystem   = 4 // a chat system prompt: value = index
	kindUserTurn = 5 // a chat user turn: value = conversation<<24 | turn
	kindReply    = 6 // a chat assistant reply: value = conversation<<24 | turn
)

const valueMask = 1<<56 - 1

func source(kind int, value uint64) int64 {
	return int64(uint64(kind)<<56 | value&valueMask)
}

func turnSource(kind, conversation, turn int) int64 {
	return source(kind, uint64(conversation)<<24|uint64(turn)&(1<<24-1))
}

// GroupSource returns the source of the shared tokens of prefix group g.
func GroupSource(g int) int64 { return source(kindGroup, uint64(g)) }

// SystemPromptSource returns the source of Chats' system prompt s.
func SystemPromptSource(s int) int64 { return source(kindSystem, uint64(s)) }

// mix is SplitMix64's finaliser (Steele, Lea & Flood, OOPSLA'14): a
// bijection on uint64 whose output bits all depend on every input bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// TokenID returns the id of token i (0-based) of source src, in [0, Vocab).
func TokenID(src int64, i int) int {
	h := mix(uint64(src) + mix(uint64(i)+0x9e3779b97f4a7c15))
	return int(h % Vocab)
}

// appendRun appends the first n ids of src to ids.
func appendRun(ids []int, src int64, n int) []int {
	for i := range n {
		ids = append(ids, TokenID(src, i))
	}
	return ids
}

// TokenIDs returns the request's prompt token ids, Prompt of them. With
// Segments, they are the segments' runs in order; otherwise the first
// PrefixLen come from the group (identical for every request of the group)
// and the rest are unique to the request (by ID). Deterministic; ids in
// [0, Vocab).
func (r Request) TokenIDs() []int {
	if r.Prompt <= 0 {
		return []int{}
	}
	ids := make([]int, 0, r.Prompt)
	if len(r.Segments) > 0 {
		for _, s := range r.Segments {
			n := min(max(s.Len, 0), r.Prompt-len(ids))
			ids = appendRun(ids, s.Source, n)
		}
	} else if r.PrefixGroup >= 0 && r.PrefixLen > 0 {
		ids = appendRun(ids, GroupSource(r.PrefixGroup), min(r.PrefixLen, r.Prompt))
	}
	return appendRun(ids, source(kindUnique, uint64(r.ID)), r.Prompt-len(ids))
}

// OutputTokenIDs returns the ids of the tokens the request will generate,
// Output of them, from OutputSource (or a source unique to the request when
// it is 0). A chat turn's prompt is the previous turn's TokenIDs followed by
// its OutputTokenIDs and the new user turn.
func (r Request) OutputTokenIDs() []int {
	if r.Output <= 0 {
		return []int{}
	}
	src := r.OutputSource
	if src == 0 {
		src = source(kindOutput, uint64(r.ID))
	}
	return appendRun(make([]int, 0, r.Output), src, r.Output)
}
