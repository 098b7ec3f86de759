// Command validation prints the cost models' validation tables as markdown:
// the step-time model of core/hardware, then the CUDA-graph dispatch model
// of core/cudagraph, then core/hardware's KV-cache capacity, then published
// end-to-end serving results beside the lessons' figures (endtoend.go), then
// the measured vLLM runs replayed whole beside BLIS (measured.go).
//
//	go run ./cmd/validation > docs/VALIDATION.md
package main

import (
	"fmt"
	"os"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
)

func main() {
	fmt.Print(hardware.ValidationMarkdown())
	fmt.Print(cudagraph.ValidationMarkdown())
	fmt.Print(hardware.KVValidationMarkdown())
	rs, err := runEndToEnd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(endToEndMarkdown(rs))
	mr, err := runMeasured()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(measuredMarkdown(mr))
}
