package bot

import (
	"context"
	"time"

	"troupe/memory"
	"troupe/models"
)

// Store is what bot needs from the store, grouped by concern; *models.Store
// implements it. Not-found errors wrap models.ErrNotFound.
type Store interface {
	// Spaces and channels: where a message comes from, the card bound to
	// it and its settings.
	EnsureSpace(ctx context.Context, sp models.Space) error
	Channel(ctx context.Context, id string) (models.Channel, error)
	CreateChannel(ctx context.Context, ch models.Channel) (models.Channel, error)
	EnsureChannel(ctx context.Context, ch models.Channel) (models.Channel, error)
	MoveChannel(ctx context.Context, id, spaceID string) (ended string, moved bool, err error)
	SetChannelCard(ctx context.Context, channelID, cardID string) error
	SetChannelMentionOnly(ctx context.Context, channelID string, on bool) error
	ChannelVoice(ctx context.Context, channelID string) (bool, error)
	SetChannelVoice(ctx context.Context, channelID string, on bool) error
	// TurnState reads in one query what a turn starts from.
	TurnState(ctx context.Context, channelID, userKey string) (models.TurnState, error)

	// Chats, their casts and their messages.
	UpsertCard(ctx context.Context, c models.Card) error
	StartScene(ctx context.Context, cs models.ChatStart) (models.Chat, []models.CastMember, error)
	ReopenEmptyChat(ctx context.Context, channelID, spaceID string, cardIDs []string) (models.Chat, []models.CastMember, error)
	Chat(ctx context.Context, id string) (models.Chat, error)
	ChannelChats(ctx context.Context, channelID string) ([]models.Chat, error)
	Cast(ctx context.Context, chatID string, withRemoved bool) ([]models.CastMember, error)
	AddCast(ctx context.Context, chatID, cardID, name string, max int) (models.CastMember, error)
	RemoveCast(ctx context.Context, chatID, name string) error
	SetAway(ctx context.Context, chatID, name string, away bool) error
	Message(ctx context.Context, id string) (models.Message, error)
	LoadBranch(ctx context.Context, headID string) (models.Branch, error)
	LoadView(ctx context.Context, headID, character string) (models.Branch, error)
	Append(ctx context.Context, chatID, expectHead, parentID string, msgs []*models.Message) error
	AppendTurn(ctx context.Context, chatID, expectHead, parentID string, msgs []*models.Message, rec *models.TurnRecord) error
	AppendRefused(ctx context.Context, chatID, parentID string, m *models.Message) error
	// Alternatives and MoveHead are /swipe's.
	Alternatives(ctx context.Context, m models.Message) ([]models.Message, error)
	MoveHead(ctx context.Context, chatID, expectHead, to string) error
	// Tombstone is what /forget left of a chat.
	Tombstone(ctx context.Context, chatID string) (models.Tombstone, error)

	// The inbox: messages stored before their turn, so none is lost.
	Accept(ctx context.Context, m *models.InboxMessage) (bool, error)
	ReviseInbox(ctx context.Context, dedupKey, authorID, text string) (bool, error)
	Inbox(ctx context.Context, channelID string) ([]models.InboxMessage, error)
	ConsumeTurn(ctx context.Context, chatID, expectHead string, msgs []*models.Message, inboxIDs []string, rec *models.TurnRecord) error
	DropInbox(ctx context.Context, ids []string) error
	SeenDedupKeys(ctx context.Context, keys []string) (map[string]bool, error)
	InboxChannels(ctx context.Context, platform string, before time.Time) ([]models.InboxMessage, error)
	UnansweredChannels(ctx context.Context, platform string, since time.Time) ([]models.Unanswered, error)

	// Players: personas and who wrote in a chat.
	Persona(ctx context.Context, userKey string) (models.Persona, error)
	SetPersona(ctx context.Context, p models.Persona) error
	Personas(ctx context.Context, userKeys []string) (map[string]models.Persona, error)
	ChatAuthors(ctx context.Context, chatID string) ([]models.Author, error)
	PresentAt(ctx context.Context, messageID string) ([]string, error)

	// Memory a turn reads and /memory shows.
	Resident(ctx context.Context, cardID, spaceID string) (string, error)
	ActiveSummaries(ctx context.Context, chat models.Chat) ([]models.SummaryView, error)
	Beliefs(ctx context.Context, spaceID, character string) ([]models.BeliefView, error)
	ChatBeliefs(ctx context.Context, spaceID, chatID string, characters []string) ([]models.BeliefView, error)
	DeleteBelief(ctx context.Context, id string) (models.Belief, error)

	// Recall: memory.FindRecall's search, and what a turn kept and noted.
	memory.RecallStore
	NoteRecall(ctx context.Context, d models.RecallDone) error
	RecallDiagnostics(ctx context.Context, chatID, messageID string, limit int) ([]models.RecallDiagnostic, error)
	KeepRecall(ctx context.Context, k models.RecallKept, items []string) error
	KeptRecalls(ctx context.Context, chatID, character string, messageIDs []string) ([]models.RecallKept, error)

	// The recorder: what characters perceived and know.
	UnrecordedTurns(ctx context.Context, chatID string, atMost int) (int, error)
	RecordCounts(ctx context.Context, chatID string) (models.RecordCounts, error)
	Scene(ctx context.Context, spaceID, chatID, character string) (models.SceneKnowledge, error)
	ViewLedgers(ctx context.Context, chatID string) (map[string]string, error)
	EnsureLore(ctx context.Context, spaceID string, lore []models.Entity) error
	KnownLore(ctx context.Context, spaceID, character string) ([]string, error)

	// Lorebook state of a chat, prompt traces for the inspector, and an
	// adapter's durable state (Engine.AdapterState).
	ChatLoreState(ctx context.Context, chatID string) (string, error)
	PutChatLoreState(ctx context.Context, chatID, state string) error
	RecordPromptTrace(ctx context.Context, w models.PromptTraceWrite) error
	Setting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error
}
