package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
)

func TestBench(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			// Seven turns: the recorder's batch (recorder.batch, 6) comes
			// due in every conversation.
			args := []string{"bench", "--channels", "4", "--turns", "7", "--json", "-"}
			wantDB, wantRedis := "sqlite", "embedded"
			if dsn := vals["TROUPE_DATABASE_DSN"]; strings.HasPrefix(dsn, "postgres") {
				args = append(args, "--dsn", dsn, "--redis", vals["TROUPE_REDIS_URL"])
				wantDB, wantRedis = "postgres", "redis"
			}
			// The configured database is not bench's: without --dsn it
			// plays on a temporary file.
			// One pipeline slot for four conversations: some turns wait.
			env := testEnv(map[string]string{"TROUPE_LOG_LEVEL": "warn", "TROUPE_DATABASE_DSN": "postgres://nowhere.invalid/troupe", "TROUPE_LIMITS_CONCURRENT_TURNS": "1"})
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := run(ctx, args, strings.NewReader(""), &out, &errOut, env); err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
			}
			t.Logf("report:\n%s", errOut.String())
			var got benchResult
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("stdout is not the JSON results: %v\n%s", err, out.String())
			}
			if got.Turns != 28 || got.Replies != 28 || got.FailedTurns != 0 {
				t.Errorf("got turns %d, replies %d, failed %d; want 28, 28, 0", got.Turns, got.Replies, got.FailedTurns)
			}
			if got.MessagesStored < 56 {
				t.Errorf("got messages_stored %d, want at least 56", got.MessagesStored)
			}
			if got.ChatRequests != 28 {
				t.Errorf("got chat_requests %d, want 28", got.ChatRequests)
			}
			if got.TurnsPerSecond <= 0 {
				t.Errorf("got turns_per_second %v, want > 0", got.TurnsPerSecond)
			}
			if got.PipelineP50MS <= 0 || got.PipelineP50MS > got.PipelineP99MS || got.PipelineP99MS > got.PipelineMaxMS {
				t.Errorf("got pipeline p50 %v, p99 %v, max %v; want 0 < p50 <= p99 <= max", got.PipelineP50MS, got.PipelineP99MS, got.PipelineMaxMS)
			}
			if got.ConcurrentTurns != 1 || got.QueueP99MS <= 0 || got.QueueP50MS > got.QueueP99MS {
				t.Errorf("got %d slots, queue p50 %v p99 %v; want 1 slot and turns that waited for it", got.ConcurrentTurns, got.QueueP50MS, got.QueueP99MS)
			}
			if !strings.Contains(errOut.String(), "waiting for a turn slot") {
				t.Errorf("the table has no queue line:\n%s", errOut.String())
			}
			if got.PromptTokensFirst <= 0 || got.PromptTokensLast <= got.PromptTokensFirst {
				t.Errorf("got prompt tokens %v at the start, %v at the end; want a positive start and growth without compaction",
					got.PromptTokensFirst, got.PromptTokensLast)
			}
			// Every turn after a channel's first is compared with the one
			// before it; a growing chat with its per-turn blocks last keeps
			// most of its prompt.
			if got.PrefixReusePairs != 24 || got.PrefixReuseMedian < 0.5 || got.PrefixReuseMedian > 1 {
				t.Errorf("got prefix reuse %v over %d pairs; want 24 pairs and a median in [0.5, 1]", got.PrefixReuseMedian, got.PrefixReusePairs)
			}
			if !strings.Contains(errOut.String(), "prompt prefix reuse") {
				t.Errorf("the table has no prefix reuse line:\n%s", errOut.String())
			}
			// A turn reads and writes the store; the recorder's jobs do too,
			// and are counted apart.
			if got.StatementsPerTurn < 3 || got.RoundTripsPerTurn < got.StatementsPerTurn || got.JobStatementsPerTurn <= 0 {
				t.Errorf("got %.1f statements (%.1f round trips) per turn and %.1f in jobs; want at least 3, more round trips, and some in jobs",
					got.StatementsPerTurn, got.RoundTripsPerTurn, got.JobStatementsPerTurn)
			}
			if got.SideRequests["record"] == 0 || got.TurnsPerSecondDrained <= 0 || got.TurnsPerSecondDrained > got.TurnsPerSecond {
				t.Errorf("got side calls %v, %.1f turns/s with the drain; want recorder calls and a figure no higher than %.1f",
					got.SideRequests, got.TurnsPerSecondDrained, got.TurnsPerSecond)
			}
			for _, line := range []string{"side-model calls", "statements per turn"} {
				if !strings.Contains(errOut.String(), line) {
					t.Errorf("the table has no %q line:\n%s", line, errOut.String())
				}
			}
			if got.PeakRSSMiB <= 0 {
				t.Errorf("got peak_rss_mib %v, want > 0", got.PeakRSSMiB)
			}
			if got.Database != wantDB || got.Redis != wantRedis {
				t.Errorf("got backends %s + %s, want %s + %s", got.Database, got.Redis, wantDB, wantRedis)
			}
			if got.Card != "built-in" {
				t.Errorf("got card %q, want the built-in one (the example is not reachable from the package dir)", got.Card)
			}
			if !strings.Contains(errOut.String(), "turns per second") {
				t.Errorf("the table did not go to stderr:\n%s", errOut.String())
			}
		})
	}
}

func TestBenchUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"no channels", []string{"bench", "--channels", "0"}},
		{"negative latency", []string{"bench", "--latency", "-1s"}},
		{"missing card", []string{"bench", "--card", "no/such/card.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := run(t.Context(), tt.args, strings.NewReader(""), &out, &errOut, testEnv(nil))
			if got := exitCode(err, &errOut); got != 2 {
				t.Errorf("got exit code %d (%v), want 2", got, err)
			}
		})
	}
}

func TestBenchJSONFileAndKeepDB(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bench.json")
	var out, errOut bytes.Buffer
	args := []string{"bench", "--channels", "2", "--turns", "2", "--json", path, "--keep-db"}
	if err := run(t.Context(), args, strings.NewReader(""), &out, &errOut, testEnv(map[string]string{"TROUPE_LOG_LEVEL": "warn"})); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got benchResult
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("results file is not JSON: %v\n%s", err, data)
	}
	if got.Turns != 4 || got.MessagesStored < 8 {
		t.Errorf("got turns %d, messages_stored %d; want 4 and at least 8", got.Turns, got.MessagesStored)
	}
	if got.SQLitePath == "" {
		t.Fatal("got no sqlite_path with --keep-db")
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(got.SQLitePath)) })
	if _, err := os.Stat(got.SQLitePath); err != nil {
		t.Errorf("kept database: %v", err)
	}
	if !strings.Contains(out.String(), "database kept") || !strings.Contains(out.String(), got.SQLitePath) {
		t.Errorf("the table on stdout does not name the kept database:\n%s", out.String())
	}
}

// TestPrefixReuseFollowsEachChannel: prompts are compared with their own
// channel's previous one, however channels interleave, and only the bytes
// up to the first difference count.
func TestPrefixReuseFollowsEachChannel(t *testing.T) {
	t.Parallel()
	msgs := func(channel int, beat int, recall string) []openaitest.Message {
		return []openaitest.Message{{Role: "system", Content: "You are Maren."}, {Role: "assistant", Content: "Drink that."},
			{Role: "user", Content: fmt.Sprintf("%sBeat %d [%d]: hello", recall, beat, channel)}}
	}
	var p prefixReuse
	p.observe(msgs(0, 1, ""))
	p.observe(msgs(1, 1, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))
	p.observe([]openaitest.Message{{Role: "user", Content: "no channel here"}})
	// A side-model prompt quoting channel 0's line is not its next turn.
	p.observe([]openaitest.Message{{Role: "system", Content: "Reflect."}, {Role: "user", Content: "Ada said: Beat 1 [0]: hello"}})
	p.observe(msgs(0, 1, ""))
	p.observe(msgs(1, 2, "y"))
	// A card's post-history instructions come after the user message.
	p.observe(append(msgs(2, 1, ""), openaitest.Message{Role: "system", Content: "Stay in character."}))
	p.observe(append(msgs(2, 1, ""), openaitest.Message{Role: "system", Content: "Stay in character."}))
	got, pairs := p.median()
	if pairs != 3 {
		t.Fatalf("got %d pairs, want 3 (one per channel's second prompt)", pairs)
	}
	if got != 1 {
		t.Errorf("got median %v; want 1, the identical prompts of channels 0 and 2 over channel 1's changed one", got)
	}
	prev, next := "system\nYou are Maren.\nuser\nxx", "system\nYou are Maren.\nuser\ny"
	if share := commonPrefixShare(prev, next); share != float64(len(next)-1)/float64(len(next)) {
		t.Errorf("got share %v for a prompt differing in its last byte", share)
	}
}

