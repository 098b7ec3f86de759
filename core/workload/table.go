package workload

import (
	"bufio"
	_ "embed" // the length tables' compact files
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Length tables: the (prompt, output) token counts of a published
// benchmark's requests, without arrival times, drawn whole so that a
// request keeps its own pair (a long prompt with its own output, as the
// data set has them). A load generator draws rows and gives them Poisson
// arrivals at the rate it probes, as Sarathi-Serve's capacity search does
// (microsoft/sarathi-serve @ ceaa066, sarathi/benchmark/request_generator/
// trace_request_length_generator.py: rows shuffled by the seed, then taken
// in turn; here each request draws a row, with replacement).
//
//   - sharegpt-8k: the openchat_sharegpt4 conversations Sarathi-Serve's
//     chat experiments replay, tokenized with Llama-2's tokenizer and
//     filtered to prompt + output ≤ 8,192 (microsoft/sarathi-serve @
//     72339db, data/processed_traces/sharegpt_8k_filtered_stats_llama2_
//     tokenizer.csv; Apache-2.0; Agrawal et al., OSDI 2024, Table 2:
//     prompt median 1,730 and P90 5,696, output median 415 and P90 834).

// LengthTable is one published table of request lengths.
type LengthTable struct {
	ID, Title string
	// Source is the published file and the commit it was read at.
	Source               string
	Licence, Attribution string
	data                 *string
	once                 *sync.Once
	rows                 *[]LengthRow
	err                  *error
}

// LengthRow is one request's prompt and output tokens.
type LengthRow struct{ Prompt, Output int }

//go:embed presets/sharegpt-8k.txt
var sharegpt8kData string

var lengthTables = []LengthTable{
	{ID: "sharegpt-8k", Title: "ShareGPT (openchat_sharegpt4), prompt + output ≤ 8,192, Sarathi-Serve's chat lengths",
		Source:  "microsoft/sarathi-serve @ 72339db, data/processed_traces/sharegpt_8k_filtered_stats_llama2_tokenizer.csv",
		Licence: "Apache-2.0", Attribution: "Agrawal et al., \"Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve\", OSDI 2024",
		data: &sharegpt8kData, once: new(sync.Once), rows: new([]LengthRow), err: new(error)},
}

// LengthTableByID returns the length table with the given id.
func LengthTableByID(id string) (LengthTable, bool) {
	for _, t := range lengthTables {
		if t.ID == id {
			return t, true
		}
	}
	return LengthTable{}, false
}

// Rows returns the table's rows in the published order, parsed on first
// use. The slice is shared: callers must not change it.
func (t LengthTable) Rows() ([]LengthRow, error) {
	t.once.Do(func() { *t.rows, *t.err = parseLengthRows(*t.data) })
	return *t.rows, *t.err
}

// parseLengthRows reads "prompt output" lines; # starts a comment line.
func parseLengthRows(data string) ([]LengthRow, error) {
	var rows []LengthRow
	sc := bufio.NewScanner(strings.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, fmt.Errorf("workload: length table line %d: %d fields, want 2", line, len(f))
		}
		p, err1 := strconv.Atoi(f[0])
		o, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || p < 1 || o < 1 {
			return nil, fmt.Errorf("workload: length table line %d: %q is not two counts ≥ 1", line, text)
		}
		rows = append(rows, LengthRow{Prompt: p, Output: o})
	}
	return rows, nil
}

// PoissonRows returns n requests arriving as a Poisson process at rate
// (req/s), each with the lengths of a row drawn uniformly from rows, seeded
// by seed. The rows drawn do not depend on rate, so runs of one seed at
// different rates serve the same requests, only closer together.
func PoissonRows(n int, rate float64, rows []LengthRow, seed uint64) []Request {
	n = max(n, 0)
	r := newRand(seed, streamRows)
	next := arrivals(r, rate)
	reqs := make([]Request, n)
	for i := range reqs {
		at := next()
		row := rows[r.IntN(len(rows))]
		reqs[i] = Request{ID: i, Arrival: at, Prompt: row.Prompt, Output: row.Output, PrefixGroup: -1, Conversation: -1, Prev: -1}
	}
	return reqs
}
