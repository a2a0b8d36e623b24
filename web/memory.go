package web

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"troupe/handbook"
	"troupe/models"
)

// memoryChats bounds the chats whose summaries a card's page reads, and
// memoryCharacters the characters of the space it links to.
const (
	memoryChats      = 50
	memoryCharacters = 200
)

// memoryRoutes registers a card's memory in a space and its edits on the
// hard path (as `troupe memory edit` does).
func (s *Server) memoryRoutes() {
	s.handle("GET /memory/{card}/{space}", false, s.memoryPage)
	s.handle("GET /memory/{card}/{space}/edit", false, s.memoryEditForm)
	s.handle("POST /memory/{card}/{space}/edit", true, s.memoryEdit)
	s.handle("GET /memory/{card}/{space}/summary/{chat}", false, s.summaryEditForm)
	s.handle("POST /memory/{card}/{space}/summary/{chat}", true, s.summaryEdit)
	s.characterRoutes()
}

// memoryPath is the page of a card's memory in a space.
func memoryPath(card, space string) string {
	return "/memory/" + url.PathEscape(card) + "/" + url.PathEscape(space)
}

// segment is a piece of a line of memory text: plain text, or a
// provenance tag, linked when its chat exists.
type segment struct {
	Text   string
	ChatID string
	Link   bool
}

// tagLine is one line of a handbook or resident, cut at its tags.
type tagLine struct{ Segments []segment }

