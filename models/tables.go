package models

import "time"

// Card is a character definition from the card library.
type Card struct {
	ID        string    `gorm:"primaryKey;size:64" json:"id"`
	Name      string    `gorm:"size:200;not null" json:"name"`
	Language  string    `gorm:"size:8" json:"language"`
	Data      string    `gorm:"type:text;not null" json:"data"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Space is who a card's cross-chat memory belongs to: a Discord guild, a user
// in direct messages, or the local console user.
type Space struct {
	ID         string    `gorm:"primaryKey;size:128" json:"id"`
	Platform   string    `gorm:"size:16;not null" json:"platform"`
	Kind       string    `gorm:"size:16;not null" json:"kind"`
	ExternalID string    `gorm:"size:64;not null" json:"external_id"`
	CreatedAt  time.Time `json:"created_at"`
}

// Channel is a platform conversation: a Discord channel or thread, a Telegram
// chat, a console session. It has one current chat.
type Channel struct {
	ID            string    `gorm:"primaryKey;size:128" json:"id"`
	Platform      string    `gorm:"size:16;not null" json:"platform"`
	ExternalID    string    `gorm:"size:64;not null" json:"external_id"`
	SpaceID       string    `gorm:"size:128;not null;index" json:"space_id"`
	CardID        string    `gorm:"size:64" json:"card_id"`
	CurrentChatID string    `gorm:"size:26" json:"current_chat_id"`
	MentionOnly   bool      `json:"mention_only"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`

	// Voice: replies are also sent spoken (/voice on).
	Voice bool `gorm:"not null;default:false" json:"voice"`
}

// Chat is one play-through of a card in a channel.
type Chat struct {
	ID        string    `gorm:"primaryKey;size:26" json:"id"`
	ChannelID string    `gorm:"size:128;not null;index" json:"channel_id"`
	CardID    string    `gorm:"size:64;not null;index:idx_chat_card_space" json:"card_id"`
	SpaceID   string    `gorm:"size:128;not null;index:idx_chat_card_space" json:"space_id"`
	Name      string    `gorm:"size:200" json:"name"`
	HeadID    string    `gorm:"size:26" json:"head_id"`
	CreatedAt time.Time `json:"created_at"`
	// ActiveAt is the time of the last stored message.
	ActiveAt time.Time `gorm:"index" json:"active_at"`
}

// Message is one immutable message of a chat's tree; ParentID links it to the
// message before it on its branch.
type Message struct {
	ID               string  `gorm:"primaryKey;size:26" json:"id"`
	ChatID           string  `gorm:"size:26;not null;index:idx_msg_chat_id,priority:1" json:"chat_id"`
	ParentID         string  `gorm:"size:26;index" json:"parent_id"`
	Role             string  `gorm:"size:16;not null" json:"role"`
	AuthorID         string  `gorm:"size:64" json:"author_id"`
	AuthorName       string  `gorm:"size:200" json:"author_name"`
	Content          string  `gorm:"type:text;not null" json:"content"`
	DedupKey         *string `gorm:"size:200;uniqueIndex" json:"dedup_key"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	// Refused marks a user message no prompt could hold: it is kept in the
	// tree for the record, off every branch, and never sent to the model.
	Refused bool `gorm:"not null;default:false" json:"refused"`
	// SpeakerCardID is the cast member who wrote an assistant message; ""
	// (older rows) means the chat's card.
	SpeakerCardID string `gorm:"size:64;not null;default:''" json:"speaker_card_id"`
	// WhisperTo names the character a whispered user line was for; only
	// it and the writer perceived the message. "" otherwise.
	WhisperTo string    `gorm:"size:200;not null;default:''" json:"whisper_to"`
	CreatedAt time.Time `json:"created_at"`
}

// Summary is a chat's rolling relay summary, covering its branch up to and
// including CoversThroughID.
type Summary struct {
	ID              string    `gorm:"primaryKey;size:26" json:"id"`
	ChatID          string    `gorm:"size:26;not null;index" json:"chat_id"`
	CoversThroughID string    `gorm:"size:26;not null;index" json:"covers_through_id"`
	Content         string    `gorm:"type:text;not null" json:"content"`
	Beats           int       `json:"beats"`
	CreatedAt       time.Time `json:"created_at"`
}

