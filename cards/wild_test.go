package cards_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"troupe/cards"
	"troupe/cards/cardstest"
)

// TestWildCards loads every file collected from public repositories: each
// card loads with a greeting and what the collection notes say it has; the
// files that are not cards say so.
func TestWildCards(t *testing.T) {
	t.Parallel()
	want := map[string]cardWant{
		"cepunkt-elena_torres.json":                    {features: []string{"format:json", "spec:v3", "depth_prompt", "{{original}}"}},
		"cepunkt-marjorie_clattercup.v1.json":          {features: []string{"spec:v1", "system_prompt", "post_history"}},
		"cepunkt-world_narrator.v3.json":               {features: []string{"spec:v3", "{{original}}", "depth_prompt", "book:5"}},
		"choral-default-chan.png":                      {features: []string{"format:png", "spec:v3", "image"}},
		"ossirytk-shodan_v2.png":                       {features: []string{"format:png", "spec:v2", "image", "extensions"}},
		"ossirytk-skynet_v2.png":                       {features: []string{"format:png", "spec:v1", "image"}},
		"st-codingsensei.png":                          {features: []string{"format:png", "spec:v2", "image"}},
		"st-eldoria-worldinfo.json":                    {notCard: "world-info"},
		"st-fluxthecat.png":                            {features: []string{"format:png", "post_history", "image"}},
		"st-index.json":                                {notCard: "not a card"},
		"st-seraphina.png":                             {features: []string{"format:png", "book:4", "image"}},
		"stc-content_Assistant_CapoGPT.png":            {features: []string{"format:png", "spec:v2", "image"}},
		"stc-contest_Assistant_Amy.png":                {features: []string{"format:png", "spec:v3", "group_greetings:"}},
		"stc-contest_Assistant_Gloria.png":             {features: []string{"format:png", "alternate_greetings:"}},
		"stc-contest_Assistant_Sakana.png":             {features: []string{"format:png", "book:14"}},
		"tavernkit-ccv2_with_overrides.json":           {features: []string{"spec:v2", "{{original}}"}},
		"tavernkit-ccv3_st_export_like.json":           {features: []string{"spec:v3"}},
		"tavernkit-full_v2_card.json":                  {features: []string{"spec:v2", "book:", "alternate_greetings:2"}},
		"tavernkit-full_v3_card.json":                  {features: []string{"spec:v3", "nickname", "group_greetings:2", "book:1"}},
		"tavernkit-minimal_v3.json":                    {features: []string{"spec:v3", "nickname"}},
		"tavernkit-test_character.charx":               {features: []string{"format:charx", "spec:v3", "nickname", "image"}},
		"tavernkit-test_character.png":                 {features: []string{"format:png", "spec:v3", "image"}},
		"tavernkit-test_character_v2.png":              {features: []string{"format:png", "spec:v2", "image"}},
		"tavernkit-test_character_with_lorebook.charx": {features: []string{"format:charx", "book:", "image"}},
		"tavernkit-with_lorebook.json":                 {features: []string{"spec:v3", "book:"}},
	}
	checkCardFiles(t, cardstest.WildFiles(t), want)
}

// TestOwnCards loads the project's own small card of each format: each
// loads with a greeting and what it is made to exercise; the world file
// says it is no card. They need nothing outside the repository.
func TestOwnCards(t *testing.T) {
	t.Parallel()
	want := map[string]cardWant{}
	for name, f := range cardstest.OwnFeatures {
		if len(f) == 1 && strings.HasPrefix(f[0], "not a card: ") {
			want[name] = cardWant{notCard: strings.TrimPrefix(f[0], "not a card: ")}
			continue
		}
		want[name] = cardWant{features: f}
	}
	files := cardstest.OwnFiles(t)
	if len(files) != len(want) {
		t.Fatalf("%d own files, %d described", len(files), len(want))
	}
	checkCardFiles(t, files, want)
}

// cardWant is what a file of a test folder is: a card exercising features,
// or no card, for the reason notCard.
type cardWant struct {
	features []string
	notCard  string
}

func checkCardFiles(t *testing.T, files []string, want map[string]cardWant) {
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			w, known := want[name]
			if !known {
				t.Errorf("%s is new in the collection: add what it exercises to this table", name)
			}
			c, err := cards.LoadCard(path)
			if w.notCard != "" {
				if !errors.Is(err, cards.ErrNotCard) || !strings.Contains(err.Error(), w.notCard) {
					t.Fatalf("got %v, want ErrNotCard saying %q", err, w.notCard)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Greeting("Ada") == "" && len(c.AlternateGreetings) == 0 {
				t.Errorf("no greeting")
			}
			got := cardstest.Features(c)
			t.Logf("%s (%s): %s", name, c.Name, strings.Join(got, ", "))
			for _, f := range w.features {
				found := false
				for _, g := range got {
					found = found || g == f || strings.HasSuffix(f, ":") && strings.HasPrefix(g, f)
				}
				if !found {
					t.Errorf("feature %s missing; got %v", f, got)
				}
			}
		})
	}
}

// BenchmarkLoadWildCards loads every collected file once per iteration
// (about 6 MB: PNGs up to 1.4 MB, CHARX, JSON).
func BenchmarkLoadWildCards(b *testing.B) {
	files := cardstest.WildFiles(b)
	for b.Loop() {
		for _, p := range files {
			_, _ = cards.LoadCard(p)
		}
	}
}
