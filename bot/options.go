package bot

import (
	"context"
	"log/slog"
	"time"

	"troupe/cards"
	"troupe/config"
	"troupe/memory"
	"troupe/models"
	"troupe/prompt"
)

// Jobs is what the pipeline tells the job queue after it changes a chat.
type Jobs interface {
	// AfterTurn is called after a reply is stored.
	AfterTurn(ctx context.Context, t TurnDone) error
	// ChatEnded is called when /new, /card set, /start of another card or
	// a move to another space takes a channel off a chat: its recap is owed
	// now, and its last turn, which the recorder held back for /regen, is
	// recordable (the recap job records first).
	ChatEnded(ctx context.Context, chatID string) error
	// MemoryChanged is called when /forget or a hand edit changed a card's
	// memory in a space: its consolidation is owed.
	MemoryChanged(ctx context.Context, cardID, spaceID string) error
}

// TurnDone describes a finished turn for the job queue.
type TurnDone struct {
	ChatID  string
	CardID  string
	SpaceID string
	// CompactionDue is true when the compaction trigger holds.
	CompactionDue bool
	// Urgent is true when the prompt had to drop uncovered turns to fit.
	Urgent bool
}

// MemoryService is the memory work turns and commands run directly.
type MemoryService interface {
	Compact(ctx context.Context, chatID string, manual bool) (memory.Result, error)
	// FitResident returns a stored resident summary as injected, fitted to
	// what others characters leave of the envelope.
	FitResident(lang, stored string, others int) string
	ForgetChat(ctx context.Context, chatID string) (memory.Forgotten, error)
	Report(ctx context.Context, cardID, spaceID string) (memory.Report, error)
	// ChatReport is Report narrowed to what one chat's prompts may hold,
	// its resident fitted to what others characters leave.
	ChatReport(ctx context.Context, cardID, spaceID, chatID string, others int) (memory.Report, error)
	DeleteRecap(ctx context.Context, chatID, cardID string) ([]models.MemoryKey, error)
}

// Options configures a Pipeline.
type Options struct {
	Store        Store
	Cards        *cards.Library
	Model        Model
	Jobs         Jobs
	Tokens       TokenCounter
	MemoryConfig config.Memory
	// Recorder: whether turns record their plain events, and the batch.
	Recorder config.Recorder
	// Scene bounds chats with several characters.
	Scene config.Scene
	// Recall: what the speaking character brings back each turn.
	Recall config.Recall
	// RecallVectors and Reranker, when set, add recall's vector source
	// (recall.embeddings) and its rerank (recall.rerank).
	RecallVectors *memory.Vectors
	Reranker      memory.Reranker
	// RecallDelay, when set, runs before each recall: a test holds recall
	// up with it to see the time cap leave the block out.
	RecallDelay func(ctx context.Context)
	// Memory runs memory work that a command asks for directly (/compact).
	Memory   MemoryService
	Language string
	// ContextWindow and MaxReplyTokens bound the prompt.
	ContextWindow  int
	MaxReplyTokens int
	Logger         *slog.Logger
	Now            func() time.Time
	// Observer receives metrics; nil observes nothing.
	Observer Observer
	// Locker serializes a channel's turns across processes; nil relies on
	// the in-process lanes alone (one serve process).
	Locker Locker
	// Limits bound what one user can ask, and the model's tokens.
	Limits Limits
	// NewByAnyone lets every member of a group end its shared chat with
	// /new (groups.new_needs_manager: false); by default only those who
	// may manage the channel can.
	NewByAnyone bool
	// Questions keeps open yes/no questions where every process can
	// answer them; nil keeps them in this process.
	Questions Questions
	// LoreConfig bounds what lorebooks add to a prompt.
	LoreConfig config.Lore
	// Worlds are the world-info files cards name (extensions.world).
	Worlds *cards.Worlds
	// Lore are books attached to every chat this pipeline serves (the
	// console's --lore).
	Lore []*cards.Book
	// Rand returns numbers in [0, 1) for lore probabilities and random
	// macros; nil uses math/rand/v2.
	Rand func() float64
	// ConcurrentTurns bounds how many turns do the pipeline's own work at
	// once (the model calls are not bounded); 0 means one per CPU.
	ConcurrentTurns int
	// PromptTraces is how many of a chat's latest replies keep the prompt
	// they were built from, for the web inspector (config web.prompts,
	// when web.token is set); 0 keeps none and computes none.
	PromptTraces int
	// ModelName names the chat model in the traces.
	ModelName string
	// InboxSweep is how often, once an adapter called Resume, the pipeline
	// looks for messages left in the inbox by a process that died while
	// this one kept running; 0 means every minute.
	InboxSweep time.Duration
	// Voicer speaks the replies of channels that turned /voice on (tts);
	// nil speaks none. Voice is the voice of cards that name none in their
	// extensions (tts.voice).
	Voicer Voicer
	Voice  string
	// Painter draws /picture's pictures (image); nil draws none.
	Painter Painter
	// Vision: Model sees pictures, each captioned once by CaptionModel
	// (nil: Model). Transcriber hears voice notes (nil: none). Media
	// bounds what players send and says what is kept (media_in.go).
	Vision       bool
	CaptionModel Model
	Transcriber  Transcriber
	Media        MediaOptions
}

// Locker hands out locks shared by every troupe process.
type Locker interface {
	// Lock waits for the lock on key and returns its release.
	Lock(ctx context.Context, key string) (func(), error)
}

// TokenCounter estimates the prompt tokens of a message list for a chat,
// and learns from the counts the API reports.
type TokenCounter interface {
	Estimate(key string, msgs []prompt.Message) int
	// Precise is slower and closer; used near the limit.
	Precise(key string, msgs []prompt.Message) int
	Observe(key string, estimated, actual int)
}
