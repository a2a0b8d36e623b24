package models

import "time"

// The tables of characters' own memory (seed 002, DESIGN.md "Characters' own
// memory"). Every row that stems from a chat carries its chat_id, indexed,
// so /forget finds it by provenance.

// Character kinds.
const (
	CharacterCast       = "cast"
	CharacterPlayer     = "player"
	CharacterBackground = "background"
)

// Character is someone in a space's stories: a cast card, a player (a
// user's persona) or a background character the recorder met. Names are
// unique per space.
type Character struct {
	ID      string `gorm:"primaryKey;size:26" json:"id"`
	SpaceID string `gorm:"size:128;not null;uniqueIndex:idx_character_space_name,priority:1" json:"space_id"`
	Name    string `gorm:"size:200;not null;uniqueIndex:idx_character_space_name,priority:2" json:"name"`
	Kind    string `gorm:"size:16;not null" json:"kind"`
	CardID  string `gorm:"size:64" json:"card_id"`
	UserKey string `gorm:"size:128" json:"user_key"`
	// Aliases holds other names, one a line.
	Aliases string `gorm:"type:text;not null;default:''" json:"aliases"`
	// ChatID is the chat that introduced a background character; "" for
	// cast cards and players.
	ChatID    string    `gorm:"size:26;index" json:"chat_id"`
	CreatedAt time.Time `json:"created_at"`
}

// Event is an objective, immutable record of one thing in a turn: an action,
// a line of dialogue (verbatim) or a change the recorder saw. Plain events
// are written with their message; the recorder enriches and seals them.
type Event struct {
	ID        string `gorm:"primaryKey;size:26" json:"id"`
	ChatID    string `gorm:"size:26;not null;index:idx_event_chat_sealed,priority:1" json:"chat_id"`
	SpaceID   string `gorm:"size:128;not null" json:"space_id"`
	MessageID string `gorm:"size:26;not null;index" json:"message_id"`
	// Seq is the turn in its space's one sequence of turns.
	Seq int64 `gorm:"not null;index:idx_event_chat_sealed,priority:3" json:"seq"`
	// Ord orders the events of one message.
	Ord   int    `gorm:"not null" json:"ord"`
	Kind  string `gorm:"size:16;not null" json:"kind"`
	Actor string `gorm:"size:200;not null" json:"actor"`
	Text  string `gorm:"type:text;not null" json:"text"`
	Place string `gorm:"size:200;not null;default:''" json:"place"`
	// Day and Minute are the story time the recorder gave the turn.
	Day        int  `gorm:"not null;default:0" json:"day"`
	Minute     int  `gorm:"not null;default:0" json:"minute"`
	Importance int  `gorm:"not null;default:0" json:"importance"`
	Pivotal    bool `gorm:"not null;default:false" json:"pivotal"`
	// About lists the people, places and things the event is about, one a line.
	About     string    `gorm:"type:text;not null;default:''" json:"about"`
	Sealed    bool      `gorm:"not null;default:false;index:idx_event_chat_sealed,priority:2" json:"sealed"`
	CreatedAt time.Time `json:"created_at"`
}

// Perception is one character's own version of an event.
type Perception struct {
	ID        string `gorm:"primaryKey;size:26" json:"id"`
	ChatID    string `gorm:"size:26;not null;index" json:"chat_id"`
	SpaceID   string `gorm:"size:128;not null;index:idx_perception_story,priority:1" json:"space_id"`
	Character string `gorm:"column:character_name;size:200;not null;index:idx_perception_story,priority:2" json:"character"`
	EventID   string `gorm:"size:26;not null;index" json:"event_id"`
	Mode      string `gorm:"size:16;not null" json:"mode"`
	Text      string `gorm:"type:text;not null" json:"text"`
	Gist      string `gorm:"type:text;not null;default:''" json:"gist"`
	// Via is the event that told it, for a told perception.
	Via        string `gorm:"size:26;not null;default:''" json:"via"`
	Importance int    `gorm:"not null;default:0" json:"importance"`
	// Seq orders a character's perceptions in its story: reflection reads
	// the oldest it has not seen and the newest it has.
	Seq         int64 `gorm:"not null;index:idx_perception_story,priority:3" json:"seq"`
	Day         int   `gorm:"not null;default:0" json:"day"`
	Minute      int   `gorm:"not null;default:0" json:"minute"`
	RecallCount int   `gorm:"not null;default:0" json:"recall_count"`
	// FoldedInto is the belief reflection folded it into; nil until then.
	FoldedInto *string `gorm:"size:26" json:"folded_into"`
	// Reflected says a reflection of its character has shown it: it has a
	// mark in reflection_seen.
	Reflected bool      `gorm:"not null;default:false" json:"reflected"`
	CreatedAt time.Time `json:"created_at"`
}