// TestBenchProfilesTurnsAndDrain: --profile writes the turns' profiles and,
// apart, the memory jobs' drain's, each a pprof file (gzipped protobuf).
func TestBenchProfilesTurnsAndDrain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"bench", "--channels", "2", "--turns", "3", "--profile", dir}
	if err := run(t.Context(), args, strings.NewReader(""), &out, &errOut, testEnv(map[string]string{"TROUPE_LOG_LEVEL": "warn"})); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	for _, prefix := range []string{"", "drain-"} {
		for _, name := range []string{"cpu", "block", "mutex", "heap"} {
			path := filepath.Join(dir, prefix+name+".pprof")
			f, err := os.Open(path)
			if err != nil {
				t.Errorf("profile: %v", err)
				continue
			}
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Errorf("%s is not a pprof file: %v", path, err)
			} else if n, err := io.Copy(io.Discard, zr); err != nil || n == 0 {
				t.Errorf("%s: %d bytes unpacked, %v", path, n, err)
			}
			f.Close()
		}
	}
}

// TestBenchScribeLatency: --scribe-latency makes the memory jobs' calls
// wait, not the turns': the turns run far faster than a model that waited
// would let them, and the drain takes at least the one record call owed by
// the last turns.
func TestBenchScribeLatency(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	args := []string{"bench", "--channels", "2", "--turns", "12", "--scribe-latency", "2s", "--json", "-"}
	env := testEnv(map[string]string{"TROUPE_LOG_LEVEL": "warn", "TROUPE_REFLECTION_AUTO": "false"})
	if err := run(t.Context(), args, strings.NewReader(""), &out, &errOut, env); err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
	}
	var got benchResult
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not the JSON results: %v\n%s", err, out.String())
	}
	if got.ScribeLatencyMS != 2000 || got.SideRequests["record"] == 0 {
		t.Fatalf("scribe_latency_ms %v, side requests %v; want 2000 and a record call", got.ScribeLatencyMS, got.SideRequests)
	}
	if got.JobsDrainSeconds < 2 {
		t.Errorf("jobs drained in %.2f s; the last record call alone waits 2 s", got.JobsDrainSeconds)
	}
	// Had the chat model waited too, each conversation's twelve turns
	// would take 24 s; a loaded machine takes a few seconds without it.
	if got.WallSeconds >= 12 {
		t.Errorf("the turns took %.2f s: the chat model waited too", got.WallSeconds)
	}
	if !strings.Contains(errOut.String(), "memory jobs' calls 2s") {
		t.Errorf("the report does not name the scribe's latency:\n%s", errOut.String())
	}
}

// The drain counts until the last job ended, not until Drain saw the queue
// empty twice; nothing when the jobs were done before the turns were, and
// the whole wait when jobs were still owed at the timeout.
func TestDrainSecondsCountsTheJobsOwnTime(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	returned := start.Add(1200 * time.Millisecond)
	for _, c := range []struct {
		name      string
		lastEnded time.Time
		err       error
		want      float64
	}{
		{"jobs ran on after the turns", start.Add(900 * time.Millisecond), nil, 0.9},
		{"jobs were done before the turns", start.Add(-time.Second), nil, 0},
		{"no job ever ran", time.Time{}, nil, 0},
		{"jobs still owed at the timeout", start.Add(900 * time.Millisecond), errors.New("jobs still owed"), 1.2},
	} {
		if got := drainSeconds(start, returned, c.lastEnded, c.err); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: drainSeconds = %v, want %v", c.name, got, c.want)
		}
	}
}
