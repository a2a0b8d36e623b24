// Package eval is troupe's memory evaluation without the moving parts: the
// suite of scripted stories and questions (loaded from YAML, filler turns
// generated from a seed), the default scorer, the judge's rubric and the
// report. cmd/troupe's eval command plays the cases through the real
// pipeline.
package eval

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The categories of the suite.
const (
	SingleFact      = "single_fact"
	Update          = "update"
	Temporal        = "temporal"
	CrossChat       = "cross_chat"
	Perspective     = "perspective"
	Abstention      = "abstention"
	SaidByCharacter = "said_by_character"
	Forgetting      = "forgetting"
)

// Categories lists every category in report order.
var Categories = []string{SingleFact, Update, Temporal, CrossChat, Perspective, Abstention, SaidByCharacter, Forgetting}

// Languages the suite is written in.
var Languages = []string{"en", "zh"}

// MustNotTell reports whether a category scores only the absence of its
// forbidden answers (the character must not know or must not invent).
func MustNotTell(category string) bool {
	return category == Abstention || category == Perspective || category == Forgetting
}

// FeatureScenes is what perspective cases need: several cast members in
// one chat, marked away and back with /cast.
const FeatureScenes = "scenes"

// ErrSuite starts every problem with a suite's files.
var ErrSuite = errors.New("eval: suite")

// Suite is a loaded suite.
type Suite struct {
	// Dir is where it was loaded from.
	Dir string
	// Settings are config keys (as in troupe.yaml, "memory.keep") the suite
	// plays with, set like TROUPE_* overrides: short keep and period so
	// that planted facts are compacted before the questions.
	Settings map[string]string
	// Cards maps a language to the card file (relative to Dir) its cases
	// play.
	Cards map[string]string
	// Users maps a language to the player's name.
	Users map[string]string
	// Filler is the word stock filler turns are built from, per language.
	Filler map[string]FillerWords
	// F1 is the character-level F1 at which a reply counts as the gold
	// answer when it does not contain it; 0 means DefaultF1.
	F1 float64
	// Cases in file order.
	Cases []Case
}

// FillerWords are the parts a filler line is put together from: one of
// each, by the line's template.
type FillerWords struct {
	Templates []string `yaml:"templates"`
	Actions   []string `yaml:"actions"`
	Things    []string `yaml:"things"`
	Places    []string `yaml:"places"`
}

// Case is one story and the question asked at its end.
type Case struct {
	ID       string   `yaml:"id"`
	Category string   `yaml:"category"`
	Lang     string   `yaml:"-"`
	Needs    []string `yaml:"needs"`
	// Seed picks the filler lines; 0 derives one from the id.
	Seed  uint64 `yaml:"seed"`
	Story []Step `yaml:"story"`
	// Ask is the question, asked as the user in the last chat.
	Ask       string   `yaml:"ask"`
	Gold      []string `yaml:"gold"`
	Forbidden []string `yaml:"forbidden"`
	// Note says what the case checks, for people reading the suite.
	Note string `yaml:"note"`
}

// Step is one thing the player does: say a line, plant a fact (a line that
// must be compacted before the question when it is in the last chat), ask
// the character to say a line verbatim, play filler turns, leave the chat
// idle, or run a command (/new, /regen, /forget previous, /cast away NAME).
type Step struct {
	Say string `yaml:"say"`
	// Replies, with Say, script the character's answers to it: the first
	// reply, then each /regen's. The built-in fake says them; a real model
	// cannot be made to, and the case notes when the first was not said.
	// Nothing the player says quotes them, so a reply /regen discarded
	// can only come back through memory.
	Replies []string `yaml:"replies"`
	Fact    string   `yaml:"fact"`
	Makes   string   `yaml:"makes"`
	Filler  int      `yaml:"filler"`
	// Idle leaves the chat at rest until the memory work it owes is done,
	// its recap brought up to date included, as memory.idle_recap would.
	Idle    bool   `yaml:"idle"`
	Command string `yaml:"command"`
}

