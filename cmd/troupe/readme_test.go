package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"troupe/bot"
)

// readmeCode returns the README's inline code spans and the lines of its
// fenced code blocks, each as one string.
func readmeCode(t *testing.T) (readme string, code []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme = string(b)
	span := regexp.MustCompile("`([^`\n]+)`")
	fenced := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			code = append(code, line)
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			code = append(code, m[1])
		}
	}
	return readme, code
}

// invocation finds a troupe command line in s: the words after "troupe"
// (or "go run ./cmd/troupe"), split on table-escaped alternatives.
var invocation = regexp.MustCompile(`(?:^|[\s;|&(])(?:go run \./cmd/troupe|\./troupe|troupe)\s+([a-z-].*)$`)

// TestReadmeNamesRealCommandsAndFlags checks every troupe command and flag
// the README shows exists in the binary's command tree, every command the
// binary has is in the README, and the in-chat table lists exactly the
// commands the chat adapters offer.
func TestReadmeNamesRealCommandsAndFlags(t *testing.T) {
	readme, code := readmeCode(t)
	root := (&cli{stdin: strings.NewReader(""), stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv}).root()
	seen := map[*cobra.Command]bool{}
	checked := 0
	for _, c := range code {
		m := invocation.FindStringSubmatch(c)
		if m == nil {
			continue
		}
		words := strings.Fields(strings.NewReplacer(`\|`, "|", "[", " ", "]", " ", "...", " ").Replace(m[1]))
		// "docker compose exec troupe troupe doctor": the service, then the binary.
		for len(words) > 0 && words[0] == "troupe" {
			words = words[1:]
		}
		for _, alt := range alternatives(words) {
			checked++
			cmd := root
			flagsStarted := false
			for _, w := range alt {
				if strings.HasPrefix(w, "-") {
					flagsStarted = true
					name := strings.TrimLeft(w, "-")
					name, _, _ = strings.Cut(name, "=")
					name = strings.TrimRight(name, ".,:;)")
					if name == "" || strings.HasPrefix(w, "---") {
						continue
					}
					if strings.HasPrefix(w, "--") {
						if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil && cmd.PersistentFlags().Lookup(name) == nil {
							t.Errorf("README: %q: `%s` has no flag --%s", c, cmd.CommandPath(), name)
						}
					} else if cmd.Flags().ShorthandLookup(name[:1]) == nil && cmd.InheritedFlags().ShorthandLookup(name[:1]) == nil {
						t.Errorf("README: %q: `%s` has no flag -%s", c, cmd.CommandPath(), name)
					}
					continue
				}
				if flagsStarted || !cmd.HasSubCommands() {
					continue
				}
				next := child(cmd, w)
				if next == nil {
					if regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) {
						t.Errorf("README: %q: `%s` has no subcommand %q", c, cmd.CommandPath(), w)
					}
					flagsStarted = true
					continue
				}
				cmd = next
				seen[cmd] = true
			}
		}
	}
	if checked < 20 {
		t.Fatalf("found %d troupe command lines in the README, want the tables' and examples'", checked)
	}
	var missing []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if !seen[sub] {
				missing = append(missing, sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("README names no `%s`", m)
	}

	// The in-chat command table: its first column, every /name in it.
	slash := regexp.MustCompile("`/([a-z]+)")
	inTable := map[string]bool{}
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "| `/") {
			continue
		}
		first := strings.SplitN(line[1:], " | ", 2)[0]
		for _, m := range slash.FindAllStringSubmatch(first, -1) {
			inTable[m[1]] = true
		}
	}
	// Telegram opens every bot with /start; the pipeline answers it and the
	// README explains it, but no command menu lists it.
	offered := map[string]bool{"start": true}
	for _, c := range bot.Commands {
		offered[c.Name] = true
		if !inTable[c.Name] {
			t.Errorf("README's in-chat command table has no /%s", c.Name)
		}
	}
	for name := range inTable {
		if !offered[name] {
			t.Errorf("README's in-chat command table names /%s, which bot.Commands does not offer", name)
		}
	}
}

// alternatives expands "list|show|import" words into one command line per
// alternative (the first word with a | decides; the rest stay as written).
func alternatives(words []string) [][]string {
	for i, w := range words {
		if strings.HasPrefix(w, "-") || !strings.Contains(w, "|") {
			continue
		}
		var out [][]string
		for _, a := range strings.Split(w, "|") {
			if a == "" {
				continue
			}
			line := append(append(append([]string{}, words[:i]...), a), words[i+1:]...)
			out = append(out, line)
		}
		return out
	}
	return [][]string{words}
}

func child(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// TestReadmeNamesEveryDirectDependency checks the dependency table names
// every module go.mod requires directly.
func TestReadmeNamesEveryDirectDependency(t *testing.T) {
	readme, _ := readmeCode(t)
	_, table, ok := strings.Cut(readme, "## Dependencies and why")
	if !ok {
		t.Fatal(`README has no "## Dependencies and why" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	direct := 0
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.Contains(line, "// indirect") || !strings.Contains(f[0], ".") {
			continue
		}
		direct++
		if !strings.Contains(table, f[0]) {
			t.Errorf("README's dependency table does not name %s (a direct dependency in go.mod)", f[0])
		}
	}
	if direct < 10 {
		t.Fatalf("read %d direct dependencies from go.mod, want them all", direct)
	}
}
