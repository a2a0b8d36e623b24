// Package wilddir finds the folder of real cards collected from public
// repositories (never copied into this repository). It imports nothing of
// troupe, so package cards' own tests can use it.
package wilddir

import (
	"os"
	"path/filepath"
	"testing"
)

// Required reports whether the folder must be there: in CI, which has it,
// or when TROUPE_CARDS_WILD names it.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("TROUPE_CARDS_WILD") != ""
}

// Find returns the folder: $TROUPE_CARDS_WILD, else shared/cards-wild in the
// nearest folder above the working directory that has one; "" and where it
// looked when there is none.
func Find() (dir, looked string, err error) {
	if d := os.Getenv("TROUPE_CARDS_WILD"); d != "" {
		if _, err := os.Stat(d); err != nil {
			return "", d, err
		}
		return d, d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "cards-wild")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p, p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", "shared/cards-wild above " + wd, nil
}

// Dir returns the folder. Without one the test is skipped, saying why —
// the project's own small cards cover every format — unless Required says
// it must be there: then the test fails.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, looked, err := Find()
	switch {
	case err != nil && os.Getenv("TROUPE_CARDS_WILD") != "":
		tb.Fatalf("TROUPE_CARDS_WILD: %v", err)
	case err != nil:
		tb.Fatal(err)
	case dir != "":
		return dir
	case Required():
		tb.Fatalf("no folder of collected real cards (looked for %s), and CI=true says it is there", looked)
	}
	tb.Skipf("no folder of collected real cards (looked for %s; set TROUPE_CARDS_WILD to one): the tests over them skip, the project's own cards cover every format", looked)
	return ""
}

// File reads the file name of the folder, as Dir finds it.
func File(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(tb), name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
