package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
)

// chatPageTurns is how many messages of the branch a chat page shows; a
// link leads to the ones before.
const chatPageTurns = 100

// replyDiagnostics bounds the recall records read for one reply: the
// records of the turns that answered the same message (each /regen and
// swipe kept one).
const replyDiagnostics = 20

func init() {
	funcs["msgOf"] = func(c models.Chat, m models.TranscriptMessage, head, off bool) msgView {
		return msgView{Chat: c, M: m, Head: head, Off: off}
	}
	funcs["score"] = func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
}

// chatRoutes registers the chat pages: the transcript, a reply with its
// recall, forgetting the chat, and the live stream of its turns.
func (s *Server) chatRoutes() {
	s.handle("GET /chat/{id}", false, s.chatPage)
	s.handle("GET /chat/{id}/reply/{msg}", false, s.replyPage)
	s.handle("GET /chat/{id}/forget", false, s.forgetForm)
	s.handle("POST /chat/{id}/forget", true, s.forgetChat)
	s.handle("GET /live/chat/{id}", false, s.liveChat)
}

// chatView is the chat page's data.
type chatView struct {
	Chat    models.Chat
	Channel models.Channel
	// HasChannel is false when the chat's channel row is gone.
	HasChannel bool
	Cast       []castRow
	Summaries  []models.SummaryView
	// Ledger is the chat's ledger snapshot, indented.
	Ledger   string
	Messages int64
	// Turns are the page's messages of the branch, oldest first, each
	// with the off-branch messages that share its parent.
	Turns []turnRow
	// Earlier is the message the page before ends at ("" at the start);
	// Paged is true when this page is not the newest.
	Earlier string
	Paged   bool
	Notice  string
}

func (v chatView) PageTitle() string { return "Chat " + chatLabel(v.Chat) }

type castRow struct {
	models.CastMember
	// Ledger is the member's own ledger (models.MemberLedger), indented.
	Ledger string
}

// turnRow is a message on the branch and the alternatives beside it.
type turnRow struct {
	models.TranscriptMessage
	Head bool
	Off  []models.TranscriptMessage
}

// msgView is what the chat-msg template shows of one message.
type msgView struct {
	Chat      models.Chat
	M         models.TranscriptMessage
	Head, Off bool
}

func chatLabel(c models.Chat) string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// chatPage shows a chat: who plays it and where, its relay summaries and
// ledgers, and its branch as a tree (the last chatPageTurns messages, with
// a link to the ones before), presence per message.
func (s *Server) chatPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	chat, ok := s.loadChat(w, r)
	if !ok {
		return
	}
	v := chatView{Chat: chat, Notice: noticeText(r.URL.Query().Get("notice"))}
	ch, err := s.opt.Store.Channel(ctx, chat.ChannelID)
	switch {
	case err == nil:
		v.Channel, v.HasChannel = ch, true
	case !errors.Is(err, models.ErrNotFound):
		s.internal(w, r, "the chat's channel", err)
		return
	}
	cast, err := s.opt.Store.Cast(ctx, chat.ID, true)
	if err != nil {
		s.internal(w, r, "the cast", err)
		return
	}
	ledger, err := s.opt.Store.Ledger(ctx, chat.ID)
	if err != nil {
		s.internal(w, r, "the ledger", err)
		return
	}
	views, err := s.opt.Store.ViewLedgers(ctx, chat.ID)
	if err != nil {
		s.internal(w, r, "the ledgers", err)
		return
	}
	v.Ledger = prettyJSON(ledger)
	if len(cast) > 1 {
		// A one-card chat's ledger is its card's view: shown once.
		for _, m := range cast {
			v.Cast = append(v.Cast, castRow{CastMember: m, Ledger: prettyJSON(models.MemberLedger(chat, m, ledger, views))})
		}
	} else {
		for _, m := range cast {
			v.Cast = append(v.Cast, castRow{CastMember: m})
		}
	}
	if v.Summaries, err = s.opt.Store.PageSummaries(ctx, chat); err != nil {
		s.internal(w, r, "the relay summaries", err)
		return
	}
	pulse, err := s.opt.Store.ChatPulse(ctx, chat.ID)
	if err != nil {
		s.internal(w, r, "the chat", err)
		return
	}
	v.Messages = pulse.Messages
	from := chat.HeadID
	if f := r.URL.Query().Get("from"); f != "" && f != chat.HeadID {
		from, v.Paged = f, true
	}
	tr, err := s.opt.Store.TranscriptPage(ctx, chat.ID, from, chatPageTurns)
	if errors.Is(err, models.ErrNotFound) {
		s.notFound(w, r)
		return
	}
	if err != nil {
		s.internal(w, r, "the transcript", err)
		return
	}
	v.Earlier = tr.Earlier
	for _, m := range tr.Messages {
		v.Turns = append(v.Turns, turnRow{TranscriptMessage: m, Head: m.ID == chat.HeadID, Off: tr.Off[m.ParentID]})
	}
	s.render(w, r, http.StatusOK, "chat", v)
}

