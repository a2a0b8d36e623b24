package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/adapters/discord/discordtest"
	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/openaitest"
	"troupe/models/testenv"
)

// doctorRows runs troupe doctor and returns each row's status and detail
// by check, with the exit code.
func doctorRows(t *testing.T, vals map[string]string) (map[string][2]string, int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	err := run(ctx, []string{"doctor"}, strings.NewReader(""), &out, &errOut, testEnv(vals))
	code := exitCode(err, &errOut)
	rows := map[string][2]string{}
	for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 2 {
			continue
		}
		rows[f[0]] = [2]string{f[1], strings.Join(f[2:], " ")}
	}
	return rows, code, out.String() + errOut.String()
}

// TestDoctor runs troupe doctor against the fake model, Discord and
// Telegram and the real PostgreSQL and Redis: every row is ok and the exit
// code 0; then each failure turns its own row failed and the exit code
// non-zero, the others staying ok.
func TestDoctor(t *testing.T) {
	testenv.Require(t)
	fake := openaitest.NewServer(t)
	fake.RequireKey("sk-good")
	fake.SetModels("story-model", "story-model-mini", "embed-model", "rerank-model", "whisper-1")
	d := discordtest.NewServer(t, discordtest.Options{Payloads: os.DirFS("../../adapters/discord/testdata")})
	tg := telegramtest.NewServer(t)
	base := map[string]string{
		"TROUPE_DATABASE_DSN":                 testenv.FreshPostgresDB(t),
		"TROUPE_REDIS_URL":                    testenv.FreshRedisURL(t),
		"TROUPE_MODEL_BASE_URL":               fake.URL(),
		"TROUPE_MODEL_API_KEY":                "sk-good",
		"TROUPE_MODEL_NAME":                   "story-model",
		"TROUPE_SCRIBE_NAME":                  "story-model-mini",
		"TROUPE_RECALL_EMBEDDINGS_BASE_URL":   fake.URL(),
		"TROUPE_RECALL_EMBEDDINGS_API_KEY":    "sk-good",
		"TROUPE_RECALL_EMBEDDINGS_MODEL":      "embed-model",
		"TROUPE_RECALL_RERANK_BASE_URL":       fake.URL(),
		"TROUPE_RECALL_RERANK_API_KEY":        "sk-good",
		"TROUPE_STT_BASE_URL":                 fake.URL(),
		"TROUPE_STT_API_KEY":                  "sk-good",
		"TROUPE_RECALL_RERANK_MODEL":          "rerank-model",
		"TROUPE_DISCORD_TOKEN":                d.Token(),
		"TROUPE_DISCORD_API_BASE_URL":         d.URL(),
		"TROUPE_TELEGRAM_TOKEN":               tg.Token(),
		"TROUPE_TELEGRAM_API_ENDPOINT":        tg.Endpoint(),
		"TROUPE_CARDS_DIR":                    t.TempDir(),
		"TROUPE_LOG_LEVEL":                    "error",
		"TROUPE_OPS_LISTEN":                   "",
		"TROUPE_MEMORY_IDLE_RECAP":            "30m",
		"TROUPE_RECALL_EMBEDDINGS_DIMENSIONS": "64",
	}
	checks := []string{"config", "database", "redis", "model", "scribe", "embeddings", "rerank", "stt", "discord", "telegram"}
	rows, code, out := doctorRows(t, base)
	for _, c := range checks {
		if rows[c][0] != "ok" {
			t.Errorf("green: %s is %q, want ok\n%s", c, rows[c], out)
		}
	}
	if code != 0 {
		t.Errorf("green: exit code %d, want 0\n%s", code, out)
	}
	if strings.Contains(out, "sk-good") {
		t.Errorf("the key is printed:\n%s", out)
	}
	for _, tt := range []struct {
		name   string
		change map[string]string
		row    string
		want   string
	}{
		{"model key refused", map[string]string{"TROUPE_MODEL_API_KEY": "sk-wrong", "TROUPE_SCRIBE_API_KEY": "sk-good"}, "model", "the model API refused the key"},
		{"unknown model", map[string]string{"TROUPE_MODEL_NAME": "story-modle"}, "model", `"story-model"`},
		{"stt key refused", map[string]string{"TROUPE_STT_API_KEY": "sk-wrong"}, "stt", "the speech-to-text API refused the key"},
		{"unknown stt model", map[string]string{"TROUPE_STT_MODEL": "whisper-2"}, "stt", `stt.model "whisper-2"`},
		{"Discord token refused", map[string]string{"TROUPE_DISCORD_TOKEN": "not-the-token"}, "discord", "Discord refused the bot token"},
		{"Telegram token refused", map[string]string{"TROUPE_TELEGRAM_TOKEN": "42:not-the-token"}, "telegram", "Telegram refused the bot token"},
		{"database unreachable", map[string]string{"TROUPE_DATABASE_DSN": "postgres://troupe@127.0.0.1:1/troupe?connect_timeout=3"}, "database", ""},
		{"Redis unreachable", map[string]string{"TROUPE_REDIS_URL": "redis://127.0.0.1:1/0"}, "redis", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vals := map[string]string{}
			for k, v := range base {
				vals[k] = v
			}
			for k, v := range tt.change {
				vals[k] = v
			}
			rows, code, out := doctorRows(t, vals)
			if code == 0 {
				t.Errorf("exit code 0, want non-zero\n%s", out)
			}
			for _, c := range checks {
				want := "ok"
				if c == tt.row {
					want = "failed"
				}
				if rows[c][0] != want {
					t.Errorf("%s is %q, want %s\n%s", c, rows[c], want, out)
				}
			}
			if !strings.Contains(rows[tt.row][1], tt.want) {
				t.Errorf("%s's detail %q lacks %q", tt.row, rows[tt.row][1], tt.want)
			}
			for _, k := range []string{"sk-wrong", "not-the-token"} {
				if strings.Contains(out, k) {
					t.Errorf("%q is printed:\n%s", k, out)
				}
			}
		})
	}
}

// A part that is not configured is skipped, not failed.
func TestDoctorSkipsWhatIsNotConfigured(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer(t)
	rows, code, out := doctorRows(t, map[string]string{
		"TROUPE_DATABASE_DSN":   "sqlite://" + filepath.Join(t.TempDir(), "t.db"),
		"TROUPE_MODEL_BASE_URL": fake.URL(),
		"TROUPE_CARDS_DIR":      t.TempDir(),
	})
	for c, want := range map[string]string{"config": "ok", "database": "ok", "redis": "ok", "model": "ok", "scribe": "skipped",
		"embeddings": "skipped", "rerank": "skipped", "stt": "skipped", "discord": "skipped", "telegram": "skipped"} {
		if rows[c][0] != want {
			t.Errorf("%s is %q, want %s\n%s", c, rows[c], want, out)
		}
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0\n%s", code, out)
	}
	// A configuration that does not load fails its row; the rest cannot run.
	rows, code, out = doctorRows(t, map[string]string{"TROUPE_OPS_LISTEN": "nonsense", "TROUPE_MODEL_TIMEOUT": "120"})
	if rows["config"][0] != "failed" || !strings.Contains(rows["config"][1], "ops.listen") || !strings.Contains(rows["config"][1], "write 120s") ||
		rows["model"][0] != "skipped" || code == 0 {
		t.Errorf("bad config: rows %v, exit code %d\n%s", rows, code, out)
	}
}
