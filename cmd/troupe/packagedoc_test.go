package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasADocComment walks the module and fails for a package
// whose non-test files carry no package doc comment, or one that does not
// start with "Package <name>" (or "Command" for a main package).
func TestEveryPackageHasADocComment(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from cmd/troupe: %v", err)
	}
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("found %d package directories, want the whole module", len(dirs))
	}
	for dir := range dirs {
		if missing := packageDocProblem(t, dir); missing != "" {
			t.Errorf("%s: %s", dir, missing)
		}
	}
}

// packageDocProblem says what is wrong with dir's package doc comment, or ""
// when it has a proper one.
func packageDocProblem(t *testing.T, dir string) string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := ""
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		pkg = f.Name.Name
		if f.Doc == nil {
			continue
		}
		text := f.Doc.Text()
		if strings.HasPrefix(text, "Package "+pkg+" ") || (pkg == "main" && strings.HasPrefix(text, "Command ")) {
			return ""
		}
		return "package doc comment does not start with \"Package " + pkg + "\""
	}
	return "package " + pkg + " has no doc comment"
}

// TestBinaryHasNoTestingPackage keeps test-only code out of the troupe
// binary: nothing it links may import package testing.
func TestBinaryHasNoTestingPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps printed %d packages, want the binary's whole import graph", len(deps))
	}
	for _, d := range deps {
		if d == "testing" {
			t.Errorf("the troupe binary links package testing; keep test helpers out of what cmd/troupe imports")
		}
	}
}
