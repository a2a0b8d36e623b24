// Package examples carries the project's examples inside the binary: the
// memory eval suite (cards, settings and cases), so that `troupe eval` runs
// from any folder and in the container image.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed eval/suite.yaml eval/cards eval/en eval/zh
var evalFS embed.FS

// EvalSuite returns the memory eval suite: suite.yaml at its root, the
// cases under en/ and zh/, the cards under cards/.
func EvalSuite() fs.FS {
	sub, err := fs.Sub(evalFS, "eval")
	if err != nil {
		// fs.Sub fails only on an invalid path; "eval" is valid.
		panic(err)
	}
	return sub
}