// loadChat reads the chat named by the path, answering 404 (or 500) when
// it cannot.
func (s *Server) loadChat(w http.ResponseWriter, r *http.Request) (models.Chat, bool) {
	chat, err := s.opt.Store.Chat(r.Context(), r.PathValue("id"))
	if errors.Is(err, models.ErrNotFound) {
		s.notFound(w, r)
		return chat, false
	}
	if err != nil {
		s.internal(w, r, "the chat", err)
		return chat, false
	}
	return chat, true
}

// replyView is a reply's page: its text and what the turn recalled.
type replyView struct {
	Chat     models.Chat
	Msg      models.Message
	OnBranch bool
	// Recall is the recall record of the turn that wrote the reply; nil
	// when none was kept (RecallOff says whether the chat kept any).
	Recall    *memory.RecallReport
	RecallAt  time.Time
	RecallOff bool
	Picked    []memory.ReportItem
	Left      []memory.ReportItem
	// Prompt is the prompt the reply was built from, block by block (nil
	// when no trace was kept: web.prompts keeps a chat's latest replies').
	Prompt *models.PromptTrace
	// PromptItems are the prompt's recall items with their scores and why.
	PromptItems []models.PromptRecallItem
}

func (v replyView) PageTitle() string { return "Reply in " + chatLabel(v.Chat) }

// replyPage shows one reply and its turn's recall: every candidate with
// its scores by component, picked or left out, and why.
func (s *Server) replyPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	chat, ok := s.loadChat(w, r)
	if !ok {
		return
	}
	msg, err := s.opt.Store.ChatMessage(ctx, chat.ID, r.PathValue("msg"))
	if errors.Is(err, models.ErrNotFound) || (err == nil && msg.Role != prompt.RoleAssistant) {
		s.notFound(w, r)
		return
	}
	if err != nil {
		s.internal(w, r, "the reply", err)
		return
	}
	v := replyView{Chat: chat, Msg: msg}
	if v.OnBranch, err = s.opt.Store.OnBranch(ctx, chat.HeadID, msg.ID); err != nil {
		s.internal(w, r, "the branch", err)
		return
	}
	// A turn's recall is kept under the head it ran at: the message the
	// reply answers.
	ds, err := s.opt.Store.RecallDiagnostics(ctx, chat.ID, msg.ParentID, replyDiagnostics)
	if err != nil {
		s.internal(w, r, "the recall record", err)
		return
	}
	alts, err := s.opt.Store.Alternatives(ctx, msg)
	if err != nil {
		s.internal(w, r, "the reply's alternatives", err)
		return
	}
	if d := replyDiagnostic(ds, msg, alts); d != nil {
		rep, err := memory.ParseRecallReport(d.Data)
		if err != nil {
			s.internal(w, r, "the recall record", err)
			return
		}
		v.Recall, v.RecallAt = &rep, d.CreatedAt
		for _, it := range rep.Items {
			if it.Picked {
				v.Picked = append(v.Picked, it)
			} else {
				v.Left = append(v.Left, it)
			}
		}
	} else {
		kept, err := s.opt.Store.RecallDiagnostics(ctx, chat.ID, "", 1)
		if err != nil {
			s.internal(w, r, "the recall record", err)
			return
		}
		v.RecallOff = len(kept) == 0
	}
	tr, err := s.opt.Store.PromptTrace(ctx, msg.ID)
	switch {
	case err == nil && tr.ChatID == chat.ID:
		v.Prompt, v.PromptItems = &tr, tr.Items
	case err != nil && !errors.Is(err, models.ErrNotFound):
		s.internal(w, r, "the reply's prompt", err)
		return
	}
	s.render(w, r, http.StatusOK, "chatreply", v)
}

