package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"troupe/models"
	"troupe/models/testenv"
	"troupe/recall"
	"troupe/web"
)

// seedBig adds to a seeded story's space 10,000 perceptions of Maren, with
// their index terms, and 1,000 beliefs citing three of them each, written
// straight to the tables: the size the inspector's pages are held to.
func seedBig(b *testing.B, st *models.Store, s story) {
	b.Helper()
	const perceptions, beliefs = 10000, 1000
	ps := make([]models.Perception, perceptions)
	var terms []models.RecallTerm
	for i := range ps {
		text := fmt.Sprintf("Perception %d: the tide brought word %d of the harbor", i, i%97)
		ps[i] = models.Perception{ID: models.NewID(), ChatID: s.Chat.ID, SpaceID: s.Chat.SpaceID, Character: "Maren", EventID: models.NewID(), Mode: "saw",
			Text: text, Importance: 1 + i%10, Seq: int64(100 + i), Day: 3 + i/500, Minute: i % 1440}
		for _, t := range recall.Keywords(text) {
			terms = append(terms, models.RecallTerm{ItemID: ps[i].ID, Term: t, SpaceID: s.Chat.SpaceID, Character: "Maren", Seq: ps[i].Seq, Kind: models.RecallPerception, ChatID: s.Chat.ID})
		}
	}
	bs := make([]models.Belief, beliefs)
	var ev []models.BeliefEvidence
	for i := range bs {
		bs[i] = models.Belief{ID: models.NewID(), SpaceID: s.Chat.SpaceID, Character: "Maren", Text: fmt.Sprintf("Belief %d about the harbor", i), Confidence: 1 + i%3,
			FormedSeq: int64(100 + i*10), ChangedSeq: int64(100 + i*10)}
		for k := range 3 {
			p := ps[(i*10+k)%perceptions]
			stance := "supports"
			if k == 2 {
				stance = "contradicts"
			}
			ev = append(ev, models.BeliefEvidence{BeliefID: bs[i].ID, PerceptionID: p.ID, Stance: stance, Seq: p.Seq, ChatID: s.Chat.ID})
		}
	}
	db := st.DB()
	for _, rows := range []any{ps, terms, bs, ev} {
		if err := db.CreateInBatches(rows, 500).Error; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInspectorPages times the overview, a chat's page and a reply's,
// and the character, memory and search pages of a space with 10,000
// perceptions and 1,000 beliefs, and reports each page's p95 in ms.
func BenchmarkInspectorPages(b *testing.B) {
	for _, be := range testenv.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			st := testenv.OpenStore(b, be)
			const space = "console:local:big"
			s := seedStory(b, st, space, "console:big", "The harbor was quiet.")
			seedBig(b, st, s)
			srv, err := web.New(web.Options{Store: st, Memory: memoryService(st), Token: fullToken})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			b.Cleanup(ts.Close)
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar}
			if resp, err := c.PostForm(ts.URL+"/login", url.Values{"token": {fullToken}}); err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("login: %v %v", resp, err)
			}
			chat, err := st.Chat(context.Background(), s.Chat.ID)
			if err != nil {
				b.Fatal(err)
			}
			pages := map[string]string{
				"overview":  "/",
				"chat":      "/chat/" + chat.ID,
				"reply":     "/chat/" + chat.ID + "/reply/" + chat.HeadID,
				"character": "/character/" + url.PathEscape(space) + "/Maren",
				"beliefs":   "/character/" + url.PathEscape(space) + "/Maren?beliefs=950",
				"memory":    "/memory/maren/" + url.PathEscape(space),
				"search":    "/search?space=" + url.QueryEscape(space) + "&q=harbor+tide",
			}
			for name, path := range pages {
				b.Run(name, func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						start := time.Now()
						resp, err := c.Get(ts.URL + path)
						if err != nil {
							b.Fatal(err)
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						took = append(took, time.Since(start))
						if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "</main>") {
							b.Fatalf("%s: %d", path, resp.StatusCode)
						}
					}
					sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
					b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
				})
			}
		})
	}
}
