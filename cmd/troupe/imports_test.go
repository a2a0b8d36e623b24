package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// importRule forbids packages matching from to import packages matching to.
type importRule struct {
	from, to []string
	why      string
}

// importRules keep the package graph pointing one way: platforms at the
// bottom talk to bot only; bot and memory know nothing of who calls them;
// the model client and the ops server are wired in by the command alone.
var importRules = []importRule{
	{from: []string{"troupe/adapters/..."}, to: []string{"troupe/models...", "troupe/memory...", "troupe/jobs...", "troupe/llm", "troupe/ops"},
		why: "adapters reach troupe through bot.Engine"},
	{from: []string{"troupe/bot..."}, to: []string{"troupe/adapters/...", "troupe/llm", "troupe/ops", "troupe/jobs..."},
		why: "bot declares what it needs; the command wires it"},
	{from: []string{"troupe/memory..."}, to: []string{"troupe/bot...", "troupe/jobs...", "troupe/adapters/..."},
		why: "memory is below the pipeline"},
	{from: []string{"troupe/models..."}, to: []string{"troupe/memory...", "troupe/prompt...", "troupe/bot...", "troupe/jobs...", "troupe/cards..."},
		why: "the store is below memory: it uses only the pure engines"},
	{from: []string{"troupe/recall...", "troupe/belief...", "troupe/record...", "troupe/handbook...", "troupe/text..."},
		to:  []string{"troupe/models...", "troupe/memory...", "troupe/bot...", "troupe/jobs...", "troupe/cards...", "troupe/config...", "troupe/recall", "troupe/belief", "troupe/record", "troupe/handbook"},
		why: "the engines are pure: they import nothing of troupe's but text"},
	{from: []string{"troupe/prompt..."}, to: []string{"troupe/memory...", "troupe/models...", "troupe/bot...", "troupe/jobs...", "troupe/adapters/..."},
		why: "a turn's prompt is built from what it is handed"},
	{from: []string{"troupe/cards"}, to: []string{"troupe/models...", "troupe/memory...", "troupe/bot..."},
		why: "cards reads files; it needs only text"},
	{from: []string{"troupe/keyed"}, to: []string{"troupe/..."},
		why: "keyed runs work in order per key: the standard library is all it needs"},
	{from: []string{"troupe/web..."}, to: []string{"troupe/bot...", "troupe/jobs...", "troupe/adapters/..."},
		why: "the inspector reads the store and memory; the command wires it to the queue"},
	{from: []string{"troupe/..."}, to: []string{"troupe/llm", "troupe/ops"},
		why: "only the command wires the model client and the ops server"},
}

// matches reports whether pkg matches pattern: "x/..." is x's subpackages,
// "x..." is x and its subpackages, anything else is exact.
func matches(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return strings.HasPrefix(pkg, p+"/")
	}
	if p, ok := strings.CutSuffix(pattern, "..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

func matchesAny(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if matches(p, pkg) {
			return true
		}
	}
	return false
}

// moduleImports lists each package of the module with the module packages
// its non-test files import.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list imports: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "troupe/...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, imp := range f[1:] {
			if matches("troupe...", imp) {
				graph[f[0]] = append(graph[f[0]], imp)
			}
		}
		if _, ok := graph[f[0]]; !ok {
			graph[f[0]] = nil
		}
	}
	return graph
}

// violations returns "from -> to (why)" for every import a rule forbids;
// the command's own packages are exempt from the last rule.
func violations(graph map[string][]string) []string {
	var out []string
	for from, imps := range graph {
		for _, r := range importRules {
			if !matchesAny(r.from, from) || matches("troupe/cmd/...", from) {
				continue
			}
			for _, to := range imps {
				if matchesAny(r.to, to) && !matches(to+"/...", from) && to != from {
					out = append(out, from+" -> "+to+" ("+r.why+")")
				}
			}
		}
	}
	return out
}

// TestImportGraphHasNoArrowBackUp fails when a package imports one above it.
func TestImportGraphHasNoArrowBackUp(t *testing.T) {
	graph := moduleImports(t)
	for _, pkg := range []string{"troupe/bot", "troupe/adapters/discord", "troupe/adapters/telegram", "troupe/memory", "troupe/cmd/troupe"} {
		if _, ok := graph[pkg]; !ok {
			t.Fatalf("go list did not report %s; got %d packages", pkg, len(graph))
		}
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
	// Positive control: the rules catch the arrows they are for.
	bad := map[string][]string{
		"troupe/adapters/telegram": {"troupe/models"},
		"troupe/bot":               {"troupe/adapters/discord"},
		"troupe/recall":            {"troupe/jobs"},
		"troupe/jobs":              {"troupe/llm"},
		"troupe/cmd/troupe":        {"troupe/llm", "troupe/ops"},
		"troupe/web":               {"troupe/jobs"},
	}
	if got := violations(bad); len(got) != 5 {
		t.Errorf("the rules caught %d of 5 forbidden imports: %v", len(got), got)
	}
}
