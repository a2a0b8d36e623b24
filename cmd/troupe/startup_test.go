package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/openaitest"
)

// runCode runs one troupe command line and returns its exit code and
// everything it printed.
func runCode(t *testing.T, vals map[string]string, stdin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	err := run(ctx, args, strings.NewReader(stdin), &out, &errOut, testEnv(vals))
	code := exitCode(err, &errOut)
	return code, out.String() + errOut.String()
}

// serve and chat stop at once, with a message saying why and a non-zero
// exit code, when the model refuses the key or does not serve the model
// named; no turn is tried.
func TestServeAndChatStopOnRefusedModel(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	fake.RequireKey("sk-good")
	fake.SetModels("story-model")
	tg := telegramtest.NewServer(t)
	cards := t.TempDir()
	data, err := os.ReadFile("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cards, "lantern-keeper.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, key, model, want string
	}{
		{"key refused", "sk-wrong", "story-model", "the model API refused the key"},
		{"unknown model", "sk-good", "story-modle", `model.name "story-modle" is not a model`},
	} {
		vals := map[string]string{
			"TROUPE_DATABASE_DSN":          "sqlite://" + filepath.Join(t.TempDir(), "t.db"),
			"TROUPE_MODEL_BASE_URL":        fake.URL(),
			"TROUPE_MODEL_API_KEY":         tt.key,
			"TROUPE_MODEL_NAME":            tt.model,
			"TROUPE_CARDS_DIR":             cards,
			"TROUPE_OPS_LISTEN":            "",
			"TROUPE_TELEGRAM_TOKEN":        tg.Token(),
			"TROUPE_TELEGRAM_API_ENDPOINT": tg.Endpoint(),
		}
		for _, args := range [][]string{{"serve"}, {"chat", "--card", "../../examples/cards/lantern-keeper.json", "--no-worker"}} {
			done := make(chan struct{})
			var code int
			var out string
			go func() {
				defer close(done)
				code, out = runCode(t, vals, "Hello there.\n", args...)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s, %s: still running after 30 s", tt.name, args[0])
			}
			if code == 0 || !strings.Contains(out, tt.want) {
				t.Errorf("%s, %s: exit code %d, output:\n%s\nwant non-zero and %q", tt.name, args[0], code, out, tt.want)
			}
			if tt.name == "unknown model" && !strings.Contains(out, `"story-model"`) {
				t.Errorf("%s, %s: the close model is not suggested:\n%s", tt.name, args[0], out)
			}
			if strings.Contains(out, "sk-wrong") {
				t.Errorf("%s, %s: the key is printed:\n%s", tt.name, args[0], out)
			}
		}
	}
	for _, r := range fake.Requests() {
		if r.Path == "/v1/chat/completions" && len(r.Messages) > 1 {
			t.Errorf("a turn was sent to a model that refused: %+v", r.Messages)
		}
	}
}

// A config file with several mistakes is refused with all of them listed,
// exit code 2.
func TestConfigProblemsListedTogether(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "troupe.yaml")
	body := "model:\n  timeout: 120\nops:\n  listen: nonsense\nlog:\n  level: loud\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCode(t, nil, "", "--config", path, "serve")
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	for _, want := range []string{"3 problems", "model.timeout: 120 has no unit: write 120s", "ops.listen: \"nonsense\" is not HOST:PORT", "log.level:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// memory show with a space id that has no chat is an error suggesting the
// id with its case (ids keep case), not an empty memory.
func TestMemoryShowUnknownSpaceSuggests(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	vals := map[string]string{
		"TROUPE_DATABASE_DSN":   "sqlite://" + filepath.Join(t.TempDir(), "t.db"),
		"TROUPE_MODEL_BASE_URL": fake.URL(),
		"TROUPE_CARDS_DIR":      t.TempDir(),
		"TROUPE_LOG_LEVEL":      "error",
	}
	if code, out := runCode(t, vals, "Hello.\n", "chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--no-worker"); code != 0 {
		t.Fatalf("chat: exit code %d\n%s", code, out)
	}
	if code, out := runCode(t, vals, "", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:Ada"); code != 0 {
		t.Fatalf("memory show of the real space: exit code %d\n%s", code, out)
	}
	code, out := runCode(t, vals, "", "memory", "show", "--card", "lantern-keeper", "--space", "console:local:ada")
	if code == 0 || !strings.Contains(out, `did you mean "console:local:Ada"`) {
		t.Errorf("unknown space: exit code %d, output:\n%s\nwant non-zero and the suggestion", code, out)
	}
	code, out = runCode(t, vals, "", "memory", "show", "--card", "lantern-keepr", "--space", "console:local:Ada")
	if code == 0 || !strings.Contains(out, `did you mean "lantern-keeper"`) {
		t.Errorf("unknown card: exit code %d, output:\n%s\nwant non-zero and the suggestion", code, out)
	}
}

// card list on a folder that does not exist is an error naming the nearest
// folder, not an empty table.
func TestCardListMissingFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "cards"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := runCode(t, nil, "", "card", "list", "--dir", filepath.Join(root, "card"))
	if code == 0 || !strings.Contains(out, "no folder "+filepath.Join(root, "card")) || !strings.Contains(out, "did you mean "+filepath.Join(root, "cards")) {
		t.Errorf("exit code %d, output:\n%s\nwant non-zero, the folder and the nearest one", code, out)
	}
	if code, out := runCode(t, nil, "", "card", "list", "--dir", filepath.Join(root, "cards")); code != 0 {
		t.Errorf("an empty folder: exit code %d\n%s", code, out)
	}
}

// A SQLite file in a folder that does not exist names the folder.
func TestSQLiteMissingFolderNamed(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	code, out := runCode(t, map[string]string{"TROUPE_DATABASE_DSN": "sqlite://" + filepath.Join(dir, "troupe.db")}, "", "migrate")
	if code == 0 || !strings.Contains(out, "folder "+dir) || strings.Contains(out, "out of memory") {
		t.Errorf("exit code %d, output:\n%s\nwant non-zero and the folder named", code, out)
	}
}
