package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"troupe/models/testenv"

	"troupe/adapters/discord/discordtest"
	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/openaitest"
)

// TestSecretsNeverLogged runs troupe at debug level through the paths that
// handle secrets — a model API key the model server echoes back in an
// error, Discord and Telegram tokens (one of them refused), a database
// password in a DSN that cannot connect — and greps everything it printed.
func TestSecretsNeverLogged(t *testing.T) {
	const modelKey = "sk-troupe-SECRET-model-key-123"
	const dbPassword = "SECRET-db-password-456"
	fake := openaitest.NewServer(t)
	// The model refuses the key and quotes it, as some servers do.
	fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		return openaitest.Answer{Status: 401, Text: "Incorrect API key provided: " + modelKey}
	})
	tg := telegramtest.NewServer(t)
	d := discordtest.NewServer(t, discordtest.Options{Payloads: os.DirFS("../../adapters/discord/testdata"), Token: "SECRET-discord-token-789"})
	cards := t.TempDir()
	data, _ := os.ReadFile("../../examples/cards/lantern-keeper.json")
	_ = os.WriteFile(filepath.Join(cards, "lantern-keeper.json"), data, 0o644)
	var out, errOut testenv.Buffer
	env := map[string]string{
		"TROUPE_DATABASE_DSN":          "sqlite://" + filepath.Join(t.TempDir(), "t.db"),
		"TROUPE_MODEL_BASE_URL":        fake.URL(),
		"OPENAI_API_KEY":               modelKey,
		"TROUPE_CARDS_DIR":             cards,
		"TROUPE_LOG_LEVEL":             "debug",
		"TROUPE_OPS_LISTEN":            "",
		"TROUPE_TELEGRAM_TOKEN":        tg.Token(),
		"TROUPE_TELEGRAM_API_ENDPOINT": tg.Endpoint(),
		"TROUPE_DISCORD_TOKEN":         d.Token(),
		"TROUPE_DISCORD_API_BASE_URL":  d.URL(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, strings.NewReader(""), &out, &errOut, testEnv(env)) }()
	tg.SendText(telegramtest.User{ID: 7, FirstName: "Ada"}, "Hello?")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(allText(tg.Messages(7)), "credentials") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			errOut.Write([]byte(err.Error()))
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
	// A Discord token the server refuses: serve stops with an error.
	env["TROUPE_DISCORD_TOKEN"] = "SECRET-wrong-discord-token"
	env["TROUPE_TELEGRAM_TOKEN"] = ""
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	if err := run(sctx, []string{"serve"}, nil, &out, &errOut, testEnv(env)); err == nil {
		t.Errorf("serve with a refused Discord token did not fail")
	} else {
		exitCode(err, &errOut)
	}
	scancel()
	// A database that cannot be reached, with a password in its DSN.
	env["TROUPE_DATABASE_DSN"] = "postgres://troupe:" + dbPassword + "@127.0.0.1:1/troupe?sslmode=disable&connect_timeout=2"
	if err := run(context.Background(), []string{"migrate"}, nil, &out, &errOut, testEnv(env)); err != nil {
		exitCode(err, &errOut)
	}
	// A bad value next to a secret in the environment.
	env["TROUPE_MODEL_API_KEY"] = modelKey
	env["TROUPE_MEMORY_KEEP"] = "x"
	exitCode(run(context.Background(), []string{"worker"}, nil, &out, &errOut, testEnv(env)), &errOut)

	all := out.String() + errOut.String() + allText(tg.Messages(7))
	if !strings.Contains(all, "level=WARN") || !strings.Contains(all, "level=INFO") {
		t.Fatalf("no log output captured; the test would prove nothing:\n%s", all)
	}
	for _, secret := range []string{modelKey, dbPassword, tg.Token(), "SECRET-wrong-discord-token", "SECRET-discord-token-789"} {
		if strings.Contains(all, secret) {
			i := strings.Index(all, secret)
			t.Errorf("a secret leaked: …%s…", all[max(0, i-120):min(len(all), i+len(secret)+20)])
		}
	}
	if !strings.Contains(allText(tg.Messages(7)), "credentials") {
		t.Errorf("the user was not told the model refused the credentials")
	}
}

func allText(msgs []telegramtest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text)
		b.WriteString("\n")
	}
	return b.String()
}
