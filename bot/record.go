package bot

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"troupe/cards"
	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
	"troupe/record"
	"troupe/text"
)

// RecordJobs is the optional part of Jobs that owes a chat's recorder run.
type RecordJobs interface {
	// Record enqueues the chat's recorder; now runs it without waiting for
	// a batch (a /record).
	Record(ctx context.Context, chatID string, now bool) error
}

// Recorder is the optional part of MemoryService that runs the recorder.
type Recorder interface {
	Record(ctx context.Context, chatID string) (memory.Result, error)
}

// turnRecord is what storing msgs records at once: who was present (the
// cast members not away, and the players who speak) and, with the recorder
// on, their plain events. User messages (newTurn) open a turn; their
// authors are the players who speak (speaker, the author cs.user names,
// under that name); a reply is the speaking member's (cs.member).
func (p *Pipeline) turnRecord(cs chatState, msgs []*models.Message, newTurn bool, speaker string) *models.TurnRecord {
	rec := &models.TurnRecord{SpaceID: cs.chat.SpaceID, NewTurn: newTurn, Present: cs.presentCast(), Cast: cs.castNames()}
	me := cs.speakerName()
	if !slices.Contains(rec.Present, me) && !newTurn {
		// An answer is perceived by who gives it.
		rec.Present = append(rec.Present, me)
	}
	for _, m := range msgs {
		if m.Role == prompt.RoleUser {
			rec.Present = append(rec.Present, playerName(cs, m, speaker))
		}
	}
	if !p.opt.Recorder.Enabled {
		return rec
	}
	for _, m := range msgs {
		actor := me
		if m.Role == prompt.RoleUser {
			actor = playerName(cs, m, speaker)
		}
		rec.Actors = append(rec.Actors, actor)
		var evs []models.PlainEvent
		for _, pe := range record.PlainEvents(m.Content) {
			evs = append(evs, models.PlainEvent{Kind: string(pe.Kind), Text: pe.Text})
		}
		rec.Events = append(rec.Events, evs)
	}
	return rec
}

// playerName is the character a user message's author plays: the speaking
// user's persona name (cs.user) for their own messages, else the platform's
// display name.
func playerName(cs chatState, m *models.Message, speaker string) string {
	if cs.user != "" && (m.AuthorID == speaker || m.AuthorName == "") {
		return cs.user
	}
	if m.AuthorName != "" {
		return m.AuthorName
	}
	return "User"
}

// recordOwed enqueues the chat's recorder when recorder.batch turns wait
// for it: one counting query on the chat's unsealed events.
func (p *Pipeline) recordOwed(ctx context.Context, cs chatState) {
	rj, ok := p.opt.Jobs.(RecordJobs)
	if !ok || !p.opt.Recorder.Enabled {
		return
	}
	n, err := p.opt.Store.UnrecordedTurns(ctx, cs.chat.ID, p.opt.Recorder.Batch+1)
	if err != nil {
		p.log.Warn("count unrecorded turns", "chat_id", cs.chat.ID, "err", err)
		return
	}
	// The newest turn waits for a later user message: it is not owed yet.
	if n-1 < p.opt.Recorder.Batch {
		return
	}
	if err := rj.Record(ctx, cs.chat.ID, false); err != nil {
		p.log.Warn("enqueue recorder", "chat_id", cs.chat.ID, "err", err)
	}
}

// cmdRecord runs the recorder for the channel's chat now (a GM's command
// in groups).
func (cm *commands) cmdRecord(ctx context.Context, in Inbound, sink Sink) error {
	rec, ok := cm.p.opt.Memory.(Recorder)
	return cm.runNow(ctx, in, sink, manualRun{
		job: "record", kind: memory.KindRecord, on: ok && cm.p.opt.Recorder.Enabled,
		run: func(ctx context.Context, chatID string) (memory.Result, error) { return rec.Record(ctx, chatID) },
		say: func(lang string, o runOutcome, arg string) string {
			if o == runOff {
				return cm.rtext(lang, msgRecorderOff)
			}
			return cm.rtext(lang, [...]recordMsg{runFailed: msgRecordFailed, runWritten: msgRecorded, runNotWritten: msgNotRecorded}[o], arg)
		},
	})
}

// runOutcome is how a memory job run by hand went, for its notice.
type runOutcome int

const (
	runOff runOutcome = iota
	runFailed
	runWritten
	runNotWritten
)

// manualRun is a memory job a GM runs now for the channel's chat.
type manualRun struct {
	job string
	// on is false when the job is switched off.
	on bool
	// kind is the memory job's kind: its run holds the lock the worker's
	// job of that kind holds for the chat (memory.JobLockKey).
	kind string
	run  func(ctx context.Context, chatID string) (memory.Result, error)
	// say words the notice of an outcome; arg is the reason, if any.
	say func(lang string, o runOutcome, arg string) string
}

