package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"troupe/eval"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
)

// snakeKey is the shape of every key troupe's --json outputs name.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// dataKeys are the objects whose keys are data, not names of fields:
// characters' names, categories and languages, ledger places.
var dataKeys = map[string]bool{"perceptions": true, "by_category": true, "by_language": true, "by_category_language": true,
	"tokens": true, "where": true, "inventory": true, "flags": true}

// badKeys walks a decoded JSON value and lists the keys that are not
// snake_case, with their paths.
func badKeys(v any, path string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		parent := path[strings.LastIndex(path, ".")+1:]
		for k, e := range x {
			if !dataKeys[parent] && !snakeKey.MatchString(k) {
				out[path+"."+k] = true
			}
			badKeys(e, path+"."+k, out)
		}
	case []any:
		for _, e := range x {
			badKeys(e, path+"[]", out)
		}
	}
}

// Issue 35, item 4: every --json output troupe has (memory show, one pair
// and all of them; memory why; card list; eval; bench) names its keys in
// snake_case, down to the stored rows it carries.
func TestJSONOutputsUseSnakeCaseKeys(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			fake.SetResponder((&memorytest.Faithful{}).Respond)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = "../../examples/cards"
			vals["TROUPE_LOG_LEVEL"] = "error"
			vals["TROUPE_RECORDER_BATCH"] = "1"
			vals["TROUPE_RECALL_DIAGNOSTICS"] = "true"
			vals["TROUPE_MEMORY_KEEP"] = "2"
			vals["TROUPE_MEMORY_PERIOD"] = "2"
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			troupe := func(stdin string, args ...string) string {
				t.Helper()
				var out, errOut bytes.Buffer
				if err := run(ctx, args, strings.NewReader(stdin), &out, &errOut, testEnv(vals)); err != nil {
					t.Fatalf("troupe %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
				}
				return out.String()
			}
			story := "I give Maren a brass key and she hides it in the lamp room.\n" + storyLines(8) + "/new\nHello again.\n"
			troupe(story, "chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "30s")
			one := troupe("", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada", "--json")
			var v struct {
				Chats []map[string]any `json:"chats"`
			}
			if err := json.Unmarshal([]byte(one), &v); err != nil || len(v.Chats) == 0 {
				t.Fatalf("memory show --json: %v\n%s", err, one)
			}
			// The first chat's: the one with a record. Read whatever the key
			// is called; the walk below says what it should be.
			last := v.Chats[0]
			chatID := fmt.Sprint(last["id"])
			if last["id"] == nil {
				chatID = fmt.Sprint(last["ID"])
			}
			outputs := map[string]string{
				"memory show --card --space": one,
				"memory show":                troupe("", "memory", "show", "--json"),
				"memory why":                 troupe("", "memory", "why", "--chat", chatID, "--json"),
				"card list":                  troupe("", "card", "list", "--json"),
				"eval":                       troupe("", "eval", "--fake", "faithful", "--only", eval.Abstention, "--lang", "en", "--json", "-"),
				"bench":                      troupe("", "bench", "--channels", "2", "--turns", "2", "--json", "-"),
			}
			for what, out := range outputs {
				bad := map[string]bool{}
				dec := json.NewDecoder(strings.NewReader(out))
				n := 0
				for dec.More() {
					var x any
					if err := dec.Decode(&x); err != nil {
						t.Fatalf("%s: not JSON: %v\n%.400s", what, err, out)
					}
					badKeys(x, "", bad)
					n++
				}
				if n == 0 {
					t.Errorf("%s printed no JSON", what)
				}
				if len(bad) > 0 {
					keys := make([]string, 0, len(bad))
					for k := range bad {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					t.Errorf("%s --json has keys that are not snake_case:\n  %s", what, strings.Join(keys, "\n  "))
				}
			}
		})
	}
}