// UnmarshalYAML lets a plain string be a step: a command when it starts
// with "/", else a line said.
func (s *Step) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if strings.HasPrefix(n.Value, "/") {
			s.Command = n.Value
		} else {
			s.Say = n.Value
		}
		return nil
	}
	type plain Step
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*s = Step(p)
	return nil
}

// suiteFile is suite.yaml.
type suiteFile struct {
	Settings map[string]string      `yaml:"settings"`
	Cards    map[string]string      `yaml:"cards"`
	Users    map[string]string      `yaml:"users"`
	Filler   map[string]FillerWords `yaml:"filler"`
	F1       float64                `yaml:"f1"`
}

// DefaultF1 is the character-level F1 a reply needs when it does not
// contain a gold answer.
const DefaultF1 = 0.6

// Load reads dir/suite.yaml and the case files dir/<lang>/*.yaml. Every
// problem comes back at once, each with its file and case.
func Load(dir string) (*Suite, error) {
	data, err := os.ReadFile(filepath.Join(dir, "suite.yaml"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSuite, err)
	}
	var sf suiteFile
	if err := strictYAML(data, &sf); err != nil {
		return nil, fmt.Errorf("%w: suite.yaml: %w", ErrSuite, err)
	}
	s := &Suite{Dir: dir, Settings: sf.Settings, Cards: sf.Cards, Users: sf.Users, Filler: sf.Filler, F1: sf.F1}
	if s.F1 == 0 {
		s.F1 = DefaultF1
	}
	var errs []error
	for _, lang := range Languages {
		files, _ := filepath.Glob(filepath.Join(dir, lang, "*.yaml"))
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			var cases []Case
			if err := strictYAML(data, &cases); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f, err))
				continue
			}
			for _, c := range cases {
				c.Lang = lang
				s.Cases = append(s.Cases, c)
			}
		}
	}
	errs = append(errs, s.validate()...)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSuite, err)
	}
	return s, nil
}

func strictYAML(data []byte, v any) error {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	return dec.Decode(v)
}

func (s *Suite) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, lang := range Languages {
		if s.Cards[lang] == "" {
			bad("suite.yaml: no card for %s", lang)
		}
		if f := s.Filler[lang]; len(f.Templates) == 0 || len(f.Actions) == 0 || len(f.Things) == 0 || len(f.Places) == 0 {
			bad("suite.yaml: filler for %s needs templates, actions, things and places", lang)
		}
	}
	seen := map[string]bool{}
	scripted := map[string]string{}
	for _, c := range s.Cases {
		where := c.Lang + "/" + c.ID
		switch {
		case c.ID == "":
			bad("%s: a case without an id", c.Lang)
		case seen[c.ID]:
			bad("%s: the id is used twice", where)
		}
		seen[c.ID] = true
		if !slices.Contains(Categories, c.Category) {
			bad("%s: unknown category %q (want one of %s)", where, c.Category, strings.Join(Categories, ", "))
		}
		if strings.TrimSpace(c.Ask) == "" {
			bad("%s: no question (ask)", where)
		}
		if MustNotTell(c.Category) && len(c.Forbidden) == 0 {
			bad("%s: a %s case needs forbidden answers", where, c.Category)
		}
		if !MustNotTell(c.Category) && len(c.Gold) == 0 {
			bad("%s: a %s case needs gold answers", where, c.Category)
		}
		if len(c.Story) == 0 {
			bad("%s: no story", where)
		}
		for i, st := range c.Story {
			n := 0
			for _, set := range []bool{st.Say != "", st.Fact != "", st.Makes != "", st.Filler > 0, st.Idle, st.Command != ""} {
				if set {
					n++
				}
			}
			if n != 1 {
				bad("%s: story step %d must be exactly one of say, fact, makes, filler, idle, command", where, i+1)
			}
			if len(st.Replies) > 0 {
				// The fake that says scripted replies serves every case at
				// once and knows a line by its text alone.
				switch other, dup := scripted[st.Say]; {
				case st.Say == "":
					bad("%s: story step %d: replies go with say", where, i+1)
				case dup:
					bad("%s: story step %d: %s scripts replies to the same line", where, i+1, other)
				default:
					scripted[st.Say] = where
				}
			}
			if st.Command != "" && !strings.HasPrefix(st.Command, "/") {
				bad("%s: story step %d: a command starts with /", where, i+1)
			}
		}
	}
	return errs
}

