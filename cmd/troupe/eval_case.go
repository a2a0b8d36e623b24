package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"troupe/bot"
	"troupe/cards"
	"troupe/config"
	"troupe/eval"
	"troupe/jobs"
	"troupe/llm"
	"troupe/models"
	"troupe/text"
)

// evalCase plays one case in a fresh troupe of its own: a temporary SQLite
// file, an in-process Redis, the configured model, scribe and memory
// settings, the pipeline and job worker that every chat uses. The player
// talks on a console channel; before the question every memory job the
// story left owed is finished.
type evalCase struct {
	s     *eval.Suite
	c     eval.Case
	cfg   config.Config
	judge bool
	log   *slog.Logger
	// limit bounds the case (story, owed memory work, question); 0 is none.
	limit time.Duration
	// limited is the context the limit bounds, once play has set it up.
	limited context.Context
	// stage says what the case is doing, for the error past its limit.
	stage string

	app    *app
	worker *jobs.Worker
	ref    bot.ChannelRef
	user   string
	seq    int
	tokens *tokenTap
}

// errCaseLimit is the cause of a case's context ending at its limit.
var errCaseLimit = errors.New("eval: over the case time limit")

// evalStopTimeout is how long a case's worker lets running jobs finish
// once the case is over.
const evalStopTimeout = time.Second

// evalDrainTimeout bounds the wait for the memory jobs a story left owed.
const evalDrainTimeout = 3 * time.Minute

func (e *evalCase) run(ctx context.Context) (res eval.Result) {
	start := time.Now()
	res = eval.Result{ID: e.c.ID, Category: e.c.Category, Lang: e.c.Lang}
	defer func() {
		res.Elapsed = time.Since(start)
		if e.tokens != nil {
			res.Model, res.Scribe = e.tokens.totals()
		}
	}()
	e.stage = "opening the chat"
	reply, notes, err := e.play(ctx)
	res.Notes = notes
	if err != nil && ctx.Err() == nil && e.limited != nil && errors.Is(context.Cause(e.limited), errCaseLimit) {
		// The wait that ran out is the news; its error is only
		// "context deadline exceeded".
		err = fmt.Errorf("over the case time limit (%s) while %s", e.limit, e.stage)
	}
	if err != nil {
		res.Err = err.Error()
		res.Verdict = eval.Verdict{Score: 0, Why: "not played to its question"}
		return res
	}
	res.Reply = reply
	res.Verdict = eval.Score(e.c, reply, e.s.F1)
	if e.judge {
		score, err := e.judgeReply(ctx, reply)
		if err != nil {
			res.Notes = append(res.Notes, "judge: "+err.Error())
		} else {
			res.Judge = &score
		}
	}
	return res
}

// play runs the story and the question; it returns the reply to the
// question and the setup problems it noticed.
func (e *evalCase) play(ctx context.Context) (string, []string, error) {
	dir, err := os.MkdirTemp("", "troupe-eval-")
	if err != nil {
		return "", nil, fmt.Errorf("eval: temporary database: %w", err)
	}
	defer os.RemoveAll(dir)
	cfg := e.cfg
	cfg.Database.DSN = config.Secret("sqlite://" + filepath.Join(dir, "eval.db"))
	cfg.Redis.URL = ""
	cfg.Language = e.c.Lang
	cfg.Limits.RatePerMinute = 0
	card, err := cards.LoadCard(filepath.Join(e.s.Dir, e.s.Cards[e.c.Lang]))
	if err != nil {
		return "", nil, fmt.Errorf("eval: card: %w", err)
	}
	// Every card next to it can join the cast (/cast add NAME).
	lib, err := cards.LoadLibrary(filepath.Dir(filepath.Join(e.s.Dir, e.s.Cards[e.c.Lang])), card.ID)
	if err != nil {
		return "", nil, fmt.Errorf("eval: cards: %w", err)
	}
	e.tokens = newTokenTap(e.log.Handler())
	if e.app, err = openApp(ctx, cfg, slog.New(e.tokens), lib); err != nil {
		return "", nil, err
	}
	defer e.app.Close()
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// A case past its limit leaves its running jobs at once.
	e.worker = e.app.workerWith(evalStopTimeout)
	wg.Go(func() { _ = e.worker.Run(wctx) })
	defer func() {
		stop()
		wg.Wait()
	}()
	// The limit is the case's own: the story, the memory work it leaves
	// owed and the question, not the setting up of its database, which a
	// loaded machine makes slow for every case alike.
	e.limited = ctx
	if e.limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, e.limit, errCaseLimit)
		defer cancel()
		e.limited = ctx
	}
	e.user = e.s.Users[e.c.Lang]
	if e.user == "" {
		e.user = "Ada"
	}
	e.ref = bot.ChannelRef{Platform: bot.PlatformConsole, ID: e.user + "/" + card.ID, SpaceKind: bot.SpaceLocal, SpaceID: e.user}
	if err := e.app.pipeline.Bind(ctx, e.ref, card.ID); err != nil {
		return "", nil, err
	}
	if err := e.app.pipeline.Greet(ctx, e.inbound(""), &evalSink{}); err != nil {
		return "", nil, err
	}
	var notes []string
	var facts []string
	e.stage = "telling the story"
	for _, t := range e.s.Turns(e.c) {
		if t.Idle {
			if err := e.idle(ctx); err != nil {
				return "", notes, err
			}
			continue
		}
		if t.Command && isForgetCommand(t.Text) {
			chats, err := e.app.store.ChannelChats(ctx, e.ref.Key())
			if err != nil {
				return "", notes, err
			}
			if len(chats) < 2 {
				return "", notes, errors.New("eval: /forget previous needs an earlier chat (/new first)")
			}
			t.Text = "/forget " + chats[1].ID
			// Let the ended chat's recap and consolidation land first, as
			// they would have by the time a person forgets it.
			if err := e.settle(ctx); err != nil {
				return "", notes, err
			}
		}
		if strings.HasPrefix(t.Text, "/new") {
			facts = nil // facts of an ended chat need no compaction
		}
		reply, err := e.send(ctx, t.Text)
		if err != nil {
			return "", notes, err
		}
		if t.Fact {
			facts = append(facts, t.Text)
		}
		if t.Line != "" && !strings.Contains(eval.Normalize(reply), eval.Normalize(t.Line)) {
			notes = append(notes, "the character did not say the line it was asked to")
		}
	}
	e.stage = "finishing the memory work the story left owed"
	if err := e.settle(ctx); err != nil {
		return "", notes, err
	}
	notes = append(notes, e.failedJobs(ctx)...)
	uncovered, err := e.uncoveredFacts(ctx, facts)
	if err != nil {
		return "", notes, err
	}
	if uncovered > 0 {
		notes = append(notes, fmt.Sprintf("%d planted fact(s) still verbatim in the prompt: the story is too short for the compaction settings", uncovered))
	}
	e.stage = "asking the question"
	reply, err := e.send(ctx, e.c.Ask)
	return reply, notes, err
}