// runNow runs m for the channel's chat at once, under its worker's lock, and
// tells how it went. In groups only a GM may.
func (cm *commands) runNow(ctx context.Context, in Inbound, sink Sink, m manualRun) error {
	lang := cm.p.langOf(in)
	if in.Channel.Group && !in.CanManage {
		return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
	}
	if !m.on {
		return sink.Notice(ctx, m.say(lang, runOff, ""))
	}
	cs, ok, err := cm.commandChat(ctx, in, sink, lang, m.job)
	if !ok {
		return err
	}
	unlock := cm.p.crossLock(ctx, memory.JobLockKey(m.kind, cs.chat.ID))
	res, err := m.run(ctx, cs.chat.ID)
	unlock()
	if err != nil {
		cm.p.warnFailure("manual memory job failed", err, "job", m.job, "chat_id", cs.chat.ID)
		var rej *memory.RejectedError
		if errors.As(err, &rej) {
			return sink.Notice(ctx, m.say(lang, runFailed, rej.Reason))
		}
		return sink.Notice(ctx, m.say(lang, runFailed, errorKind(err)))
	}
	if res.Outcome == memory.Written {
		return sink.Notice(ctx, m.say(lang, runWritten, res.Reason))
	}
	return sink.Notice(ctx, m.say(lang, runNotWritten, res.Reason))
}

// recordMsg names a text of the recorder's commands.
type recordMsg int

const (
	msgRecorderOff recordMsg = iota
	msgRecordFailed
	msgRecorded
	msgNotRecorded
	msgLedgerHeading
	msgRecordCounts
	msgRecordLastRun
)

var recordTexts = map[string]map[recordMsg]string{
	"en": {
		msgRecorderOff:   "The recorder is off here (recorder.enabled).",
		msgRecordFailed:  "Recording failed (%s); nothing was written and it will be tried again.",
		msgRecorded:      "Recorded: %s.",
		msgNotRecorded:   "Nothing recorded: %s.",
		msgLedgerHeading: "Ledger (may lag the story):",
		msgRecordCounts:  "Record of this chat: %d events (%d waiting for the recorder) · %d perceptions · %d open threads · %d relationships · %d known things",
		msgRecordLastRun: "Last recorder run: %s",
	},
	"zh": {
		msgRecorderOff:   "这里没有开启记录员（recorder.enabled）。",
		msgRecordFailed:  "记录失败（%s），没有写入任何内容，稍后会再试。",
		msgRecorded:      "已记录：%s。",
		msgNotRecorded:   "没有记录：%s。",
		msgLedgerHeading: "账本（可能落后于剧情）：",
		msgRecordCounts:  "本局记录：事件 %d 条（%d 条待记录）· 感知 %d 条 · 未了之事 %d 件 · 关系 %d 条 · 已知事物 %d 个",
		msgRecordLastRun: "记录员上次运行：%s",
	},
}

func (cm *commands) rtext(lang string, key recordMsg, args ...any) string {
	return Localized(recordTexts, lang, key, args...)
}

// sceneRead is the speaking character's scene knowledge (models.Scene),
// read while the turn reads its branch: it needs only the chat's space and
// the speaker.
type sceneRead struct {
	done chan struct{}
	sk   models.SceneKnowledge
	err  error
}

// readScene starts reading the speaking character's relationships and
// what it knows, for addScene; nil when the recorder is off.
func (p *Pipeline) readScene(ctx context.Context, cs chatState) *sceneRead {
	if !p.opt.Recorder.Enabled || p.opt.Memory == nil {
		return nil
	}
	r := &sceneRead{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer p.survive("scene_read", &r.err)
		r.sk, r.err = p.opt.Store.Scene(ctx, cs.chat.SpaceID, cs.chat.ID, cs.speakerName())
	}()
	return r
}

// addScene gives the prompt the speaking character's scene — its view of
// the ledger and its own relationships to those present — from what sr
// read; the prompt builder fits the resident summary to what it leaves.
// Nothing when the recorder is off.
func (p *Pipeline) addScene(cs chatState, rp replyPlan, sr *sceneRead, m *prompt.Material) {
	if sr == nil {
		return
	}
	<-sr.done
	if sr.err != nil {
		p.log.Warn("load scene", "chat_id", cs.chat.ID, "err", sr.err)
		return
	}
	m.Scene = p.sceneOf(cs, rp.user, sr.sk)
}

// sceneOf is the scene of cs's speaking character when it answers user,
// from its scene knowledge sk: built here alone, for a turn (addScene) and
// for the resident summary /memory shows as a turn injects it (fitted to
// what the scene leaves of the envelope).
func (p *Pipeline) sceneOf(cs chatState, user string, sk models.SceneKnowledge) string {
	name := cs.speakerName()
	// A one-card chat's lead witnessed the whole story, and the chat's
	// ledger is its own; in a scene each member has its own ledger, changed
	// only by the recorder batches it witnessed (a member that was away
	// gets nothing the ledger learned meanwhile, its flags and threads
	// included).
	ledger := cs.ledger
	if cs.scene() {
		views := map[string]string{}
		if sk.HasLedger {
			views[name] = sk.Ledger
		}
		ledger = models.MemberLedger(cs.chat, models.CastMember{Name: name, CardID: cs.speakerCard()}, cs.ledger, views)
	}
	var threads []string
	if ledger != "" {
		var l record.Ledger
		if json.Unmarshal([]byte(ledger), &l) == nil {
			threads = l.Threads
		}
	}
	// prompt.Build fits the resident summary into what the scene leaves of
	// the envelope.
	return prompt.Scene(prompt.SceneInput{Language: p.language(cs.card), Ledger: ledger, Character: name,
		Present: scenePresent(cs, name, user), Relationships: sk.Relationships, Known: sk.Known, Threads: threads,
		// Read with its macros filled: "{{user}} is her oldest friend"
		// names the player it answers.
		CardText: p.greeting(cs.card, cs.card.Description+"\n"+cs.card.Scenario+"\n"+cs.card.FirstMes, user)})
}