// Select returns the cases of lang ("all" or "" for every language) and
// category ("" for all).
func (s *Suite) Select(lang, category string) []Case {
	var out []Case
	for _, c := range s.Cases {
		if (lang == "" || lang == "all" || c.Lang == lang) && (category == "" || c.Category == category) {
			out = append(out, c)
		}
	}
	return out
}

// Missing returns the features c needs that are not in have (what the
// pipeline offers). A case missing one is not played by default and is
// reported as waiting for it.
func (c Case) Missing(have []string) []string {
	var out []string
	for _, n := range c.Needs {
		if !slices.Contains(have, n) {
			out = append(out, n)
		}
	}
	return out
}

// Turn is one message the player sends.
type Turn struct {
	Text string
	// Command is set for a command line (/new, /forget previous, …).
	Command bool
	// Fact marks a planted fact.
	Fact bool
	// Line is the line the character is asked to say (Step.Makes) or is
	// scripted to say first (Step.Replies).
	Line string
	// Replies are the character's scripted replies to Text (Step.Replies).
	Replies []string
	// Idle: no message; the chat rests until its owed memory work is done.
	Idle bool
}

// Turns expands c's story into the messages the player sends, filler
// generated from the case's seed with the suite's word stock.
func (s *Suite) Turns(c Case) []Turn {
	words := s.Filler[c.Lang]
	seed := c.Seed
	if seed == 0 {
		h := fnv.New64a()
		h.Write([]byte(c.ID))
		seed = h.Sum64()
	}
	rng := splitmix{state: seed}
	var out []Turn
	for _, st := range c.Story {
		switch {
		case st.Filler > 0:
			for range st.Filler {
				out = append(out, Turn{Text: words.line(&rng)})
			}
		case st.Idle:
			out = append(out, Turn{Idle: true})
		case st.Command != "":
			out = append(out, Turn{Text: st.Command, Command: true})
		case st.Fact != "":
			out = append(out, Turn{Text: st.Fact, Fact: true})
		case st.Makes != "":
			out = append(out, Turn{Text: MakesPrompt(c.Lang, st.Makes), Line: st.Makes, Fact: true})
		case len(st.Replies) > 0:
			out = append(out, Turn{Text: st.Say, Replies: st.Replies, Line: st.Replies[0]})
		default:
			out = append(out, Turn{Text: st.Say})
		}
	}
	return out
}

// MakesPrompt is the out-of-character request that the character say line
// verbatim, in the form the fake model obeys.
func MakesPrompt(lang, line string) string {
	if lang == "zh" {
		return "（（场外：原样说出：“" + line + "”））"
	}
	return `((OOC: say exactly: "` + line + `"))`
}

// line fills one template: {action}, {thing} and {place} are replaced by
// words picked with rng.
func (w FillerWords) line(rng *splitmix) string {
	pick := func(list []string) string { return list[rng.next()%uint64(len(list))] }
	t := pick(w.Templates)
	t = strings.ReplaceAll(t, "{action}", pick(w.Actions))
	t = strings.ReplaceAll(t, "{thing}", pick(w.Things))
	return strings.ReplaceAll(t, "{place}", pick(w.Places))
}

// splitmix is SplitMix64: a tiny generator whose sequence is the same on
// every platform and Go version, so a seed always gives the same filler.
type splitmix struct{ state uint64 }

func (s *splitmix) next() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
