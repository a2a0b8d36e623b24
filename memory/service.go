package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"troupe/config"
	"troupe/models"
	"troupe/prompt"
	"troupe/usage"
)

// Scribe is the side model that writes summaries, recaps and handbooks.
type Scribe interface {
	Complete(ctx context.Context, msgs []prompt.Message) (string, error)
}

// Outcome is what a memory job did.
type Outcome string

// The outcomes of a memory job.
const (
	Written Outcome = "written"
	Skipped Outcome = "skipped"
	Failed  Outcome = "failed"
)

// Result is a memory job's checkable product: the row written, or why not.
type Result struct {
	Outcome Outcome
	// Product is the id of the written row.
	Product string
	Reason  string
}

// RejectedError is a scribe answer that failed validation twice; retrying
// at once will not help, the work stays owed for the sweeper.
type RejectedError struct {
	Kind   string
	Reason string
}

func (e *RejectedError) Error() string {
	return "memory: " + e.Kind + ": scribe output rejected twice: " + e.Reason
}

// ReasonForgotten: the chat was forgotten while the scribe wrote; nothing
// is owed for it any more.
const ReasonForgotten = "chat was forgotten while the scribe wrote"

// ErrStaleRetries: the chat kept moving while the scribe wrote.
var ErrStaleRetries = errors.New("memory: the chat kept changing while the scribe wrote; try later")

// Config holds the memory constants. Build it with ConfigFrom: memory
// reads every value as given, zero included.
type Config struct {
	Compact          CompactParams
	ResidentMaxChars int
	EnvelopeChars    int
	MinUsefulChars   int
	RecapMaxChars    int
	Language         string
	// Reflect is reflection.*; the zero value runs reflection only when
	// asked (/reflect).
	Reflect ReflectConfig
	// Fading is memory.fading: on, the recorder may write partial and
	// mistaken perceptions (details fade anyway); off, it is asked for
	// accurate ones only.
	Fading bool
	// ContextWindow is the scribe's context window in tokens and
	// AnswerTokens the room its answer needs (scribe.max_reply_tokens);
	// 0 takes DefaultScribeWindow and 4096.
	ContextWindow int
	AnswerTokens  int
	// BatchTokens is memory.batch_tokens: the most material (transcript,
	// events, recaps) one side-model call carries; 0 takes
	// DefaultBatchTokens.
	BatchTokens int
	// FadingRules are memory.fading and memory.folded_fade, by which a
	// reorganize folds perceptions to their gist.
	FadingRules FadingRules
	// Reorganize holds the reorganize's budgets and triggers.
	Reorganize ReorganizeParams
}

// ConfigFrom returns the memory constants of m, with language the one
// used for cards that name none. Nothing is defaulted here: config.Default
// holds the defaults, and a zero in the file means zero (min_useful_chars:
// 0 never leaves the resident summary out for being short).
func ConfigFrom(m config.Memory, language string) Config {
	return Config{
		Compact:          CompactParams{Keep: m.Keep, Period: m.Period, MinCutChars: m.MinCutChars, ManualMinCutChars: m.ManualMinCutChars},
		ResidentMaxChars: m.ResidentMaxChars,
		EnvelopeChars:    m.EnvelopeChars,
		MinUsefulChars:   m.MinUsefulChars,
		RecapMaxChars:    m.RecapMaxChars,
		Language:         language,
		Fading:           m.Fading,
		BatchTokens:      m.BatchTokens,
		FadingRules:      FadingRules{On: m.Fading, FoldedFade: m.FoldedFade},
		Reorganize: ReorganizeParams{HandbookMaxChars: m.HandbookMaxChars, BeliefsMax: m.BeliefsMax,
			Batches: m.ReorganizeBatches, Tokens: m.ReorganizeTokens},
	}
}

// Budget is the per-turn injection envelope of c.
func (c Config) Budget() prompt.Budget {
	return prompt.Budget{ResidentMax: c.ResidentMaxChars, Envelope: c.EnvelopeChars, MinUseful: c.MinUsefulChars}
}

// Store is what the memory service reads and writes; *models.Store
// satisfies it. Each install validates nothing itself: the service
// validates the scribe's output first, and the store writes it in one
// transaction with its bookkeeping.
type Store interface {
	Card(ctx context.Context, id string) (models.Card, error)
	Chat(ctx context.Context, id string) (models.Chat, error)
	LoadBranch(ctx context.Context, headID string) (models.Branch, error)
	LoadView(ctx context.Context, headID, character string) (models.Branch, error)
	OnBranch(ctx context.Context, headID, id string) (bool, error)
	Cast(ctx context.Context, chatID string, withRemoved bool) ([]models.CastMember, error)
	InstallViews(ctx context.Context, chatID, coversThroughID string, vs []models.ViewSummary) ([]models.Summary, error)
	CardRecap(ctx context.Context, chatID, cardID string) (models.Recap, error)
	Ledger(ctx context.Context, chatID string) (string, error)
	ViewLedgers(ctx context.Context, chatID string) (map[string]string, error)
	InstallSummary(ctx context.Context, chatID, prevSummaryID, coversThroughID, content string, beats int) (models.Summary, error)
	Recap(ctx context.Context, chatID string) (models.Recap, error)
	InstallRecap(ctx context.Context, r models.Recap) error
	RewriteRecap(ctx context.Context, r models.Recap, discarded string) (bool, error)
	DeleteRecap(ctx context.Context, chatID, cardID string) ([]models.MemoryKey, error)
	LoadMemory(ctx context.Context, cardID, spaceID string) (models.MemoryState, error)
	HandbookTime(ctx context.Context, cardID, spaceID string) (time.Time, error)
	InstallConsolidation(ctx context.Context, c models.Consolidation) error
	ForgetChat(ctx context.Context, chatID string) (models.Tombstone, error)
	RecordJob(ctx context.Context, r models.JobRecord) error
	FailingJobs(ctx context.Context, cardID, spaceID, spaceKey string) ([]models.JobRecord, error)
}