// Recap is what a later chat of the same card and space should know of a chat.
//
// Each cast card keeps its own recap of a chat (what it perceived), so the
// key is the pair.
type Recap struct {
	ChatID      string `gorm:"primaryKey;size:26" json:"chat_id"`
	CardID      string `gorm:"primaryKey;size:64;index:idx_recap_card_space" json:"card_id"`
	SpaceID     string `gorm:"size:128;not null;index:idx_recap_card_space" json:"space_id"`
	ChatName    string `gorm:"size:200" json:"chat_name"`
	Content     string `gorm:"type:text;not null" json:"content"`
	Hash        string `gorm:"size:64;not null" json:"hash"`
	Fingerprint string `gorm:"size:64;not null" json:"fingerprint"`
	// Covers is the id of the last message the recap was written from
	// (the chat's head; in a scene, the last message of the card's view,
	// else the message its summary covers through): the identity of what
	// it covers, taken from the stored branch, never from the model. A
	// recap whose Covers a /regen took off the chat's branch is neither
	// merged nor built on. "" for recaps written before it was kept.
	Covers    string    `gorm:"size:26;not null;default:''" json:"covers"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ManifestEntry records, per chat of a card and space, the hash of its recap
// and the hash last merged into the handbook.
type ManifestEntry struct {
	CardID     string    `gorm:"primaryKey;size:64" json:"card_id"`
	SpaceID    string    `gorm:"primaryKey;size:128" json:"space_id"`
	ChatID     string    `gorm:"primaryKey;size:26" json:"chat_id"`
	ChatName   string    `gorm:"size:200" json:"chat_name"`
	RecapHash  string    `gorm:"size:64" json:"recap_hash"`
	MergedHash string    `gorm:"size:64" json:"merged_hash"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Handbook is a card's consolidated cross-chat memory in a space.
type Handbook struct {
	CardID  string `gorm:"primaryKey;size:64" json:"card_id"`
	SpaceID string `gorm:"primaryKey;size:128" json:"space_id"`
	Content string `gorm:"type:text;not null" json:"content"`
	// HandLines holds the HandLineHash of each line of Content a person
	// wrote at the last hard-path edit, one a line (see handlines.go).
	HandLines string    `gorm:"type:text;not null;default:''" json:"hand_lines"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ResidentSummary is the short memory injected on every turn of a card in a space.
type ResidentSummary struct {
	CardID  string `gorm:"primaryKey;size:64" json:"card_id"`
	SpaceID string `gorm:"primaryKey;size:128" json:"space_id"`
	Content string `gorm:"type:text;not null" json:"content"`
	// HandLines is as in Handbook.
	HandLines string    `gorm:"type:text;not null;default:''" json:"hand_lines"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MemoryHistory keeps replaced handbooks and resident summaries.
type MemoryHistory struct {
	ID        string    `gorm:"primaryKey;size:26" json:"id"`
	CardID    string    `gorm:"size:64;not null;index:idx_hist_card_space" json:"card_id"`
	SpaceID   string    `gorm:"size:128;not null;index:idx_hist_card_space" json:"space_id"`
	Kind      string    `gorm:"size:16;not null" json:"kind"`
	Content   string    `gorm:"type:text;not null" json:"content"`
	Reason    string    `gorm:"size:200" json:"reason"`
	CreatedAt time.Time `json:"created_at"`
}

// Ledger is a chat's state snapshot (time, place, characters, inventory, flags,
// plot threads, roster) as JSON.
type Ledger struct {
	ChatID    string    `gorm:"primaryKey;size:26" json:"chat_id"`
	Snapshot  string    `gorm:"type:text;not null" json:"snapshot"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MemoryChunk is archived story text with its embedding, for recall.
type MemoryChunk struct {
	ID        string    `gorm:"primaryKey;size:26" json:"id"`
	ChatID    string    `gorm:"size:26;not null;index" json:"chat_id"`
	ThroughID string    `gorm:"size:26;not null" json:"through_id"`
	Content   string    `gorm:"type:text;not null" json:"content"`
	Embedding []byte    `json:"embedding"`
	CreatedAt time.Time `json:"created_at"`
}

// Tombstone marks a forgotten chat so the manifest can see the deletion.
type Tombstone struct {
	ChatID    string    `gorm:"primaryKey;size:26" json:"chat_id"`
	CardID    string    `gorm:"size:64;not null" json:"card_id"`
	SpaceID   string    `gorm:"size:128;not null" json:"space_id"`
	DeletedAt time.Time `json:"deleted_at"`
	// Cards, as ForgetChat returns it, lists every card the chat cast (its
	// own first), whose memory in the space the forget purged; not stored.
	Cards []string `gorm:"-" json:"cards"`
}

// JobRecord is the last outcome of a memory job for one key: what was written,
// why it was skipped, or why it failed.
type JobRecord struct {
	Kind    string `gorm:"primaryKey;size:32" json:"kind"`
	Key     string `gorm:"primaryKey;size:200" json:"key"`
	Outcome string `gorm:"size:16;not null" json:"outcome"`
	Reason  string `gorm:"type:text" json:"reason"`
	// Product is as long as a key can be: a consolidation's names its
	// card and space.
	Product   string    `gorm:"size:200" json:"product"`
	Failures  int       `json:"failures"`
	UpdatedAt time.Time `json:"updated_at"`
	// RetryAt is when the worker tries a failed job again; nil when no
	// retry is set (the next turn or sweep runs it).
	RetryAt *time.Time `json:"retry_at"`
}

// Persona is how a user wants to be named and described in prompts.
type Persona struct {
	UserKey     string    `gorm:"primaryKey;size:128" json:"user_key"`
	Name        string    `gorm:"size:100" json:"name"`
	Description string    `gorm:"type:text" json:"description"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Setting is a small durable value, such as an adapter's last handled update.
type Setting struct {
	Key       string    `gorm:"primaryKey;size:128" json:"key"`
	Value     string    `gorm:"type:text" json:"value"`
	UpdatedAt time.Time `json:"updated_at"`
}

// All lists every table, in migration order.
func All() []any {
	out := []any{
		&Card{}, &Space{}, &Channel{}, &Chat{}, &Message{}, &Summary{}, &Recap{},
		&ManifestEntry{}, &Handbook{}, &ResidentSummary{}, &MemoryHistory{}, &Ledger{}, &LedgerView{},
		&MemoryChunk{}, &Tombstone{}, &JobRecord{}, &Persona{}, &Setting{}, &InboxMessage{}, &ChatLore{}, &CastMember{}, &SummaryMember{},
	}
	for _, more := range [][]any{recordTables(), beliefTables(), recallTables(), vectorTables(), reorganizeTables(), promptTraceTables(), {&ModelUsage{}}} {
		out = append(out, more...)
	}
	return out
}
