package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"troupe/belief"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/web"
)

// A character's page shows its perceptions (story time, importance,
// fading), beliefs with their evidence for and against, relationships and
// threads, the seeded markup as text; each delete asks again, then goes
// with the cascade /belief forget has (a belief) or forgetting the
// perception alone would have (a perception); a read-only session gets no
// delete button and a 403.
func TestCharacterPageAndDeletes(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := testenv.OpenStore(t, b)
			const space = "console:local:chars"
			lines := []string{"Tess hid the key " + xssScript, "The ferry leaves at dawn.", "Tess lied about the ferry."}
			s := seedStory(t, st, space, "console:chars", lines...)
			p := s.Perceptions
			ferry := belief.Belief{ID: models.NewID(), Text: "The ferry is the way out " + xssImg, Confidence: belief.Likely, FormedTurn: 2, ChangedTurn: 2,
				Evidence: []belief.Evidence{{Perception: p[1], Turn: 2, Stance: belief.Supports}, {Perception: p[2], Turn: 3, Stance: belief.Contradicts}}}
			liar := belief.Belief{ID: models.NewID(), Text: "Tess cannot be trusted.", Confidence: belief.Sure, FormedTurn: 3, ChangedTurn: 3,
				Evidence: []belief.Evidence{{Perception: p[0], Turn: 1, Stance: belief.Supports}, {Perception: p[2], Turn: 3, Stance: belief.Supports}}}
			reflect(t, st, s.Chat, ferry, liar)
			// A later reflection makes the liar belief less sure.
			liar.Confidence, liar.ChangedTurn = belief.Likely, 4
			if err := st.InstallReflection(ctx, models.ReflectionInstall{ChatID: s.Chat.ID, CardID: "maren", SpaceID: s.Chat.SpaceID, Character: "Maren",
				Changes: belief.Changes{Updated: []belief.Belief{liar}}}); err != nil {
				t.Fatal(err)
			}
			_, ts := inspector(t, b, web.Options{Store: st})
			br := newBrowser(t, ts.URL)
			br.login(fullToken)
			csrf := br.csrf()
			path := "/character/" + url.PathEscape(space) + "/Maren"
			resp, body := br.get(path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("character page: %d\n%s", resp.StatusCode, body)
			}
			for _, want := range []string{
				"Tess hid the key &lt;script&gt;alert(1)&lt;/script&gt;", "gist: gist of The ferry leaves at dawn.", "day 2, 10:01",
				"The ferry is the way out &lt;img src=x onerror=alert(1)&gt;", "Evidence: 1 for, 1 against", "Evidence: 2 for, 0 against",
				"Tess cannot be trusted.", `<span class="badge">likely</span>`, "): formed likely by a reflection.", // ferry
				"): formed sure by a reflection.", "): lowered to likely by a reflection.", // liar's history
				"distrusts &lt;script&gt;", "Who rang the bell &lt;script&gt;", `href="/chat/` + s.Chat.ID + `"`,
				"Perceptions <span class=\"muted\">(3, newest first)", "whole",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the character page lacks %q", want)
				}
			}
			assertEscaped(t, "page", body)
			if resp, _ := br.get("/character/" + url.PathEscape(space) + "/Nobody"); resp.StatusCode != http.StatusNotFound {
				t.Errorf("an unknown character: %d", resp.StatusCode)
			}

			// Read-only: no delete button, 403 on POST.
			ro := newBrowser(t, ts.URL)
			ro.login(roToken)
			if _, page := ro.get(path); strings.Contains(page, "/delete") {
				t.Errorf("a read-only session is offered a delete")
			}
			if resp, _ := ro.post(path+"/belief/"+ferry.ID+"/delete", url.Values{"csrf": {ro.csrf()}, "confirm": {"yes"}}); resp.StatusCode != http.StatusForbidden {
				t.Errorf("read-only delete: %d", resp.StatusCode)
			}

			beliefs := func() []string {
				vs, err := st.Beliefs(ctx, space, "Maren")
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, v := range vs {
					out = append(out, v.ID)
				}
				return out
			}
			// The belief: the first POST asks, the second deletes.
			del := path + "/belief/" + ferry.ID + "/delete"
			resp, body = br.post(del, url.Values{"csrf": {csrf}})
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `name="confirm" value="yes"`) || !strings.Contains(body, "The ferry is the way out &lt;img") {
				t.Errorf("the first delete does not ask: %d\n%s", resp.StatusCode, body)
			}
			if len(beliefs()) != 2 {
				t.Fatalf("the belief went without confirmation")
			}
			resp, _ = br.post(del, url.Values{"csrf": {csrf}, "confirm": {"yes"}})
			if resp.StatusCode != http.StatusSeeOther {
				t.Errorf("confirmed delete: %d", resp.StatusCode)
			}
			if got := beliefs(); len(got) != 1 || got[0] != liar.ID {
				t.Errorf("beliefs after the delete %v, want only %s", got, liar.ID)
			}
			var seen int64
			st.DB().Model(&models.ReflectionSeen{}).Where("perception_id = ?", p[1]).Count(&seen)
			if _, page := br.get(path); strings.Contains(page, "The ferry is the way out") || seen != 0 {
				t.Errorf("the deleted belief is still shown, or its perception is not new again (%d marks)", seen)
			}

			// The perception: its belief goes with it, the other stays.
			del = path + "/perception/" + p[0] + "/delete"
			resp, body = br.post(del, url.Values{"csrf": {csrf}})
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `name="confirm" value="yes"`) {
				t.Errorf("the first perception delete does not ask: %d", resp.StatusCode)
			}
			resp, _ = br.post(del, url.Values{"csrf": {csrf}, "confirm": {"yes"}})
			if resp.StatusCode != http.StatusSeeOther {
				t.Errorf("confirmed perception delete: %d", resp.StatusCode)
			}
			if got := beliefs(); len(got) != 0 {
				t.Errorf("the belief citing the deleted perception stays: %v", got)
			}
			_, page := br.get(path)
			if strings.Contains(page, "Tess hid the key") || !strings.Contains(page, "The ferry leaves at dawn.") {
				t.Errorf("after the perception delete the page shows the wrong perceptions")
			}
			if resp, _ := br.post(del, url.Values{"csrf": {csrf}, "confirm": {"yes"}}); resp.StatusCode != http.StatusNotFound {
				t.Errorf("deleting it again: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// Perceptions come a page at a time, newest first, with a link to the
// older ones.
func TestCharacterPerceptionPages(t *testing.T) {
	b := testenv.Backends(t)[0]
	st := testenv.OpenStore(t, b)
	const space = "console:local:pages"
	lines := make([]string, 103)
	for i := range lines {
		lines[i] = "memory number " + strings.Repeat("x", i%3) + string(rune('A'+i%26)) + " #" + strconv.Itoa(i)
	}
	seedStory(t, st, space, "console:pages", lines...)
	_, ts := inspector(t, b, web.Options{Store: st})
	br := newBrowser(t, ts.URL)
	br.login(fullToken)
	path := "/character/" + url.PathEscape(space) + "/Maren"
	_, body := br.get(path)
	if strings.Contains(body, " #2<") || !strings.Contains(body, " #102<") || strings.Count(body, `<tr id="perception-`) != 100 {
		t.Fatalf("the first page: want the newest 100 (#102 … #3)")
	}
	i := strings.Index(body, `href="`+path+`?before=`)
	if i < 0 {
		t.Fatalf("no link to older perceptions")
	}
	older := body[i+len(`href="`):]
	older = strings.ReplaceAll(older[:strings.Index(older, `"`)], "&amp;", "&")
	_, body = br.get(older)
	if strings.Count(body, `<tr id="perception-`) != 3 || !strings.Contains(body, " #0<") || strings.Contains(body, "?before=") {
		t.Errorf("the older page: want #2 … #0 and no further link")
	}
}