// settleRounds bounds how often settle asks the sweeper for owed work.
const settleRounds = 5

// settle waits until the memory jobs the story left owed are done. An empty
// queue is not enough: the queue's depth is read one queue at a time, so a
// job that moves work from one queue to another (a recap enqueueing its
// consolidation) can slip between the reads. So it also asks the sweeper,
// which re-derives owed work from the database, and waits again while
// there is some.
func (e *evalCase) settle(ctx context.Context) error {
	for range settleRounds {
		if err := e.app.queue.Drain(ctx, evalDrainTimeout); err != nil {
			return err
		}
		n, err := e.worker.Sweep(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return fmt.Errorf("eval: memory work still owed after %d rounds", settleRounds)
}

// idle lets the current chat rest: its recap is brought up to date now,
// as memory.idle_recap would after a pause, and every memory job owed is
// done (the consolidation the recap enqueues included).
func (e *evalCase) idle(ctx context.Context) error {
	defer func(stage string) { e.stage = stage }(e.stage)
	e.stage = "finishing the memory work of a pause in the story"
	chats, err := e.app.store.ChannelChats(ctx, e.ref.Key())
	if err != nil {
		return err
	}
	if len(chats) == 0 {
		return errors.New("eval: idle before any chat")
	}
	if err := e.settle(ctx); err != nil {
		return err
	}
	if err := e.app.queue.RecapNow(ctx, chats[0].ID); err != nil {
		return err
	}
	return e.settle(ctx)
}

// failedJobs lists the memory jobs whose last run failed or was rejected,
// as notes: a case that lost a fact to a failed write says so.
func (e *evalCase) failedJobs(ctx context.Context) []string {
	var recs []models.JobRecord
	if err := e.app.store.DB().WithContext(ctx).Where("outcome NOT IN ?", []string{"written", "skipped"}).Find(&recs).Error; err != nil {
		return []string{"job records: " + err.Error()}
	}
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("memory job %s %s: %s", r.Kind, r.Outcome, r.Reason))
	}
	return out
}

func isForgetCommand(text string) bool {
	return strings.TrimSpace(text) == "/forget previous"
}

// uncoveredFacts counts the planted facts of the current chat that no
// summary covers yet.
func (e *evalCase) uncoveredFacts(ctx context.Context, facts []string) (int, error) {
	if len(facts) == 0 {
		return 0, nil
	}
	chats, err := e.app.store.ChannelChats(ctx, e.ref.Key())
	if err != nil || len(chats) == 0 {
		return 0, err
	}
	sums, err := e.app.store.ChatSummaries(ctx, chats[0].ID)
	if err != nil {
		return 0, err
	}
	through := ""
	for _, s := range sums {
		through = max(through, s.CoversThroughID)
	}
	n := 0
	for _, f := range facts {
		var m models.Message
		err := e.app.store.DB().WithContext(ctx).Where("chat_id = ? AND content = ?", chats[0].ID, f).Order("id").Take(&m).Error
		if err != nil || m.ID > through {
			n++
		}
	}
	return n, nil
}