// Presence records who was present at a message: the chat's cast and the
// players who spoke in the scene. A character's view is the messages it was
// present at.
//
// A character's messages in order are an index range
// (idx_presence_view: chat, character, message id; ids are ULIDs, so id
// order is time order).
type Presence struct {
	MessageID string `gorm:"primaryKey;size:26;index:idx_presence_view,priority:3" json:"message_id"`
	Character string `gorm:"column:character_name;primaryKey;size:200;index:idx_presence_view,priority:2" json:"character"`
	ChatID    string `gorm:"size:26;not null;index:idx_presence_view,priority:1" json:"chat_id"`
	SpaceID   string `gorm:"size:128;not null" json:"space_id"`
	// Perceived is false for a player carried along the branch past a
	// whisper it did not hear: present in the scene, not at this message.
	// (Rows are written with explicit values: GORM would put the default
	// in place of a false.)
	Perceived bool `gorm:"not null;default:true" json:"perceived"`
}

// Thread is an open promise, mystery or goal, until resolved.
type Thread struct {
	ID       string `gorm:"primaryKey;size:26" json:"id"`
	ChatID   string `gorm:"size:26;not null;index" json:"chat_id"`
	SpaceID  string `gorm:"size:128;not null" json:"space_id"`
	Kind     string `gorm:"size:16;not null" json:"kind"`
	Text     string `gorm:"type:text;not null" json:"text"`
	Open     bool   `gorm:"not null" json:"open"`
	OpenedBy string `gorm:"size:26;not null" json:"opened_by"`
	ClosedBy string `gorm:"size:26;not null;default:''" json:"closed_by"`
	// Seq is the turn that opened it.
	Seq       int64     `gorm:"not null" json:"seq"`
	CreatedAt time.Time `json:"created_at"`
}

// Relationship is one character's directed description of another. ChatID
// and EventID are its provenance: the chat and event that wrote or last
// updated it; forgetting that chat deletes the row.
type Relationship struct {
	ID          string `gorm:"primaryKey;size:26" json:"id"`
	SpaceID     string `gorm:"size:128;not null;uniqueIndex:idx_relationship_pair,priority:1" json:"space_id"`
	FromName    string `gorm:"size:200;not null;uniqueIndex:idx_relationship_pair,priority:2" json:"from_name"`
	ToName      string `gorm:"size:200;not null;uniqueIndex:idx_relationship_pair,priority:3" json:"to_name"`
	Description string `gorm:"type:text;not null" json:"description"`
	// Since is the turn (space sequence) they met.
	Since   int64  `gorm:"not null" json:"since"`
	ChatID  string `gorm:"size:26;not null;index" json:"chat_id"`
	EventID string `gorm:"size:26;not null" json:"event_id"`
	// Chats lists every chat that wrote or updated the description, one a
	// line: forgetting any of them deletes the row.
	Chats     string    `gorm:"type:text;not null;default:''" json:"chats"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Entity is a place, item, exit or piece of lore of a space. Within names
// the place it is in. ChatID is the chat that introduced it.
type Entity struct {
	ID      string `gorm:"primaryKey;size:26" json:"id"`
	SpaceID string `gorm:"size:128;not null;uniqueIndex:idx_entity_space_name,priority:1" json:"space_id"`
	Name    string `gorm:"size:200;not null;uniqueIndex:idx_entity_space_name,priority:2" json:"name"`
	Kind    string `gorm:"size:16;not null" json:"kind"`
	Within  string `gorm:"size:200;not null;default:''" json:"within"`
	// Aliases holds other names, one a line.
	Aliases   string    `gorm:"type:text;not null;default:''" json:"aliases"`
	ChatID    string    `gorm:"size:26;not null;index" json:"chat_id"`
	CreatedAt time.Time `json:"created_at"`
}

// Knowledge is a character's knowledge of an entity, granted by an event of
// a chat. It lets the character recognize the thing, never tells where it is
// or who holds it.
type Knowledge struct {
	ID        string    `gorm:"primaryKey;size:26" json:"id"`
	SpaceID   string    `gorm:"size:128;not null;index:idx_knowledge_character,priority:1" json:"space_id"`
	Character string    `gorm:"column:character_name;size:200;not null;index:idx_knowledge_character,priority:2" json:"character"`
	EntityID  string    `gorm:"size:26;not null;index" json:"entity_id"`
	ChatID    string    `gorm:"size:26;not null;index" json:"chat_id"`
	EventID   string    `gorm:"size:26;not null" json:"event_id"`
	CreatedAt time.Time `json:"created_at"`
}

// SpaceTurn holds a space's turn sequence: every turn of every chat of the
// space takes the next number, so "newer" means the same across chats.
type SpaceTurn struct {
	SpaceID string `gorm:"primaryKey;size:128" json:"space_id"`
	Seq     int64  `gorm:"not null" json:"seq"`
}

func recordTables() []any {
	return []any{&Character{}, &Event{}, &Perception{}, &Presence{}, &Thread{}, &Relationship{},
		&Entity{}, &Knowledge{}, &SpaceTurn{}}
}

// TableName keeps the table's name singular in meaning.
func (Knowledge) TableName() string { return "knowledge_edges" }

// TableName says what is present where.
func (Presence) TableName() string { return "message_presences" }
