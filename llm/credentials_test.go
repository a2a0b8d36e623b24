package llm_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"troupe/bot"
	"troupe/fakes/openaitest"
	"troupe/llm"
)

// The side clients strip their key as the chat client does: an embeddings
// and a rerank endpoint that refuse the key and quote it whole give a
// *bot.ModelError of kind auth and status 401, named for its client, whose
// text (and whose chain's provider fields) hold no key.
func TestSideClientsStripTheirKey(t *testing.T) {
	t.Parallel()
	const key = "sk-troupe-SECRET-side-key-123"
	fake := openaitest.NewServer(t)
	fake.RequireKey("sk-the-one-it-wants")
	calls := []struct {
		name, source string
		do           func() error
	}{
		{"embeddings", "embeddings", func() error {
			_, err := llm.NewEmbedder(llm.EmbedConfig{BaseURL: fake.URL(), APIKey: key, Model: "e"}).Embed(context.Background(), []string{"x"})
			return err
		}},
		{"rerank", "rerank", func() error {
			_, err := llm.NewReranker(llm.RerankConfig{BaseURL: fake.URL(), APIKey: key, Model: "r"}).Rerank(context.Background(), "q", []string{"a", "b"})
			return err
		}},
		{"scribe", "scribe", func() error {
			_, err := llm.Scribe{C: llm.New(llm.Config{BaseURL: fake.URL(), APIKey: key, Model: "m", MaxRetries: -1}, nil)}.Complete(context.Background(), []bot.PromptMessage{{Role: bot.RoleUser, Content: "hi"}})
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if err == nil {
				t.Fatal("a refused key gave no error")
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error %q holds the key", err)
			}
			me, ok := err.(*bot.ModelError)
			if !ok {
				t.Fatalf("got %T (%v), want a *bot.ModelError", err, err)
			}
			if me.Kind != "auth" || me.StatusCode != 401 || me.Source != c.source {
				t.Errorf("got kind %q status %d source %q, want auth 401 %s", me.Kind, me.StatusCode, me.Source, c.source)
			}
			if got, want := me.Detail(), c.source+", HTTP 401"; got != want {
				t.Errorf("detail %q, want %q", got, want)
			}
		})
	}
}

// Credential-shaped text is cut whatever the key: a bearer token, an
// Authorization header, a key in a URL's query or a URL's password; a key
// that could be a word ("ollama", which local servers take) is cut where it
// stands as a credential and nowhere else.
func TestCredentialShapedTextIsCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key, body, gone, kept string
	}{
		{"bearer", "", `upstream said: Authorization: Bearer abc.DEF-123 refused`, "abc.DEF-123", "refused"},
		{"query", "", `Get "https://gen.example/v1/embeddings?key=AIzaSECRET99&alt=json": refused`, "AIzaSECRET99", "alt=json"},
		{"userinfo", "", `dial https://bob:hunter22@proxy.example:8080 failed`, "hunter22", "bob:"},
		{"word key", "ollama", `model "ollama/llama3" not found; api_key=ollama`, "api_key=ollama", `"ollama/llama3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadGateway)
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			_, err := llm.NewReranker(llm.RerankConfig{BaseURL: srv.URL, APIKey: tt.key, Model: "r"}).Rerank(context.Background(), "q", []string{"a"})
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); strings.Contains(msg, tt.gone) || !strings.Contains(msg, tt.kept) {
				t.Errorf("got %q, want %q cut and %q kept", msg, tt.gone, tt.kept)
			}
		})
	}
}
