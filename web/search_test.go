package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"troupe/models/testenv"
	"troupe/web"
)

// Search finds a word planted in one chat's perception through the recall
// index and links it to that chat and its character; a word of another
// space is not found there; a handbook line with the word is found with
// its tag linked; the space picker lists the spaces.
func TestSearchSpaceMemory(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			const here, there = "console:local:here", "console:local:there"
			a := seedStory(t, st, here, "console:here", "Maren saw the zephyrwyrm over the pier "+xssScript, "Nothing else happened.")
			seedStory(t, st, here, "console:here2", "A quiet night at the inn.")
			other := seedStory(t, st, there, "console:there", "The quokkaberg drifted past.")
			hb := "- The zephyrwyrm nests in the bell tower [chat:" + a.Chat.ID + "]"
			if err := st.EditMemory(ctx, "maren", here, &hb, nil, "test"); err != nil {
				t.Fatal(err)
			}
			_, ts := inspector(t, b, web.Options{Store: st})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			resp, body := br.get("/search?space=" + url.QueryEscape(here) + "&q=" + url.QueryEscape("Zephyrwyrm?"))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("search: %d\n%s", resp.StatusCode, body)
			}
			for _, want := range []string{
				"Maren saw the zephyrwyrm over the pier &lt;script&gt;", `<a href="/chat/` + a.Chat.ID + `">`,
				`<a href="/character/` + url.PathEscape(here) + `/Maren">Maren</a>`, "Memories (1)",
				`The zephyrwyrm nests in the bell tower <a href="/chat/` + a.Chat.ID + `" class="tag">`,
				`<option value="` + here + `" selected>`, `<option value="` + there + `">`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the results lack %q", want)
				}
			}
			assertEscaped(t, "page", body)
			_, body = br.get("/search?space=" + url.QueryEscape(here) + "&q=quokkaberg")
			if strings.Contains(body, "quokkaberg drifted") || strings.Contains(body, other.Chat.ID) || !strings.Contains(body, "Nothing in the index holds those words.") {
				t.Errorf("a word of another space was found")
			}
			_, body = br.get("/search?space=" + url.QueryEscape(there) + "&q=quokkaberg")
			if !strings.Contains(body, "The quokkaberg drifted past.") || !strings.Contains(body, `href="/chat/`+other.Chat.ID+`"`) {
				t.Errorf("the word is not found in its own space")
			}
		})
	}
}
