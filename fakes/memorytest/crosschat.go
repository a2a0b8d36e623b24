package memorytest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/memory"
)

var (
	recapBlockRe = regexp.MustCompile(`(?s)<recap chat-id="([^"]+)" chat-name="([^"]*)">\n(.*?)\n</recap>`)
	handbookRe   = regexp.MustCompile(`(?s)<handbook>\n(.*?)\n</handbook>`)
	residentRe   = regexp.MustCompile(`(?s)<resident>\n(.*?)\n</resident>`)
	deletedRe    = regexp.MustCompile(`(?s)<deleted-chats>\n(.*?)</deleted-chats>`)
	convRe       = regexp.MustCompile(`(?s)<conversation chat="([^"]*)"[^>]*>\n(.*?)\n</conversation>`)
)

func isZH(req openaitest.Request) bool {
	return strings.Contains(req.Messages[0].Content, "用中文写") || strings.Contains(req.Messages[0].Content, "===== 记忆.md")
}

// Recap writes a valid recap that quotes the transcript's first and last
// lines, so tests can find the chat's phrases in memory.
func Recap(req openaitest.Request, n int) string {
	lang := "en"
	if isZH(req) {
		lang = "zh"
	}
	h := memory.RecapHeadings[lang]
	name, first, last := "", "", ""
	if m := convRe.FindStringSubmatch(req.Messages[1].Content); m != nil {
		name = m[1]
		lines := strings.Split(m[2], "\n\n")
		first, last = lines[0], lines[len(lines)-1]
	}
	return fmt.Sprintf("# Recap %d of %s\n\n%s\n- It began: %s\n- It ended: %s\n\n%s\n- As in the chat.\n\n%s\n- Fact from recap %d.\n\n%s\n- Thread from recap %d.\n\n%s\n- none",
		n, name, h[0], first, last, h[1], h[2], n, h[3], n, h[4])
}

// Consolidate merges the prompt's recaps into the handbook's cross-chat
// sections and the resident the way the prompt asks: cross-chat entries
// tagged by every supporting chat, deleted chats removed, the untagged lines
// a person wrote kept. The engine writes the chat blocks.
func Consolidate(req openaitest.Request) string {
	lang := "en"
	if isZH(req) {
		lang = "zh"
	}
	user := req.Messages[1].Content
	hb, resident := "", ""
	if m := handbookRe.FindStringSubmatch(user); m != nil {
		hb = m[1]
	}
	if m := residentRe.FindStringSubmatch(user); m != nil {
		resident = m[1]
	}
	if m := deletedRe.FindStringSubmatch(user); m != nil {
		for _, l := range strings.Split(m[1], "\n") {
			if id := strings.TrimSpace(strings.TrimPrefix(l, "- ")); id != "" {
				hb, resident = handbook.Forget(hb, id), handbook.Forget(resident, id)
			}
		}
	}
	_, cross := splitHandbook(hb)
	names := map[string]string{}
	var ids []string
	for _, m := range recapBlockRe.FindAllStringSubmatch(user, -1) {
		id, name, recap := m[1], m[2], m[3]
		names[id] = name
		ids = append(ids, id)
		cross = append(cross, "- "+memory.RecapTitle(recap)+" [chat:"+id+"]")
	}
	sort.Strings(ids)
	hb = handbook.CrossHeadings[lang][0] + "\n" + strings.Join(dedupe(cross), "\n")
	var rs strings.Builder
	rs.WriteString(handbook.ResidentHeadings[lang][0] + "\n")
	for _, l := range strings.Split(resident, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		tags := handbook.Tags(t)
		if len(tags) == 1 && names[tags[0]] != "" {
			continue // rewritten below
		}
		rs.WriteString(t + "\n")
	}
	for _, id := range ids {
		fmt.Fprintf(&rs, "- %s (%s): remembered [chat:%s]\n", names[id], id, id)
	}
	return fmt.Sprintf("%s\n%s\n%s\n%s", memory.Markers[lang][0], hb, memory.Markers[lang][1], strings.TrimSpace(rs.String()))
}

// splitHandbook returns the chat blocks by id and the entries outside them.
func splitHandbook(text string) (map[string]string, []string) {
	blocks := map[string]string{}
	var cross []string
	id := ""
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "# ") {
			id = ""
			for bid := range handbook.Blocks(t) {
				id = bid
			}
			if id != "" {
				blocks[id] = t
			}
			continue
		}
		if id != "" {
			blocks[id] += "\n" + l
			continue
		}
		if strings.HasPrefix(t, "- ") {
			cross = append(cross, t)
		}
	}
	return blocks, cross
}

func dedupe(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
