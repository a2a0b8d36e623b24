package discord

import (
	"bytes"
	"context"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"troupe/bot"
	"troupe/media"
	troupetext "troupe/text"
)

// Files out: a spoken reply is an audio attachment (reply.ogg, reply.mp3)
// and a picture an image attachment with its caption as the message's
// text. A message's reply posts them like its text, through the channel's
// webhook in the character's name and avatar (as the bot where it may not);
// a slash command's sink answers the interaction with them, except that the
// spoken version of a character's reply goes where the reply went.

// uploadLimit is how many bytes of files a bot may post in one message:
// Discord's limit in a server without boosts, and in direct messages.
const uploadLimit = 10 << 20

var (
	_ bot.FileSender = (*reply)(nil)
	_ bot.FileSender = (*ixSink)(nil)
)

// fileName is f's name, or one that says what it is.
func fileName(f media.File) string {
	if f.Name != "" {
		return f.Name
	}
	switch f.Kind {
	case media.Voice:
		return "reply.ogg"
	case media.Audio:
		return "reply.mp3"
	case media.Image:
		return "picture.png"
	}
	return "file"
}

// checkFile refuses a file Discord would not take: empty, or over the
// upload limit (media.ErrTooLarge).
func checkFile(f media.File) error {
	if len(f.Data) == 0 {
		return fmt.Errorf("discord: file %s is empty", fileName(f))
	}
	if len(f.Data) > uploadLimit {
		return fmt.Errorf("discord: %s is %d bytes, over Discord's upload limit of %d: %w", fileName(f), len(f.Data), uploadLimit, media.ErrTooLarge)
	}
	return nil
}

// upload is f as discordgo sends it; each request needs its own, since
// sending reads it.
func upload(f *media.File) []*discordgo.File {
	if f == nil {
		return nil
	}
	return []*discordgo.File{{Name: fileName(*f), ContentType: f.MIME, Reader: bytes.NewReader(f.Data)}}
}

// fileText is the text that goes with f: a picture's caption, clipped to a
// message.
func fileText(f media.File) string { return troupetext.Clip(f.Caption, maxMessage-100) }

// SendFile posts f at the reply's place as the character last announced
// (Speak; the pipeline announces a spoken reply's speaker again before its
// file): through the webhook (retried, then as the bot when the webhook keeps
// failing), or as the bot with the name in bold. It fails with
// media.ErrTooLarge over Discord's upload limit.
func (r *reply) SendFile(ctx context.Context, f media.File) error {
	if err := checkFile(f); err != nil {
		return err
	}
	r.mu.Lock()
	sp := r.sp
	r.mu.Unlock()
	try := func(asBot bool) error {
		return r.a.retry(ctx, func() error {
			_, err := r.a.send(ctx, r.s, r.pl, sp, fileText(f), &f, true, asBot)
			return err
		})
	}
	err := try(false)
	if err != nil && ctx.Err() == nil && !r.pl.dm() {
		r.a.log.Warn("posting a file through the webhook failed; posting as the bot", "channel_id", r.pl.channelID, "err", err)
		err = try(true)
	}
	if err != nil {
		return fmt.Errorf("discord: post %s: %w", fileName(f), err)
	}
	return nil
}

// SendFile answers the command with f: the interaction's response or a
// follow-up (ephemeral when the command's answer is). A spoken reply of
// the character goes with the reply's text into the channel instead; the
// spoken answer to a whisper, to the caller alone under the speaker's name.
// It fails with media.ErrTooLarge over Discord's upload limit.
func (k *ixSink) SendFile(ctx context.Context, f media.File) error {
	if err := checkFile(f); err != nil {
		return err
	}
	k.mu.Lock()
	rep, private, ephemeral, sp := k.reply, k.whisper, k.ephemeral, k.sp
	k.mu.Unlock()
	spoken := f.Kind == media.Voice || f.Kind == media.Audio
	if spoken && rep != nil && !private {
		return rep.SendFile(ctx, f)
	}
	content := fileText(f)
	if spoken && private {
		content = sp.prefix() + content
	}
	if err := k.sayFile(ctx, content, f, ephemeral); err != nil {
		k.a.log.Error("answer interaction with a file", "channel_id", k.pl.channelID, "err", err)
		return fmt.Errorf("discord: post %s: %w", fileName(f), err)
	}
	return nil
}

// sayFile writes content with f as the interaction's next message.
func (k *ixSink) sayFile(ctx context.Context, content string, f media.File, ephemeral bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	opt := discordgo.WithContext(ctx)
	switch k.state {
	case ixNew:
		err := k.s.InteractionRespond(k.i, &discordgo.InteractionResponse{
			Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: content, Flags: flags(ephemeral), AllowedMentions: noMentions(), Files: upload(&f)},
		}, opt)
		if err == nil {
			k.state = ixAnswered
		}
		return err
	case ixDeferred:
		_, err := k.s.InteractionResponseEdit(k.i, &discordgo.WebhookEdit{Content: &content, AllowedMentions: noMentions(), Files: upload(&f)}, opt)
		if err == nil {
			k.state = ixAnswered
		}
		return err
	}
	_, err := k.s.FollowupMessageCreate(k.i, true, &discordgo.WebhookParams{
		Content: content, Flags: flags(ephemeral), AllowedMentions: noMentions(), Files: upload(&f),
	}, opt)
	return err
}
