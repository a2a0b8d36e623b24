package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"troupe/config"
	"troupe/eval"
	"troupe/fakes/openaitest"
)

const evalSuite = "../../examples/eval"

// runEvalJSON runs troupe eval with args and returns its --json report(s).
func runEvalJSON(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "eval.json")
	var out, errOut bytes.Buffer
	vals := map[string]string{"TROUPE_LOG_LEVEL": "warn", "TROUPE_CARDS_DIR": t.TempDir()}
	args = append([]string{"eval", "--suite", evalSuite, "--json", path}, args...)
	if err := run(ctx, args, nil, &out, &errOut, testEnv(vals)); err != nil {
		t.Fatalf("eval %v: %v\n%s", args, err, errOut.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, out.String() + errOut.String()
}

func categoryScore(t *testing.T, rep map[string]any, cat string) (score float64, cases int) {
	t.Helper()
	g, ok := rep["by_category"].(map[string]any)[cat].(map[string]any)
	if !ok {
		t.Fatalf("no %s in the report", cat)
	}
	return g["score"].(float64), int(g["cases"].(float64))
}

// failures lists the cases of a category that did not score 1, with why.
func failures(rep map[string]any, cat string) string {
	var b strings.Builder
	for _, r := range rep["results"].([]any) {
		m := r.(map[string]any)
		if m["category"] == cat && m["waiting"] == nil && m["score"].(float64) < 1 {
			data, _ := json.Marshal(m)
			b.WriteString("\n  " + string(data))
		}
	}
	return b.String()
}

// recallKey is the setting that will turn per-character recall off.
const recallKey = "recall.enabled"

// recallBuilt reports whether troupe has recall (its setting exists).
func recallBuilt() bool { return slices.Contains(config.EnvKeys(), config.EnvName(recallKey)) }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(data))
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// With no model to answer, eval says so instead of scoring zeros.
func TestEvalFailsWhenNoCaseCanBePlayed(t *testing.T) {
	var out bytes.Buffer
	vals := map[string]string{"TROUPE_MODEL_BASE_URL": "http://127.0.0.1:1/v1", "TROUPE_MODEL_MAX_RETRIES": "0", "TROUPE_LOG_LEVEL": "error"}
	err := run(context.Background(), []string{"eval", "--suite", evalSuite, "--only", eval.SingleFact, "--lang", "en"}, nil, &out, &out, testEnv(vals))
	if err == nil || !strings.Contains(err.Error(), "no case could be played") {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "[4/4]") {
		t.Errorf("progress lines missing:\n%s", out.String())
	}
}

func TestEvalRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"eval", "--suite", evalSuite, "--lang", "fr"},
		{"eval", "--suite", evalSuite, "--only", "gossip"},
		{"eval", "--suite", evalSuite, "--compare", "memory.nonsense=1"},
		{"eval", "--suite", evalSuite, "--compare", "memory.keep"},
		{"eval", "--suite", evalSuite, "--fake", "perfect"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), args, nil, &out, &out, testEnv(map[string]string{}))
		if err == nil || !isUsage(err) && !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: err = %v", args, err)
		}
	}
}

// TestEvalCaseTimeLimit: with a scribe that never answers, every case's
// memory work stays owed; each case ends at --case-timeout as an error
// saying what it waited for, the table counts the errors, and eval exits
// non-zero, soon after the limit.
func TestEvalCaseTimeLimit(t *testing.T) {
	fake := openaitest.NewServer(t)
	gone := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hang up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-gone:
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(gone) })
	vals := map[string]string{"TROUPE_MODEL_BASE_URL": fake.URL(), "TROUPE_SCRIBE_BASE_URL": hung.URL + "/v1", "TROUPE_SCRIBE_API_KEY": "fake",
		"TROUPE_SCRIBE_MAX_RETRIES": "0", "TROUPE_LOG_LEVEL": "error", "TROUPE_CARDS_DIR": t.TempDir()}
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	err := run(ctx, []string{"eval", "--suite", evalSuite, "--only", eval.SingleFact, "--lang", "en", "--case-timeout", "10s"},
		nil, &out, &errOut, testEnv(vals))
	took := time.Since(start)
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	if err == nil {
		t.Fatal("eval exited 0 with every case over its time limit")
	}
	// The limit leaves telling the story (instant model) time on a loaded
	// machine: what it measures is the wait for memory work that never
	// comes.
	if took > 50*time.Second {
		t.Errorf("eval took %s; 4 cases of 10 s each, played 4 at once, should end well within 50 s", took)
	}
	if got := strings.Count(errOut.String(), "over the case time limit (10s) while finishing the memory work"); got != 4 {
		t.Errorf("%d progress lines name the time limit and the wait, want 4", got)
	}
	if !regexp.MustCompile(`single_fact\s+en\s+0\.00\s+4\s+4\s`).MatchString(errOut.String()) {
		t.Errorf("the table does not count 4 errors in 4 cases")
	}
}

// TestEvalRunsFromAnEmptyFolder: without --suite, eval plays the suite
// built into the binary, whatever the working directory holds.
func TestEvalRunsFromAnEmptyFolder(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vals := map[string]string{"TROUPE_LOG_LEVEL": "warn", "TROUPE_CARDS_DIR": t.TempDir()}
	err := run(ctx, []string{"eval", "--fake", "faithful", "--only", eval.Abstention, "--lang", "zh"}, nil, &out, &errOut, testEnv(vals))
	if err != nil {
		t.Fatalf("eval from an empty folder: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), eval.Abstention) || !strings.Contains(errOut.String(), "[1/") {
		t.Errorf("no table or no progress:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
}