// replyDiagnostic picks, among the recall records kept under the reply's
// parent, the one of the turn that wrote reply: the speaker's, written
// after the alternative before it was stored (its turn began after that)
// and, the newest such, before the reply was (the record is written while
// the model answers). When none was, and no later alternative stands
// beside the reply, the oldest written after it: a record that landed just
// after its reply. Nil when the turn kept none.
func replyDiagnostic(ds []models.RecallDiagnostic, reply models.Message, alts []models.Message) *models.RecallDiagnostic {
	var mine []models.RecallDiagnostic
	for _, d := range ds {
		if d.Character == reply.AuthorName {
			mine = append(mine, d)
		}
	}
	if len(mine) == 0 {
		mine = ds
	}
	var prev, next *models.Message
	for i := range alts {
		a := &alts[i]
		if a.ID == reply.ID || a.SpeakerCardID != reply.SpeakerCardID {
			continue
		}
		if a.CreatedAt.Before(reply.CreatedAt) || (a.CreatedAt.Equal(reply.CreatedAt) && a.ID < reply.ID) {
			if prev == nil || a.CreatedAt.After(prev.CreatedAt) {
				prev = a
			}
		} else if next == nil || a.CreatedAt.Before(next.CreatedAt) {
			next = a
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].ID > mine[j].ID })
	var late *models.RecallDiagnostic
	for i := range mine {
		d := &mine[i]
		if prev != nil && !d.CreatedAt.After(prev.CreatedAt) {
			continue
		}
		if !d.CreatedAt.After(reply.CreatedAt) {
			return d
		}
		late = d
	}
	if next != nil {
		return nil
	}
	return late
}

// forgetView is the confirmation page of a forget.
type forgetView struct {
	Chat     models.Chat
	Messages int64
	Cast     []models.CastMember
}

func (v forgetView) PageTitle() string { return "Forget " + chatLabel(v.Chat) }

// forgetForm asks before a chat is forgotten, saying what goes.
func (s *Server) forgetForm(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	chat, ok := s.loadChat(w, r)
	if !ok {
		return
	}
	pulse, err := s.opt.Store.ChatPulse(ctx, chat.ID)
	if err != nil {
		s.internal(w, r, "the chat", err)
		return
	}
	cast, err := s.opt.Store.Cast(ctx, chat.ID, true)
	if err != nil {
		s.internal(w, r, "the cast", err)
		return
	}
	s.render(w, r, http.StatusOK, "chatforget", forgetView{Chat: chat, Messages: pulse.Messages, Cast: cast})
}

// forgetChat forgets the chat as `troupe memory forget` does: the chat,
// its recaps and everything only it supports go at once, and each card it
// cast owes a consolidation in the space.
func (s *Server) forgetChat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.opt.Memory == nil {
		s.fail(w, r, http.StatusServiceUnavailable, "This inspector has no memory service: forget the chat with `troupe memory forget`.")
		return
	}
	id := r.PathValue("id")
	f, err := s.opt.Memory.ForgetChat(ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		s.notFound(w, r)
		return
	}
	if err != nil {
		s.internal(w, r, "forgetting the chat", err)
		return
	}
	s.log.Info("inspector: chat forgotten", "chat_id", id, "card_id", f.CardID, "space_id", f.SpaceID)
	if s.opt.Queue != nil {
		for _, card := range f.Cards {
			if err := s.opt.Queue.Consolidate(ctx, card, f.SpaceID); err != nil {
				s.log.Warn("inspector: enqueue consolidation", "card_id", card, "space_id", f.SpaceID, "err", err)
			}
		}
	}
	http.Redirect(w, r, "/?notice="+url.QueryEscape("forgotten"), http.StatusSeeOther)
}

// noticeText is the text of a notice a redirect names; only known ones are
// shown, so a link cannot put words on a page.
func noticeText(key string) string {
	switch key {
	case "forgotten":
		return "The chat was forgotten, with its recaps and everything only it supported."
	}
	return ""
}

// prettyJSON indents a JSON snapshot for reading; other text is shown as
// it is.
func prettyJSON(s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		return s
	}
	return b.String()
}