// chatTags lists the chat ids the texts' provenance tags name, once each.
func chatTags(texts ...string) []string {
	var ids []string
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			for _, id := range handbook.Tags(l) {
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

// tagLines cuts text into lines and each line at its [chat:ID] tags (as
// handbook.Tags reads them); a tag links to its chat only when the chat
// exists: the link's id is the tag's, read from the stored text.
func tagLines(text string, exists map[string]bool) []tagLine {
	if text == "" {
		return nil
	}
	var out []tagLine
	for _, l := range strings.Split(text, "\n") {
		var line tagLine
		rest := l
		for _, id := range handbook.Tags(l) {
			tag := "[chat:" + id + "]"
			i := strings.Index(rest, tag)
			if i < 0 {
				continue
			}
			if i > 0 {
				line.Segments = append(line.Segments, segment{Text: rest[:i]})
			}
			line.Segments = append(line.Segments, segment{Text: tag, ChatID: id, Link: exists[id]})
			rest = rest[i+len(tag):]
		}
		if rest != "" || len(line.Segments) == 0 {
			line.Segments = append(line.Segments, segment{Text: rest})
		}
		out = append(out, line)
	}
	return out
}

type memoryPage struct {
	Card, Space string
	Path        string
	Handbook    []tagLine
	Resident    []tagLine
	// Report is the injected view; HasReport is false without a memory
	// service.
	HasReport        bool
	ResidentInjected string
	ResidentCut      []string
	ResidentHandCut  int
	Recaps           []recapRow
	Manifest         []models.ManifestEntry
	Chats            []chatSummaries
	MoreChats        int
	Failing          []models.JobRecord
	Characters       []models.Character
	// Edited names what was just replaced ("" for none).
	Edited string
}

func (p memoryPage) PageTitle() string { return "Memory of " + p.Card + " in " + p.Space }

type recapRow struct {
	models.Recap
	Exists bool
}

type chatSummaries struct {
	Chat      models.Chat
	Summaries []models.SummaryView
}

// memoryKey finds the (card, space) pair of the request, or answers 404.
func (s *Server) memoryKey(w http.ResponseWriter, r *http.Request) (card, space string, ok bool) {
	card, space = r.PathValue("card"), r.PathValue("space")
	keys, err := s.opt.Store.MemoryKeys(r.Context())
	if err != nil {
		s.internal(w, r, "the memory keys", err)
		return "", "", false
	}
	if !slices.Contains(keys, models.MemoryKey{CardID: card, SpaceID: space}) {
		s.notFound(w, r)
		return "", "", false
	}
	return card, space, true
}

func (s *Server) memoryPage(w http.ResponseWriter, r *http.Request) {
	card, space, ok := s.memoryKey(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	st, err := s.opt.Store.LoadMemory(ctx, card, space)
	if err != nil {
		s.internal(w, r, "the memory", err)
		return
	}
	pg := memoryPage{Card: card, Space: space, Path: memoryPath(card, space), Manifest: st.Entries}
	switch r.URL.Query().Get("edited") {
	case "handbook", "resident", "summary":
		pg.Edited = r.URL.Query().Get("edited")
	}
	texts := []string{st.Handbook, st.Resident}
	ids := chatTags(texts...)
	for _, rc := range st.Recaps {
		ids = append(ids, rc.ChatID)
	}
	exists, err := s.opt.Store.ExistingChats(ctx, ids)
	if err != nil {
		s.internal(w, r, "the chats", err)
		return
	}
	pg.Handbook, pg.Resident = tagLines(st.Handbook, exists), tagLines(st.Resident, exists)
	for _, rc := range st.Recaps {
		pg.Recaps = append(pg.Recaps, recapRow{Recap: rc, Exists: exists[rc.ChatID]})
	}
	if s.opt.Memory != nil {
		rep, err := s.opt.Memory.Report(ctx, card, space)
		if err != nil {
			s.internal(w, r, "the memory report", err)
			return
		}
		pg.HasReport, pg.ResidentInjected, pg.ResidentCut, pg.ResidentHandCut = true, rep.Resident, rep.ResidentCut, rep.ResidentHandCut
	}
	chats, err := s.opt.Store.SpaceChats(ctx, card, space)
	if err != nil {
		s.internal(w, r, "the chats", err)
		return
	}
	if len(chats) > memoryChats {
		pg.MoreChats = len(chats) - memoryChats
		chats = chats[:memoryChats]
	}
	for _, c := range chats {
		sums, err := s.opt.Store.ActiveSummaries(ctx, c)
		if err != nil {
			s.internal(w, r, "the summaries", err)
			return
		}
		pg.Chats = append(pg.Chats, chatSummaries{Chat: c, Summaries: sums})
	}
	if pg.Failing, err = s.opt.Store.FailingJobs(ctx, card, space, card+"|"+space); err != nil {
		s.internal(w, r, "the failing jobs", err)
		return
	}
	if pg.Characters, err = s.opt.Store.SpaceCharacters(ctx, space, memoryCharacters); err != nil {
		s.internal(w, r, "the characters", err)
		return
	}
	s.render(w, r, http.StatusOK, "memory", pg)
}

// textHash identifies the text a form showed, so an edit over a file that
// changed meanwhile is refused rather than written over it.
func textHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// editField is one textarea of the edit form.
type editField struct {
	Name, Label, Text, Base, Problem string
}

type memoryEditPage struct {
	Card, Space, Path string
	Fields            []editField
	Chats             []chatSummaries
}

func (p memoryEditPage) PageTitle() string { return "Edit the memory of " + p.Card + " in " + p.Space }

func (s *Server) memoryEditForm(w http.ResponseWriter, r *http.Request) {
	card, space, ok := s.memoryKey(w, r)
	if !ok {
		return
	}
	s.renderMemoryEdit(w, r, http.StatusOK, card, space, "", "", "")
}

// renderMemoryEdit shows the edit form; field, kept and problem put the
// person's text back into one field with the reason it was refused.
func (s *Server) renderMemoryEdit(w http.ResponseWriter, r *http.Request, status int, card, space, field, kept, problem string) {
	ctx := r.Context()
	if sessionReadOnly(r) {
		s.fail(w, r, http.StatusForbidden, "This session may only look: log in with the full token to change memory.")
		return
	}
	st, err := s.opt.Store.LoadMemory(ctx, card, space)
	if err != nil {
		s.internal(w, r, "the memory", err)
		return
	}
	pg := memoryEditPage{Card: card, Space: space, Path: memoryPath(card, space), Fields: []editField{
		{Name: "handbook", Label: "Handbook", Text: st.Handbook, Base: textHash(st.Handbook)},
		{Name: "resident", Label: "Resident summary", Text: st.Resident, Base: textHash(st.Resident)},
	}}
	for i := range pg.Fields {
		if pg.Fields[i].Name == field {
			pg.Fields[i].Text, pg.Fields[i].Problem = kept, problem
		}
	}
	chats, err := s.opt.Store.SpaceChats(ctx, card, space)
	if err != nil {
		s.internal(w, r, "the chats", err)
		return
	}
	for _, c := range chats[:min(len(chats), memoryChats)] {
		sums, err := s.opt.Store.ActiveSummaries(ctx, c)
		if err != nil {
			s.internal(w, r, "the summaries", err)
			return
		}
		pg.Chats = append(pg.Chats, chatSummaries{Chat: c, Summaries: sums})
	}
	s.render(w, r, status, "memory_edit", pg)
}

func sessionReadOnly(r *http.Request) bool {
	sess, ok := sessionOf(r.Context())
	return !ok || sess.readOnly
}

// formText reads a textarea as the CLI reads a file: UTF-8 text, line
// ends as \n, surrounding space trimmed.
func formText(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", errors.New("the text is not UTF-8 text")
	}
	raw = strings.ReplaceAll(raw, "\r\n", "\n")
	return strings.TrimSpace(raw), nil
}

// memoryEdit replaces the handbook or the resident by hand, as `troupe
// memory edit --handbook/--resident` does: store.EditMemory, then a
// consolidation is owed.
func (s *Server) memoryEdit(w http.ResponseWriter, r *http.Request) {
	card, space, ok := s.memoryKey(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	field := r.PostFormValue("field")
	if field != "handbook" && field != "resident" {
		s.fail(w, r, http.StatusBadRequest, "The form names no file to edit.")
		return
	}
	raw := r.PostFormValue("text")
	text, err := formText(raw)
	if err != nil {
		s.renderMemoryEdit(w, r, http.StatusUnprocessableEntity, card, space, field, strings.ToValidUTF8(raw, "\uFFFD"), err.Error())
		return
	}
	st, err := s.opt.Store.LoadMemory(ctx, card, space)
	if err != nil {
		s.internal(w, r, "the memory", err)
		return
	}
	cur := st.Handbook
	if field == "resident" {
		cur = st.Resident
	}
	if r.PostFormValue("base") != textHash(cur) {
		s.renderMemoryEdit(w, r, http.StatusConflict, card, space, field, text,
			"The "+field+" changed since this form was opened (a consolidation may have run): your text is kept here; compare it with the page and send it again.")
		return
	}
	if text != cur {
		var hb, rs *string
		if field == "handbook" {
			hb = &text
		} else {
			rs = &text
		}
		if err := s.opt.Store.EditMemory(ctx, card, space, hb, rs, "edited by hand"); err != nil {
			s.internal(w, r, "the edit", err)
			return
		}
		if s.opt.Queue != nil {
			if err := s.opt.Queue.Consolidate(ctx, card, space); err != nil {
				s.log.Warn("inspector: enqueue consolidation", "card_id", card, "space_id", space, "err", err)
			}
		}
	}
	http.Redirect(w, r, memoryPath(card, space)+"?edited="+field+"#"+field, http.StatusSeeOther)
}

type summaryEditPage struct {
	Card, Space, Path string
	Chat              models.Chat
	Character         string
	Summary           models.SummaryView
	Text, Problem     string
}

func (p summaryEditPage) PageTitle() string { return "Edit the summary of chat " + p.Chat.ID }

// summaryTarget reads the chat of the request, which must be the card's in
// the space (as the CLI refuses a mistyped --card or --space), and its
// active summary of character's view.
func (s *Server) summaryTarget(w http.ResponseWriter, r *http.Request) (summaryEditPage, bool) {
	card, space := r.PathValue("card"), r.PathValue("space")
	pg := summaryEditPage{Card: card, Space: space, Path: memoryPath(card, space), Character: r.FormValue("character")}
	chat, err := s.opt.Store.Chat(r.Context(), r.PathValue("chat"))
	if errors.Is(err, models.ErrNotFound) || (err == nil && (chat.CardID != card || chat.SpaceID != space)) {
		s.notFound(w, r)
		return pg, false
	}
	if err != nil {
		s.internal(w, r, "the chat", err)
		return pg, false
	}
	pg.Chat = chat
	sums, err := s.opt.Store.ActiveSummaries(r.Context(), chat)
	if err != nil {
		s.internal(w, r, "the summaries", err)
		return pg, false
	}
	for _, sv := range sums {
		if (pg.Character == "" && len(sv.Members) == 0) || slices.Contains(sv.Members, pg.Character) {
			pg.Summary = sv
		}
	}
	if pg.Summary.ID == "" {
		s.fail(w, r, http.StatusNotFound, "This chat has no relay summary of that view yet (nothing was compacted): there is nothing to edit.")
		return pg, false
	}
	return pg, true
}

func (s *Server) summaryEditForm(w http.ResponseWriter, r *http.Request) {
	if sessionReadOnly(r) {
		s.fail(w, r, http.StatusForbidden, "This session may only look: log in with the full token to change memory.")
		return
	}
	pg, ok := s.summaryTarget(w, r)
	if !ok {
		return
	}
	pg.Text = pg.Summary.Content
	s.render(w, r, http.StatusOK, "summary_edit", pg)
}

// summaryEdit replaces a chat's relay summary by hand, as `troupe memory
// edit --chat --summary` does: store.EditSummary; an empty text is
// refused (a summary cannot be deleted by hand).
func (s *Server) summaryEdit(w http.ResponseWriter, r *http.Request) {
	pg, ok := s.summaryTarget(w, r)
	if !ok {
		return
	}
	raw := r.PostFormValue("text")
	text, err := formText(raw)
	switch {
	case err != nil:
		pg.Text, pg.Problem = strings.ToValidUTF8(raw, "\uFFFD"), err.Error()
	case text == "":
		pg.Text, pg.Problem = raw, "The new summary is empty: a summary cannot be deleted by hand."
	case r.PostFormValue("base") != pg.Summary.ID:
		pg.Text, pg.Problem = text, "The summary changed since this form was opened (a compaction may have run): your text is kept here; compare it and send it again."
	}
	if pg.Problem != "" {
		s.render(w, r, http.StatusUnprocessableEntity, "summary_edit", pg)
		return
	}
	_, err = s.opt.Store.EditSummary(r.Context(), pg.Chat.ID, pg.Character, text)
	switch {
	case errors.Is(err, models.ErrNotFound):
		pg.Text, pg.Problem = text, "This chat has no relay summary yet (nothing was compacted): there is nothing to edit."
	case errors.Is(err, models.ErrSceneSummary):
		pg.Text, pg.Problem = text, "This chat is a scene with a summary per character: edit one character's view."
	case err != nil:
		s.internal(w, r, "the summary edit", err)
		return
	}
	if pg.Problem != "" {
		s.render(w, r, http.StatusUnprocessableEntity, "summary_edit", pg)
		return
	}
	http.Redirect(w, r, pg.Path+"?edited=summary#chat-"+url.PathEscape(pg.Chat.ID), http.StatusSeeOther)
}