func (e *evalCase) inbound(text string) bot.Inbound {
	e.seq++
	return bot.Inbound{Channel: e.ref, AuthorID: e.user, AuthorName: e.user, Text: text, CanManage: true,
		MessageID: fmt.Sprintf("eval-%d", e.seq), Received: time.Now()}
}

// send says text (or runs it as a command, confirming what it asks) and
// returns the character's reply.
func (e *evalCase) send(ctx context.Context, said string) (string, error) {
	sink := &evalSink{}
	in := e.inbound(said)
	var err error
	if cmd, ok := bot.ParseCommand(said); ok {
		err = e.app.pipeline.Exec(ctx, in, cmd, sink)
		if err == nil && sink.token != "" {
			err = e.app.pipeline.Answer(ctx, e.inbound("yes"), sink.token, true, sink)
		}
		return sink.reply, err
	}
	if err = e.app.pipeline.Submit(ctx, bot.Event{In: in}, sink).Wait(ctx); err != nil {
		return "", err
	}
	if sink.reply == "" {
		return "", fmt.Errorf("eval: no reply to %q: %s", text.Clip(said, 40), strings.Join(sink.notices, "; "))
	}
	return sink.reply, nil
}

// judgeReply asks the scribe model to grade the reply with the rubric.
func (e *evalCase) judgeReply(ctx context.Context, reply string) (float64, error) {
	sm := e.cfg.ScribeModel()
	client := llm.New(llm.Config{BaseURL: sm.BaseURL, APIKey: sm.APIKey.Value(), Model: sm.Name, Temperature: 0,
		MaxTokens: sm.MaxReplyTokens, Timeout: sm.Timeout, MaxRetries: retries(sm.MaxRetries)}, slog.New(e.tokens))
	var req bot.ModelRequest
	for _, m := range eval.JudgePrompt(e.c, reply) {
		req.Messages = append(req.Messages, bot.PromptMessage{Role: bot.Role(m.Role), Content: m.Content})
	}
	res, err := client.Complete(ctx, req)
	if err != nil {
		return 0, err
	}
	return eval.ParseVerdict(res.Text)
}

// evalSink keeps what the pipeline says to the player.
type evalSink struct {
	reply   string
	notices []string
	token   string
}

var (
	_ bot.Sink      = (*evalSink)(nil)
	_ bot.Confirmer = (*evalSink)(nil)
)

func (*evalSink) Typing(context.Context)               {}
func (*evalSink) Update(context.Context, string) error { return nil }
func (s *evalSink) Finish(_ context.Context, text string) error {
	s.reply = text
	return nil
}
func (s *evalSink) Notice(_ context.Context, text string) error {
	s.notices = append(s.notices, text)
	return nil
}
func (s *evalSink) Confirm(_ context.Context, _, token string, _ time.Time) error {
	s.token = token
	return nil
}

// tokenTap is a log handler that counts the tokens of the model calls the
// llm client reports ("model call done": streamed calls are the
// character's, whole completions the scribe's and the judge's) and passes
// every record its next handler wants on.
type tokenTap struct {
	next          slog.Handler
	mu            *sync.Mutex
	model, scribe *eval.Tokens
}

func newTokenTap(next slog.Handler) *tokenTap {
	return &tokenTap{next: next, mu: &sync.Mutex{}, model: &eval.Tokens{}, scribe: &eval.Tokens{}}
}

func (t *tokenTap) totals() (eval.Tokens, eval.Tokens) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.model, *t.scribe
}

func (t *tokenTap) Enabled(ctx context.Context, l slog.Level) bool {
	return l == slog.LevelDebug || t.next.Enabled(ctx, l)
}

func (t *tokenTap) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "model call done" {
		var tok eval.Tokens
		op := ""
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "op":
				op = a.Value.String()
			case "prompt_tokens":
				tok.Prompt = int(a.Value.Int64())
			case "completion_tokens":
				tok.Completion = int(a.Value.Int64())
			}
			return true
		})
		tok.Calls = 1
		t.mu.Lock()
		if op == "stream" {
			t.model.Add(tok)
		} else {
			t.scribe.Add(tok)
		}
		t.mu.Unlock()
	}
	if t.next.Enabled(ctx, r.Level) {
		return t.next.Handle(ctx, r)
	}
	return nil
}

func (t *tokenTap) WithAttrs(as []slog.Attr) slog.Handler {
	return &tokenTap{next: t.next.WithAttrs(as), mu: t.mu, model: t.model, scribe: t.scribe}
}

func (t *tokenTap) WithGroup(name string) slog.Handler {
	return &tokenTap{next: t.next.WithGroup(name), mu: t.mu, model: t.model, scribe: t.scribe}
}
