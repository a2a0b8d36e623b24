package bot

import (
	"context"
	"strings"
	"time"

	"troupe/media"

	"troupe/cards"
)

// Platforms troupe speaks on.
const (
	PlatformDiscord  = "discord"
	PlatformTelegram = "telegram"
	PlatformConsole  = "console"
)

// Kinds of space.
const (
	// SpaceGuild is a Discord guild's channels that share one audience:
	// its public ones, or all of them when the operator joins them.
	SpaceGuild = "guild"
	// SpaceChannel is one Discord channel's or thread's own audience: a
	// private channel or private thread, or any channel when spaces
	// follow channels. Its SpaceID is "<guild id>/<channel id>".
	SpaceChannel = "channel"
	SpaceUser    = "user"
	SpaceGroup   = "group"
	SpaceLocal   = "local"
)

// ChannelRef names a platform conversation and the space its memory
// belongs to.
type ChannelRef struct {
	Platform string
	// ID is the platform's id of the channel, thread or chat.
	ID string
	// SpaceKind is SpaceGuild, SpaceChannel, SpaceUser, SpaceGroup or
	// SpaceLocal.
	SpaceKind string
	// SpaceID is the platform id of the guild, user or group (for
	// SpaceChannel, the guild's and the channel's).
	SpaceID string
	// Group is true where several people play in the channel.
	Group bool
	// ParentID is, for a thread, the platform id of the channel it was
	// opened in (a thread without a card of its own plays its parent's);
	// empty otherwise.
	ParentID string `json:",omitempty"`
}

// Key is the channel's id in the store.
func (c ChannelRef) Key() string { return c.Platform + ":" + c.ID }

// Space is the space's id in the store.
func (c ChannelRef) Space() string { return c.Platform + ":" + c.SpaceKind + ":" + c.SpaceID }

// refInSpace is ref in the stored space spaceID (see ChannelRef.Space);
// false when spaceID is not one of ref's platform.
func refInSpace(ref ChannelRef, spaceID string) (ChannelRef, bool) {
	parts := strings.SplitN(spaceID, ":", 3)
	if len(parts) != 3 || parts[0] != ref.Platform || parts[1] == "" || parts[2] == "" {
		return ref, false
	}
	ref.SpaceKind, ref.SpaceID = parts[1], parts[2]
	ref.Group = groupSpace(ref.SpaceKind)
	return ref, true
}

// guild reports whether the channel is a Discord guild's, in whichever
// space: such a channel plays only where a card is bound.
func (c ChannelRef) guild() bool { return c.SpaceKind == SpaceGuild || c.SpaceKind == SpaceChannel }

// groupSpace reports whether a space of kind holds group chats (a guild's,
// a channel's own, a Telegram group's), for a ChannelRef rebuilt from
// stored rows.
func groupSpace(kind string) bool {
	return kind == SpaceGuild || kind == SpaceChannel || kind == SpaceGroup
}

// Inbound is one normalized platform message.
type Inbound struct {
	Channel    ChannelRef
	AuthorID   string
	AuthorName string
	Text       string
	// MessageID is the platform's message id; a second delivery of the same
	// id is ignored. Empty disables that check.
	MessageID string
	// Addressed names the characters the platform says the message is
	// for, from signals beside its text (a reply to a character's
	// message); the text's own mentions are found by the pipeline.
	Addressed []string
	// CanManage is true when the author may run admin commands (/forget,
	// /card set) in this channel.
	CanManage bool
	// Mentioned is true when the message is addressed to the character:
	// it mentions the bot or replies to one of the character's messages.
	// In a mention-only group channel only such messages count.
	Mentioned bool
	// Received is when the platform delivered the message.
	Received time.Time
	// Media are the message's attachments: pictures, voice notes, audio
	// and text files, in the order the platform lists them.
	Media []media.Item
}

// UserKey identifies the author across channels of one platform.
func (in Inbound) UserKey() string { return in.Channel.Platform + ":" + in.AuthorID }

// Sink renders what the pipeline writes for one inbound message.
type Sink interface {
	// Typing is called when a reply starts; adapters show an indicator until
	// the first Update.
	Typing(ctx context.Context)
	// Update receives the whole reply text so far; adapters decide how often
	// to show it.
	Update(ctx context.Context, text string) error
	// Finish receives the final reply text.
	Finish(ctx context.Context, text string) error
	// Notice delivers a short message from troupe itself: an error, a
	// command's answer.
	Notice(ctx context.Context, text string) error
}

// FileSender is a Sink that can also send a file: a reply spoken aloud
// (a Telegram voice message, a Discord audio attachment) or a picture. A
// sink without it gets no files; the text reply is the record either way.
type FileSender interface {
	SendFile(ctx context.Context, f media.File) error
}

// Confirmer is a Sink that can ask a yes/no question with buttons. Sinks
// without it get the question as a Notice and the answer as the next message.
type Confirmer interface {
	Confirm(ctx context.Context, question string, token string, expires time.Time) error
}

// Refusing is a Sink that can show a refusal (an event the engine does not
// take, such as a command where no character plays) to its author alone.
// Sinks without it get the refusal as a Notice.
type Refusing interface {
	Refuse(ctx context.Context, text string) error
}

// Confiding is a Sink that can show a notice to the author of the event
// alone, where others read the channel: an ephemeral answer on Discord, the
// author's private chat with the bot on Telegram. What a group must not
// read (/memory asked in one) goes only through it; a sink without it, or
// whose Confide returns ErrNoPrivateAnswer, gets a refusal instead.
type Confiding interface {
	// Confide shows text to the author alone. When the platform cannot
	// reach them alone it shows nothing of text: it returns
	// ErrNoPrivateAnswer, or tells the author briefly how to make it
	// possible and returns nil.
	Confide(ctx context.Context, text string) error
}

// refuse tells the author of an event that it was not taken.
func refuse(ctx context.Context, sink Sink, text string) error {
	if r, ok := sink.(Refusing); ok {
		return r.Refuse(ctx, text)
	}
	return sink.Notice(ctx, text)
}

// Whispering is a Sink that can give the author of its event, alone, what
// the pipeline writes from now on: the answer to their whisper, written
// again by /regen, and the notices that come with it. The pipeline calls
// Whisper before that answer. In a group channel a Sink without it gets a
// refusal in place of the answer, which never reaches the channel.
type Whispering interface {
	Whisper(ctx context.Context)
}

// Speaker is the character a reply is written as.
type Speaker struct {
	CardID string
	// Name is the character's display name; Language the card's.
	Name, Language string
	// AvatarURL is the card's avatar; Image its embedded picture, for
	// platforms that upload one.
	AvatarURL string
	Image     []byte
	// Scene is true when the chat has several cast members: platforms
	// without a voice of their own per character (Telegram) name the
	// speaker only then, so a one-card chat prints as it always has.
	Scene bool
}

// Speaking is a Sink that shows who speaks. The pipeline calls Speak before
// each reply it writes (before Typing, Update or Finish): one event may
// produce replies from several speakers, in order, each announced by its own
// Speak; Notice is troupe's own voice and has none.
type Speaking interface {
	Speak(ctx context.Context, sp Speaker)
}

// speak tells sink, if it shows speakers, that c speaks next, in a scene
// or not.
func speak(ctx context.Context, sink Sink, c cards.Card, scene bool) {
	if s, ok := sink.(Speaking); ok {
		s.Speak(ctx, Speaker{CardID: c.ID, Name: c.Name, Language: c.Language, AvatarURL: c.Avatar, Image: c.Image, Scene: scene})
	}
}
