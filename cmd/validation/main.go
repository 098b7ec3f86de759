// Command validation prints the step-time model's validation table as
// markdown:
//
//	go run ./cmd/validation > docs/VALIDATION.md
package main

import (
	"fmt"

	"github.com/inferlab/inferlab/core/hardware"
)

func main() {
	fmt.Print(hardware.ValidationMarkdown())
}
