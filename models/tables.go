package models

import "time"

// Card is a character definition from the card library.
type Card struct {
	ID        string `gorm:"primaryKey;size:64"`
	Name      string `gorm:"size:200;not null"`
	Language  string `gorm:"size:8"`
	Data      string `gorm:"type:text;not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Space is who a card's cross-chat memory belongs to: a Discord guild, a user
// in direct messages, or the local console user.
type Space struct {
	ID         string `gorm:"primaryKey;size:128"`
	Platform   string `gorm:"size:16;not null"`
	Kind       string `gorm:"size:16;not null"`
	ExternalID string `gorm:"size:64;not null"`
	CreatedAt  time.Time
}

// Channel is a platform conversation: a Discord channel or thread, a Telegram
// chat, a console session. It has one current chat.
type Channel struct {
	ID            string `gorm:"primaryKey;size:128"`
	Platform      string `gorm:"size:16;not null"`
	ExternalID    string `gorm:"size:64;not null"`
	SpaceID       string `gorm:"size:128;not null;index"`
	CardID        string `gorm:"size:64"`
	CurrentChatID string `gorm:"size:26"`
	MentionOnly   bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Chat is one play-through of a card in a channel.
type Chat struct {
	ID        string `gorm:"primaryKey;size:26"`
	ChannelID string `gorm:"size:128;not null;index"`
	CardID    string `gorm:"size:64;not null;index:idx_chat_card_space"`
	SpaceID   string `gorm:"size:128;not null;index:idx_chat_card_space"`
	Name      string `gorm:"size:200"`
	HeadID    string `gorm:"size:26"`
	CreatedAt time.Time
	// ActiveAt is the time of the last stored message.
	ActiveAt time.Time `gorm:"index"`
}

// Message is one immutable message of a chat's tree; ParentID links it to the
// message before it on its branch.
type Message struct {
	ID               string  `gorm:"primaryKey;size:26"`
	ChatID           string  `gorm:"size:26;not null;index:idx_msg_chat_id,priority:1"`
	ParentID         string  `gorm:"size:26;index"`
	Role             string  `gorm:"size:16;not null"`
	AuthorID         string  `gorm:"size:64"`
	AuthorName       string  `gorm:"size:200"`
	Content          string  `gorm:"type:text;not null"`
	DedupKey         *string `gorm:"size:200;uniqueIndex"`
	PromptTokens     int
	CompletionTokens int
	// Refused marks a user message no prompt could hold: it is kept in the
	// tree for the record, off every branch, and never sent to the model.
	Refused bool `gorm:"not null;default:false"`
	// SpeakerCardID is the cast member who wrote an assistant message; ""
	// (older rows) means the chat's card.
	SpeakerCardID string `gorm:"size:64;not null;default:''"`
	// WhisperTo names the character a whispered user line was for; only
	// it and the writer perceived the message. "" otherwise.
	WhisperTo string `gorm:"size:200;not null;default:''"`
	CreatedAt time.Time
}

// Summary is a chat's rolling relay summary, covering its branch up to and
// including CoversThroughID.
type Summary struct {
	ID              string `gorm:"primaryKey;size:26"`
	ChatID          string `gorm:"size:26;not null;index"`
	CoversThroughID string `gorm:"size:26;not null;index"`
	Content         string `gorm:"type:text;not null"`
	Beats           int
	CreatedAt       time.Time
}

// Recap is what a later chat of the same card and space should know of a chat.
//
// Each cast card keeps its own recap of a chat (what it perceived), so the
// key is the pair.
type Recap struct {
	ChatID      string `gorm:"primaryKey;size:26"`
	CardID      string `gorm:"primaryKey;size:64;index:idx_recap_card_space"`
	SpaceID     string `gorm:"size:128;not null;index:idx_recap_card_space"`
	ChatName    string `gorm:"size:200"`
	Content     string `gorm:"type:text;not null"`
	Hash        string `gorm:"size:64;not null"`
	Fingerprint string `gorm:"size:64;not null"`
	// Covers is the id of the last message the recap was written from
	// (the chat's head; in a scene, the last message of the card's view,
	// else the message its summary covers through): the identity of what
	// it covers, taken from the stored branch, never from the model. A
	// recap whose Covers a /regen took off the chat's branch is neither
	// merged nor built on. "" for recaps written before it was kept.
	Covers    string `gorm:"size:26;not null;default:''"`
	UpdatedAt time.Time
}

// ManifestEntry records, per chat of a card and space, the hash of its recap
// and the hash last merged into the handbook.
type ManifestEntry struct {
	CardID     string `gorm:"primaryKey;size:64"`
	SpaceID    string `gorm:"primaryKey;size:128"`
	ChatID     string `gorm:"primaryKey;size:26"`
	ChatName   string `gorm:"size:200"`
	RecapHash  string `gorm:"size:64"`
	MergedHash string `gorm:"size:64"`
	UpdatedAt  time.Time
}

// Handbook is a card's consolidated cross-chat memory in a space.
type Handbook struct {
	CardID  string `gorm:"primaryKey;size:64"`
	SpaceID string `gorm:"primaryKey;size:128"`
	Content string `gorm:"type:text;not null"`
	// HandLines holds the HandLineHash of each line of Content a person
	// wrote at the last hard-path edit, one a line (see handlines.go).
	HandLines string `gorm:"type:text;not null;default:''"`
	UpdatedAt time.Time
}

// ResidentSummary is the short memory injected on every turn of a card in a space.
type ResidentSummary struct {
	CardID  string `gorm:"primaryKey;size:64"`
	SpaceID string `gorm:"primaryKey;size:128"`
	Content string `gorm:"type:text;not null"`
	// HandLines is as in Handbook.
	HandLines string `gorm:"type:text;not null;default:''"`
	UpdatedAt time.Time
}

// MemoryHistory keeps replaced handbooks and resident summaries.
type MemoryHistory struct {
	ID        string `gorm:"primaryKey;size:26"`
	CardID    string `gorm:"size:64;not null;index:idx_hist_card_space"`
	SpaceID   string `gorm:"size:128;not null;index:idx_hist_card_space"`
	Kind      string `gorm:"size:16;not null"`
	Content   string `gorm:"type:text;not null"`
	Reason    string `gorm:"size:200"`
	CreatedAt time.Time
}

// Ledger is a chat's state snapshot (time, place, characters, inventory, flags,
// plot threads, roster) as JSON.
type Ledger struct {
	ChatID    string `gorm:"primaryKey;size:26"`
	Snapshot  string `gorm:"type:text;not null"`
	UpdatedAt time.Time
}

// MemoryChunk is archived story text with its embedding, for recall.
type MemoryChunk struct {
	ID        string `gorm:"primaryKey;size:26"`
	ChatID    string `gorm:"size:26;not null;index"`
	ThroughID string `gorm:"size:26;not null"`
	Content   string `gorm:"type:text;not null"`
	Embedding []byte
	CreatedAt time.Time
}

// Tombstone marks a forgotten chat so the manifest can see the deletion.
type Tombstone struct {
	ChatID    string `gorm:"primaryKey;size:26"`
	CardID    string `gorm:"size:64;not null"`
	SpaceID   string `gorm:"size:128;not null"`
	DeletedAt time.Time
	// Cards, as ForgetChat returns it, lists every card the chat cast (its
	// own first), whose memory in the space the forget purged; not stored.
	Cards []string `gorm:"-"`
}

// JobRecord is the last outcome of a memory job for one key: what was written,
// why it was skipped, or why it failed.
type JobRecord struct {
	Kind    string `gorm:"primaryKey;size:32"`
	Key     string `gorm:"primaryKey;size:200"`
	Outcome string `gorm:"size:16;not null"`
	Reason  string `gorm:"type:text"`
	// Product is as long as a key can be: a consolidation's names its
	// card and space.
	Product   string `gorm:"size:200"`
	Failures  int
	UpdatedAt time.Time
	// RetryAt is when the worker tries a failed job again; nil when no
	// retry is set (the next turn or sweep runs it).
	RetryAt *time.Time
}

// Persona is how a user wants to be named and described in prompts.
type Persona struct {
	UserKey     string `gorm:"primaryKey;size:128"`
	Name        string `gorm:"size:100"`
	Description string `gorm:"type:text"`
	UpdatedAt   time.Time
}

// Setting is a small durable value, such as an adapter's last handled update.
type Setting struct {
	Key       string `gorm:"primaryKey;size:128"`
	Value     string `gorm:"type:text"`
	UpdatedAt time.Time
}

// All lists every table, in migration order.
func All() []any {
	return append([]any{
		&Card{}, &Space{}, &Channel{}, &Chat{}, &Message{}, &Summary{}, &Recap{},
		&ManifestEntry{}, &Handbook{}, &ResidentSummary{}, &MemoryHistory{}, &Ledger{}, &LedgerView{},
		&MemoryChunk{}, &Tombstone{}, &JobRecord{}, &Persona{}, &Setting{}, &InboxMessage{}, &ChatLore{}, &CastMember{}, &SummaryMember{},
	}, append(append(append(append(recordTables(), beliefTables()...), recallTables()...), vectorTables()...), reorganizeTables()...)...)
}
