package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
)

// TestChatSaysWhatItFinishes: when the input ends with memory work owed
// (the recap /new owes at once, against a scribe that never answers), troupe chat says
// what it is finishing and that Ctrl-C leaves it owed, says again while it
// waits, and says it left the work owed when its drain time is up.
func TestChatSaysWhatItFinishes(t *testing.T) {
	old := drainEvery
	drainEvery = time.Second
	t.Cleanup(func() { drainEvery = old })
	fake := openaitest.NewServer(t)
	gone := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			http.NotFound(w, r) // no window to learn: the default
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-gone:
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(gone) })
	vals := map[string]string{"TROUPE_MODEL_BASE_URL": fake.URL(), "TROUPE_SCRIBE_BASE_URL": hung.URL + "/v1", "TROUPE_SCRIBE_API_KEY": "fake",
		"TROUPE_SCRIBE_MAX_RETRIES": "0", "TROUPE_RECORDER_BATCH": "1", "TROUPE_CARDS_DIR": t.TempDir(), "TROUPE_LOG_LEVEL": "error"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	start := time.Now()
	// The line comes after the worker's first sweep has looked (and found
	// nothing owed): what the last turn owes is found at the end.
	in, typed := io.Pipe()
	go func() {
		time.Sleep(2 * time.Second)
		_, _ = io.WriteString(typed, "I knock at the door.\n/new\n")
		_ = typed.Close()
	}()
	err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "3s"},
		in, &out, &errOut, testEnv(vals))
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	got := errOut.String()
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), got)
	for _, want := range []string{"[troupe] finishing the memory work of this chat (", "recap", "Ctrl-C leaves it owed", "[troupe] still finishing ", "not finished after 3s: left owed"} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if took := time.Since(start); took > 40*time.Second {
		t.Errorf("chat took %s with a 3s drain", took)
	}
}