// Service runs memory jobs against the store and the scribe.
type Service struct {
	store  Store
	scribe Scribe
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	// locker and local serialize the reflections of a space (UseLocker).
	locker Locker
	local  localLocks
	// vectors, when set, writes item vectors (UseVectors).
	vectors    *Vectors
	oweVectors func(ctx context.Context, chatID string) error
	// ceiling is the most prompt tokens the scribe's endpoint has been
	// seen to take: half the last prompt it refused as too long (0: none).
	ceiling atomic.Int64
	// forgetFiles, when set, removes what a forgotten chat kept outside
	// the store (UseForgetFiles).
	forgetFiles func(chatID string) error
}

// NewService returns a memory service.
func NewService(store Store, scribe Scribe, cfg Config, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Reflect = cfg.Reflect.orDefaults()
	return &Service{store: store, scribe: scribe, cfg: cfg, log: log.With("component", "memory"), now: time.Now}
}

// Job kinds, as recorded in the job table.
const (
	KindCompact     = "compact"
	KindRecap       = "recap"
	KindConsolidate = "consolidate"
)

// record finishes a memory job: a failure becomes a Failed result whose
// reason is its Fault (never what a provider said), and the result is
// written to the job table and the log.
func (s *Service) record(ctx context.Context, kind, key string, res Result, err error) (Result, error) {
	if err != nil {
		res = Result{Outcome: Failed, Reason: FaultOf(err).String()}
	}
	if rerr := s.store.RecordJob(ctx, models.JobRecord{Kind: kind, Key: key, Outcome: string(res.Outcome), Reason: res.Reason, Product: res.Product}); rerr != nil {
		s.log.Error("record job outcome", "kind", kind, "key", key, "err", rerr)
	}
	if err != nil {
		s.logFailure("memory job failed", err, "kind", kind, "key", key)
	} else {
		s.log.Info("memory job", "kind", kind, "key", key, "outcome", res.Outcome, "product", res.Product, "reason", res.Reason)
	}
	return res, err
}

// ask calls the scribe and validates its answer; one repair call follows a
// rejected answer. It returns the cleaned answer or a *RejectedError.
func (s *Service) ask(ctx context.Context, kind, lang string, msgs []prompt.Message, validate func(string) (string, error)) (string, error) {
	ctx = usage.WithKind(ctx, kind)
	answer, err := s.complete(ctx, msgs)
	if err != nil {
		return "", fmt.Errorf("memory: %s: scribe: %w", kind, err)
	}
	clean, verr := validate(answer)
	if verr == nil {
		return clean, nil
	}
	s.log.Warn("scribe output rejected; asking for a repair", "kind", kind, "reason", verr.Error())
	answer, err = s.complete(ctx, RepairPrompt(lang, msgs, answer, verr))
	if err != nil {
		return "", fmt.Errorf("memory: %s: scribe repair: %w", kind, err)
	}
	clean, verr = validate(answer)
	if verr != nil {
		return "", &RejectedError{Kind: kind, Reason: verr.Error()}
	}
	return clean, nil
}

// cardLanguage returns the language of the card (else the configured one)
// and its character's name (the card's id when it cannot be read).
func (s *Service) cardLanguage(ctx context.Context, cardID string) (lang, charName string) {
	lang = s.cfg.Language
	card, err := s.store.Card(ctx, cardID)
	if err != nil {
		return langOr(lang), cardID
	}
	if card.Language != "" {
		lang = card.Language
	}
	return langOr(lang), card.Name
}

// FitResident returns a stored resident summary as injected: its tags
// stripped, rendered into what others characters leave of the envelope
// (prompt.RenderResident).
func (s *Service) FitResident(lang, stored string, others int) string {
	return prompt.RenderResident(lang, ResidentOf(stored), others, s.Budget()).Text
}

// Budget returns the injection budget.
func (s *Service) Budget() prompt.Budget { return s.cfg.Budget() }

// logFailure logs a failure at warning level by its Fault, and its whole
// text (credentials already cut out by the clients) at debug level: a
// provider's error text repeats on every turn while an endpoint fails.
func (s *Service) logFailure(msg string, err error, attrs ...any) {
	f := FaultOf(err)
	s.log.Warn(msg, append(attrs, "err_kind", f.Kind, "err", f.Detail)...)
	s.log.Debug(msg, append(attrs, "err", err)...)
}
