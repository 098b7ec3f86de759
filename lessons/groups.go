package lessons

// Group is one part of the index's suggested path through the lessons. A
// lesson names its group (Lesson.Group) and its place in it (Lesson.Rank);
// the groups themselves, and their order, are the list below.
type Group struct {
	ID, Title, About string
}

// Groups follow the series: how much KV a GPU holds and how paging manages
// it, then how a scheduler batches, then what the GPU's clock costs, then
// several machines, then measuring the whole. All orders the lessons by
// their group's place here, then by rank.
var Groups = []Group{
	{ID: "memory", Title: "Memory: where the KV cache lives", About: "How many tokens of KV a GPU holds, and how paging, copy-on-write and a prefix cache make them go further."},
	{ID: "scheduling", Title: "Scheduling the batch", About: "Which requests run together in each engine step, and what a long prompt does to the others."},
	{ID: "gpu", Title: "The GPU's clock", About: "Kernel launches, the roofline, and guessing tokens ahead."},
	{ID: "cluster", Title: "Across machines", About: "Routing to the worker that holds the prefix, splitting prefill from decode, and KV tiers beyond the GPU."},
	{ID: "whole", Title: "Measuring the whole", About: "Throughput against latency under load, and a sandbox to try it all."},
}

// groupIndex is the place of the group id in Groups, or len(Groups) for a
// group that is not listed (its lessons come last).
func groupIndex(id string) int {
	for i, g := range Groups {
		if g.ID == id {
			return i
		}
	}
	return len(Groups)
}