// writeRecord adds the chat's record counts to /memory and, for the
// owner's whole report, the recorder's last run (its outcome alone when it
// failed: an error can carry a provider's address) and the ledger.
func (cm *commands) writeRecord(ctx context.Context, b *strings.Builder, lang string, cs chatState, whole bool) {
	if !cm.p.opt.Recorder.Enabled || cs.chat.ID == "" {
		return
	}
	c, err := cm.store.RecordCounts(ctx, cs.chat.ID)
	if err != nil {
		cm.log.Warn("record counts", "chat_id", cs.chat.ID, "err", err)
		return
	}
	b.WriteString("\n")
	b.WriteString(cm.rtext(lang, msgRecordCounts, c.Events, c.Unsealed, c.Perceptions, c.OpenThreads, c.Relationships, c.Knowledge))
	if !whole {
		return
	}
	if c.LastRun != "" {
		// Its reason names what the recorder dropped and why (no story text).
		run := c.LastRun
		if strings.HasPrefix(run, models.OutcomeFailed+":") {
			run = models.OutcomeFailed
		}
		b.WriteString("\n")
		b.WriteString(cm.rtext(lang, msgRecordLastRun, text.Clip(run, 1200)))
	}
	if cs.ledger != "" {
		b.WriteString("\n")
		b.WriteString(cm.rtext(lang, msgLedgerHeading))
		b.WriteString("\n")
		// The recorder's JSON, written out for people.
		b.WriteString(text.Clip(record.LedgerText(lang, cs.ledger), 1500))
	}
}

// loreName is the name a lorebook entry has as a lore entity: its comment
// (the entry's title), else its first key.
func loreName(e *cards.Entry) string {
	if c := strings.TrimSpace(e.Comment); c != "" {
		return c
	}
	if len(e.Keys) > 0 {
		return strings.TrimSpace(e.Keys[0])
	}
	return ""
}

// restricted reports whether an entry reaches only some characters (known_by,
// or a character filter that includes): the recorder may grant it to others.
func restricted(e *cards.Entry) bool {
	return e.KnownBy != nil || (len(e.CharacterFilter) > 0 && !e.FilterExclude)
}

// restrictedLore lists the lore entities the restricted entries of books
// stand for, their keys as aliases.
func restrictedLore(books []*cards.Book) []models.Entity {
	var out []models.Entity
	for _, b := range books {
		for i := range b.Entries {
			e := &b.Entries[i]
			if name := loreName(e); restricted(e) && name != "" {
				out = append(out, models.Entity{Name: name, Aliases: strings.Join(e.Keys, "\n")})
			}
		}
	}
	return out
}

// ensureLore stores the lore entities of a card's restricted entries in a
// space, when a chat starts, so the recorder can grant their knowledge.
func (p *Pipeline) ensureLore(ctx context.Context, spaceID string, card cards.Card) {
	if !p.opt.Recorder.Enabled {
		return
	}
	if err := p.opt.Store.EnsureLore(ctx, spaceID, restrictedLore(p.books(card))); err != nil {
		p.log.Warn("store restricted lore", "space_id", spaceID, "err", err)
	}
}

// loreKnows is the lorebook's Knows for the speaking character: the
// restricted entries the recorder granted it (one query, only when a book
// has restricted entries and the recorder is on).
func (p *Pipeline) loreKnows(ctx context.Context, cs chatState, books []*cards.Book) func(e *cards.Entry) bool {
	if !p.opt.Recorder.Enabled || len(restrictedLore(books)) == 0 {
		return nil
	}
	names, err := p.opt.Store.KnownLore(ctx, cs.chat.SpaceID, cs.speakerName())
	if err != nil {
		p.log.Warn("load known lore", "chat_id", cs.chat.ID, "err", err)
		return nil
	}
	known := map[string]bool{}
	for _, n := range names {
		known[strings.ToLower(n)] = true
	}
	return func(e *cards.Entry) bool {
		if known[strings.ToLower(loreName(e))] {
			return true
		}
		for _, k := range e.Keys {
			if known[strings.ToLower(strings.TrimSpace(k))] {
				return true
			}
		}
		return false
	}
}

// scenePresent names who the speaking character sees in its scene: itself,
// the player it answers and, in a scene, the other cast members present.
func scenePresent(cs chatState, name, user string) []string {
	out := []string{name, user}
	if !cs.scene() {
		return out
	}
	for _, n := range cs.presentCast() {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}
