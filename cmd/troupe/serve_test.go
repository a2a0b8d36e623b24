package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"troupe/models/testenv"

	"troupe/adapters/discord/discordtest"
	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/models"
)

// TestServeTelegram runs `troupe serve` with a Telegram token against the
// fake Bot API and the fake model: a DM is answered through the binary's own
// wiring, and a stop signal ends it cleanly.
func TestServeTelegram(t *testing.T) {
	fake := openaitest.NewServer(t)
	scribe := &memorytest.Scribe{}
	fake.SetResponder(scribe.Respond)
	tg := telegramtest.NewServer(t)
	cards := t.TempDir()
	data, err := os.ReadFile("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cards, "lantern-keeper.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	opsAddr := freeAddr(t)
	env := testEnv(map[string]string{
		"TROUPE_OPS_LISTEN":            opsAddr,
		"TROUPE_DATABASE_DSN":          "sqlite://" + filepath.Join(t.TempDir(), "t.db"),
		"TROUPE_MODEL_BASE_URL":        fake.URL(),
		"TROUPE_CARDS_DIR":             cards,
		"TROUPE_LOG_LEVEL":             "warn",
		"TROUPE_TELEGRAM_TOKEN":        tg.Token(),
		"TROUPE_TELEGRAM_API_ENDPOINT": tg.Endpoint(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out, errOut bytes.Buffer
	go func() { done <- run(ctx, []string{"serve"}, strings.NewReader(""), &out, &errOut, env) }()
	ada := telegramtest.User{ID: 42, FirstName: "Ada"}
	tg.SendText(ada, "Hello from Telegram.")
	deadline := time.Now().Add(20 * time.Second)
	for {
		answered := false
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Text, `You said "Hello from Telegram."`) {
				answered = true
			}
		}
		if answered {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no reply in the DM; messages: %+v\nstderr: %s", tg.Messages(42), errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(tg.Commands()) == 0 {
		t.Errorf("commands were not published at start")
	}
	// The operations endpoint reports health, readiness and the turn.
	for path, want := range map[string]string{
		"/healthz": "ok",
		"/readyz":  "database: ok",
		"/metrics": `troupe_turns_total{outcome="answered",platform="telegram"} 1`,
	} {
		body := httpGet(t, "http://"+opsAddr+path)
		if !strings.Contains(body, want) {
			t.Errorf("GET %s: %q not in\n%.2000s", path, want, body)
		}
	}
	metrics := httpGet(t, "http://"+opsAddr+"/metrics")
	for _, want := range []string{
		`troupe_turn_pipeline_seconds_count{platform="telegram"} 1`,
		`troupe_turn_queue_seconds_count{platform="telegram"} 1`,
		`troupe_turn_model_seconds_count{platform="telegram"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics: %q missing", want)
		}
	}
	var hout bytes.Buffer
	if err := run(context.Background(), []string{"health"}, nil, &hout, &errOut, env); err != nil || !strings.Contains(hout.String(), "ok") {
		t.Errorf("troupe health: %v %q", err, hout.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve ended with %v\n%s", err, errOut.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// freeAddr finds a loopback port a child process can bind a moment later.
// Port 0 would hand out one from the kernel's ephemeral range, where any
// outbound connection (to PostgreSQL, Redis, a fake) may take it between
// our close and the child's bind; so it picks below that range, where the
// kernel never assigns ports by itself, and checks the port is free now.
// It never hands out a port twice in one test binary: a test that starts
// several processes asks for all their ports before any binds, and the
// check alone would pass the same free port to two of them.
func freeAddr(t *testing.T) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 200 {
		port := 20000 + rand.IntN(12000)
		if handedOut.ports[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		addr := ln.Addr().String()
		ln.Close()
		handedOut.ports[port] = true
		return addr
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return ""
}

var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestServeDiscord runs `troupe serve` with a Discord token against the fake
// Discord: commands are registered, a bound channel's message is answered
// through a webhook under the card's name.
func TestServeDiscord(t *testing.T) {
	fake := openaitest.NewServer(t)
	fake.SetResponder((&memorytest.Scribe{}).Respond)
	d := discordtest.NewServer(t, discordtest.Options{Payloads: os.DirFS("../../adapters/discord/testdata")})
	guild := d.AddGuild("Lantern Hall")
	channel := d.AddChannel(guild, "roleplay")
	cards := t.TempDir()
	data, err := os.ReadFile("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cards, "lantern-keeper.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	// Bind the channel as /card set would.
	st, err := models.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	space := "discord:guild:" + guild
	if err := st.EnsureSpace(context.Background(), models.Space{ID: space, Platform: "discord", Kind: "guild", ExternalID: guild}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureChannel(context.Background(), models.Channel{ID: "discord:" + channel, Platform: "discord", ExternalID: channel, SpaceID: space, CardID: "lantern-keeper"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	env := testEnv(map[string]string{
		"TROUPE_DATABASE_DSN":         dsn,
		"TROUPE_MODEL_BASE_URL":       fake.URL(),
		"TROUPE_CARDS_DIR":            cards,
		"TROUPE_LOG_LEVEL":            "warn",
		"TROUPE_OPS_LISTEN":           "",
		"TROUPE_DISCORD_TOKEN":        d.Token(),
		"TROUPE_DISCORD_API_BASE_URL": d.URL(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out, errOut testenv.Buffer
	go func() { done <- run(ctx, []string{"serve"}, strings.NewReader(""), &out, &errOut, env) }()
	d.WaitConnected(20 * time.Second)
	ada := discordtest.User{ID: d.NewID(), Username: "ada", GlobalName: "Ada"}
	d.Post(discordtest.Post{ChannelID: channel, Author: ada, Content: "Hello from Discord."})
	deadline := time.Now().Add(20 * time.Second)
	for {
		var reply *discordtest.Message
		for _, m := range d.Messages(channel) {
			// Several people may play in a guild channel: the prompt names them.
			if strings.Contains(m.Content, `You said "Ada: Hello from Discord."`) {
				reply = &m
			}
		}
		if reply != nil {
			if reply.WebhookID == "" || reply.Username != "Maren" {
				t.Errorf("reply not spoken through a webhook as the card: %+v", *reply)
			}
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no reply in the channel; stderr: %s", errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(d.Commands("")) == 0 {
		t.Errorf("no slash commands registered at start")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve ended with %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
}
