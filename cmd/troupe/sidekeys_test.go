package main

import (
	"context"
	"log/slog"
	"testing"

	"troupe/bot"
	"troupe/config"
	"troupe/fakes/openaitest"
	"troupe/models/testenv"
)

// A side endpoint is sent the main model's key only on the main model's
// server: the scribe and embeddings on another server with no key of
// their own send no Authorization header (seen at that server), on the
// main server they send the main key (which it accepts), and a key of
// their own is sent wherever they are.
func TestSideEndpointsBorrowTheMainKeyOnlyOnItsServer(t *testing.T) {
	const mainKey = "sk-troupe-main-key-123"
	main, other := openaitest.NewServer(t), openaitest.NewServer(t)
	main.RequireKey(mainKey)
	st := testenv.OpenStore(t, testenv.Backends(t)[0])
	tests := []struct {
		name    string
		base    string
		own     config.Secret
		server  *openaitest.Server
		wantKey bool
	}{
		{"another server, no key", other.URL(), "", other, false},
		{"the main server", main.URL(), "", main, true},
		{"the main server by default", "", "", main, true},
		{"another server, its own key", other.URL(), "sk-own-key-456", other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Model.BaseURL, cfg.Model.APIKey, cfg.Model.Name = main.URL(), mainKey, "m"
			cfg.Model.MaxRetries = 0
			cfg.Scribe.BaseURL, cfg.Scribe.APIKey = tt.base, tt.own
			embedBase := tt.base
			if embedBase == "" {
				embedBase = main.URL()
			}
			cfg.Recall.Embeddings = config.Embeddings{BaseURL: embedBase, APIKey: tt.own, Model: "e", Dimensions: 8}
			log := slog.New(slog.DiscardHandler)

			before := len(tt.server.Requests())
			_, err := newScribe(cfg, log, 0, nil).Complete(context.Background(), []bot.PromptMessage{{Role: bot.RoleUser, Content: "hi"}})
			if tt.server == main && err != nil {
				t.Errorf("the main server refused the scribe: %v", err)
			}
			vectors, _ := recallParts(cfg, st, nil)
			_, err = vectors.Embedder.Embed(context.Background(), []string{"x"})
			if tt.server == main && err != nil {
				t.Errorf("the main server refused embeddings: %v", err)
			}
			reqs := tt.server.Requests()[before:]
			if len(reqs) != 2 {
				t.Fatalf("the server got %d requests, want the scribe's and the embedding's", len(reqs))
			}
			for _, r := range reqs {
				if r.HasAuthorization != tt.wantKey {
					t.Errorf("%s: Authorization sent %v, want %v", r.Path, r.HasAuthorization, tt.wantKey)
				}
			}
			if got := len(cfg.KeylessSideEndpoints()); got != map[bool]int{true: 0, false: 2}[tt.wantKey] {
				t.Errorf("%d keyless side endpoints to warn about (%v)", got, cfg.KeylessSideEndpoints())
			}
		})
	}
}
