package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
	"troupe/models"
	"troupe/models/testenv"
)

// testEnv returns an environment lookup for a troupe process in a test.
func testEnv(vals map[string]string) env {
	return func(k string) (string, bool) {
		v, ok := vals[k]
		return v, ok
	}
}

// backends lists the storage and queue combinations the console must work on.
func backends(t *testing.T) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{
		"sqlite+embedded": {"TROUPE_DATABASE_DSN": "sqlite://" + filepath.Join(t.TempDir(), "troupe.db")},
	}
	if pg, ok := lookupServices(); ok {
		_ = pg
		out["postgres+redis"] = map[string]string{
			"TROUPE_DATABASE_DSN": testenv.FreshPostgresDB(t),
			"TROUPE_REDIS_URL":    testenv.FreshRedisURL(t),
		}
	}
	return out
}

func lookupServices() (string, bool) {
	return "", testenv.Available()
}

func TestChatConsoleEndToEnd(t *testing.T) {
	for name, vals := range backends(t) {
		t.Run(name, func(t *testing.T) {
			fake := openaitest.NewServer(t)
			vals["TROUPE_MODEL_BASE_URL"] = fake.URL()
			vals["TROUPE_CARDS_DIR"] = t.TempDir()
			vals["TROUPE_LOG_LEVEL"] = "warn"
			in := strings.NewReader("Hello there.\nWho are you?\nTell me about the light.\n/regen\n/new\nA second story.\n")
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := run(ctx, []string{"chat", "--card", "../../examples/cards/lantern-keeper.json", "--user", "Ada", "--drain-timeout", "5s"},
				in, &out, &errOut, testEnv(vals))
			if err != nil {
				t.Fatalf("run: %v\nstderr: %s", err, errOut.String())
			}
			got := out.String()
			t.Logf("console output:\n%s", got)
			if n := strings.Count(got, "openaitest model"); n != 5 {
				t.Errorf("got %d model replies in output, want 5 (3 turns, regen, second chat):\n%s", n, got)
			}
			st, err := models.Open(ctx, vals["TROUPE_DATABASE_DSN"], nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			chats, err := st.ChannelChats(ctx, "console:Ada/lantern-keeper")
			if err != nil || len(chats) != 2 {
				t.Fatalf("chats = %d (%v), want 2", len(chats), err)
			}
			first := chats[1]
			br, err := st.LoadBranch(ctx, first.HeadID)
			if err != nil {
				t.Fatal(err)
			}
			// greeting, 3 × (user, reply) on the branch; the regen replaced the last reply.
			if len(br.Uncovered) != 7 {
				t.Fatalf("branch has %d messages, want 7", len(br.Uncovered))
			}
			last := br.Uncovered[6]
			prev, err := st.Message(ctx, last.ParentID)
			if err != nil || prev.Content != "Tell me about the light." {
				t.Fatalf("last reply's parent = %q (%v)", prev.Content, err)
			}
			var siblings int64
			st.DB().Model(&models.Message{}).Where("parent_id = ?", prev.ID).Count(&siblings)
			if siblings != 2 {
				t.Errorf("reply siblings after /regen = %d, want 2", siblings)
			}
		})
	}
}
