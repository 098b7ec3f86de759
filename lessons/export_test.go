package lessons

// Names the external tests (package lessons_test, which sees every
// registered lesson through lessons/all) read without making them API.
var (
	GroupIndex    = groupIndex
	NormalizeTerm = normalizeTerm
)

// TraceMaxSteps is the browser's bound on a trace's engine steps.
const TraceMaxSteps = traceMaxSteps

// TermFind is the phrase a glossary term's link looks for.
func TermFind(t Term) string { return t.find() }
