package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"troupe/cards"
	"troupe/media"
	"troupe/text"
)

// Voice out: where a channel turned /voice on and a speech endpoint is
// configured (Options.Voicer), each reply, once delivered as text and
// stored, is also sent spoken. The text is the record; the audio is only a
// rendering of it, so a failure to make or send it costs the audio alone.

const (
	// maxSpokenChars bounds the text sent to the speech endpoint (OpenAI's
	// limit is 4096 characters); a longer reply is spoken up to a sentence
	// end within it.
	maxSpokenChars = 4000
	// speakTimeout bounds making and sending one spoken reply.
	speakTimeout = 2 * time.Minute
	// maxSpeechWaiting bounds the spoken replies waiting in one channel
	// while the endpoint is slow; past it a reply goes unspoken.
	maxSpeechWaiting = 16
)

// voiceMsg names a text of voice out.
type voiceMsg int

const (
	msgVoiceOn voiceMsg = iota
	msgVoiceOff
	msgVoiceIsOn
	msgVoiceIsOff
	msgVoiceNoEndpoint
	msgVoiceUsage
	msgVoiceNotAllowed
	msgVoiceFailed
)

var voiceTexts = map[string]map[voiceMsg]string{
	"en": {
		msgVoiceOn:         "Voice is on: the character's replies here are also sent spoken.",
		msgVoiceOff:        "Voice is off: replies here are text only.",
		msgVoiceIsOn:       "Voice is on in this channel: replies are also sent spoken. /voice off stops it.",
		msgVoiceIsOff:      "Voice is off in this channel. /voice on has replies also sent spoken.",
		msgVoiceNoEndpoint: "No speech endpoint is configured (tts.base_url), so replies cannot be spoken.",
		msgVoiceUsage:      "/voice on | off — replies also spoken, or text only; /voice alone says which.",
		msgVoiceNotAllowed: "Only members who can manage this channel may turn spoken replies on or off.",
		msgVoiceFailed:     "The spoken version of that reply could not be made (%s); the text above is the reply.",
	},
	"zh": {
		msgVoiceOn:         "语音已开启：角色在这里的回复也会以语音发送。",
		msgVoiceOff:        "语音已关闭：这里的回复只有文字。",
		msgVoiceIsOn:       "这个频道的语音已开启：回复也会以语音发送。/voice off 可关闭。",
		msgVoiceIsOff:      "这个频道的语音已关闭。/voice on 可让回复也以语音发送。",
		msgVoiceNoEndpoint: "没有配置语音合成端点（tts.base_url），回复无法朗读。",
		msgVoiceUsage:      "/voice on | off — 回复同时发语音，或只发文字；只输入 /voice 可查看当前状态。",
		msgVoiceNotAllowed: "只有能管理这个频道的成员才能开关语音回复。",
		msgVoiceFailed:     "这条回复的语音没能生成（%s）；以上文字就是回复。",
	},
}

func (p *Pipeline) vtext(lang string, key voiceMsg, args ...any) string {
	return Localized(voiceTexts, lang, key, args...)
}

// cmdVoice turns the channel's spoken replies on or off, or says whether
// they are on. In a group only a member who may manage the channel changes
// it; without a speech endpoint /voice on stores nothing and says why.
func (cm *commands) cmdVoice(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := cm.p.langOf(in)
	arg := strings.ToLower(strings.TrimSpace(args))
	switch arg {
	case "":
		on, err := cm.store.ChannelVoice(ctx, in.Channel.Key())
		if err != nil {
			return cm.p.internal(ctx, sink, "voice", err)
		}
		say := cm.p.vtext(lang, msgVoiceIsOff)
		if on {
			say = cm.p.vtext(lang, msgVoiceIsOn)
		}
		if cm.p.opt.Voicer == nil {
			say += "\n" + cm.p.vtext(lang, msgVoiceNoEndpoint)
		}
		return sink.Notice(ctx, say)
	case "on", "off":
	default:
		return sink.Notice(ctx, cm.p.vtext(lang, msgVoiceUsage))
	}
	if in.Channel.Group && !in.CanManage {
		return refuse(ctx, sink, cm.p.vtext(lang, msgVoiceNotAllowed))
	}
	on := arg == "on"
	if on && cm.p.opt.Voicer == nil {
		return sink.Notice(ctx, cm.p.vtext(lang, msgVoiceNoEndpoint))
	}
	if _, err := cm.p.channelIn(ctx, in.Channel, ""); err != nil {
		return cm.p.internal(ctx, sink, "voice", err)
	}
	if err := cm.store.SetChannelVoice(ctx, in.Channel.Key(), on); err != nil {
		return cm.p.internal(ctx, sink, "voice", err)
	}
	if on {
		return sink.Notice(ctx, cm.p.vtext(lang, msgVoiceOn))
	}
	return sink.Notice(ctx, cm.p.vtext(lang, msgVoiceOff))
}

// speech is one reply waiting to be spoken.
type speech struct {
	text, voice, lang string
	chatID, platform  string
	// card spoke the reply; scene: the chat has several cast members.
	card  cards.Card
	scene bool
	sink  Sink
	files FileSender
}

// speakReply readies reply, just delivered on sink and stored, to be
// spoken when the channel has voice on, a speech endpoint is configured
// and the sink can send files. cs is the chat as its speaker (in a scene,
// the member who wrote the reply) sees it. The reply is queued once the
// turn's replies are all written (rp.spoken, see replies): until then the
// turn writes to sink, which must not be used from two goroutines at once.
func (p *Pipeline) speakReply(ctx context.Context, cs chatState, rp replyPlan, reply string, sink Sink) {
	if p.opt.Voicer == nil {
		return
	}
	files, ok := sink.(FileSender)
	if !ok {
		return
	}
	on, err := p.opt.Store.ChannelVoice(ctx, cs.channel.ID)
	if err != nil {
		p.log.Warn("read the channel's voice setting", "channel", cs.channel.ID, "err", err)
		return
	}
	said := spokenText(reply)
	if !on || said == "" {
		return
	}
	sp := speech{text: said, voice: p.voiceOf(cs.card), lang: p.language(cs.card), chatID: cs.chat.ID, platform: cs.channel.Platform,
		card: cs.card, scene: cs.scene(), sink: sink, files: files}
	if rp.spoken != nil {
		*rp.spoken = append(*rp.spoken, sp)
		return
	}
	p.queueSpeech(cs.channel.ID, sp)
}

// queueSpeeches queues each of sps, in order.
func (p *Pipeline) queueSpeeches(channel string, sps []speech) {
	for _, sp := range sps {
		p.queueSpeech(channel, sp)
	}
}

// queueSpeech adds sp to the channel's spoken replies (p.speech). One
// goroutine per channel with anything waiting makes and sends them one
// after the other, so a channel's audio comes in the order of its replies
// while neither a turn slot nor the channel's lane waits for the speech
// endpoint. It is called while a turn holds the pipeline's wait group, so
// Close, which waits for the turns before the speech, waits for sp too.
func (p *Pipeline) queueSpeech(channel string, sp speech) {
	if !p.speech.Do(channel, func() { p.speakOne(sp) }) {
		p.log.Warn("spoken reply dropped: too many wait", "channel", channel, "chat_id", sp.chatID, "err_kind", "busy")
		p.speechFailed(sp, "busy")
	}
}

// speakOne makes and sends one spoken reply. A failure is logged with its
// kind and told in one short notice; the text reply stands.
func (p *Pipeline) speakOne(sp speech) {
	var err error
	defer p.survive("speech", &err)
	// Close waits for the audio of replies already given, as for turns,
	// up to its own deadline; speakTimeout bounds each.
	ctx, cancel := context.WithTimeout(context.Background(), speakTimeout)
	defer cancel()
	f, err := p.opt.Voicer.Speak(ctx, sp.text, sp.voice)
	if err == nil {
		f, err = voiceFile(f)
	}
	if err != nil {
		p.warnFailure("spoken reply failed", err, "chat_id", sp.chatID)
		p.speechFailed(sp, modelErrorKind(err))
		return
	}
	// The audio is the speaker's: shown under its name where the platform
	// shows speakers (a Discord webhook of its own).
	speak(ctx, sp.sink, sp.card, sp.scene)
	if err = sp.files.SendFile(ctx, f); err != nil {
		p.opt.Observer.SendFailed(sp.platform)
		p.log.Warn("send spoken reply", "chat_id", sp.chatID, "err_kind", "send", "err", err)
		p.speechFailed(sp, "send")
	}
}

// speechFailed tells the channel, in one short notice, that a reply's
// audio is missing and why.
func (p *Pipeline) speechFailed(sp speech, kind string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sp.sink.Notice(ctx, p.vtext(sp.lang, msgVoiceFailed, kind)); err != nil {
		p.log.Warn("notice of a failed spoken reply", "chat_id", sp.chatID, "err", err)
	}
}

// voiceFile checks the speech endpoint's answer and names it as players
// get it: an Ogg file is a voice note (reply.ogg), an MP3 an audio file
// (reply.mp3); what the endpoint said of it is kept where it said it.
func voiceFile(f media.File) (media.File, error) {
	if len(f.Data) == 0 {
		return f, &ModelError{Kind: "empty"}
	}
	mp3 := bytes.HasPrefix(f.Data, []byte("ID3")) || f.MIME == "audio/mpeg" || (len(f.Data) > 1 && f.Data[0] == 0xFF && f.Data[1]&0xE0 == 0xE0)
	if f.Kind == "" {
		f.Kind = media.Voice
		if mp3 {
			f.Kind = media.Audio
		}
	}
	if f.MIME == "" {
		f.MIME = "audio/ogg"
		if mp3 {
			f.MIME = "audio/mpeg"
		}
	}
	if f.Name == "" {
		f.Name = "reply.ogg"
		if mp3 {
			f.Name = "reply.mp3"
		}
	}
	return f, nil
}

// voiceOf is the voice a card speaks with: extensions.troupe.voice, else
// extensions.voice, else Options.Voice ("" lets the endpoint choose).
// Only string values count: other extensions may use the key otherwise.
func (p *Pipeline) voiceOf(c cards.Card) string {
	var data struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if len(c.Raw) > 0 && json.Unmarshal(c.Raw, &data) == nil {
		var troupe map[string]json.RawMessage
		if json.Unmarshal(data.Extensions["troupe"], &troupe) == nil {
			if v := stringValue(troupe["voice"]); v != "" {
				return v
			}
		}
		if v := stringValue(data.Extensions["voice"]); v != "" {
			return v
		}
	}
	return p.opt.Voice
}

// stringValue is raw as a trimmed string, "" when it is not a string.
func stringValue(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

var (
	// marks are Markdown's emphasis, strike-through, code and spoiler
	// marks: dropped, their words kept.
	marks = regexp.MustCompile("\\*+|~~|`+|\\|\\|")
	// underscores are emphasis underscores: a run at a word's start or end
	// (snake_case keeps its own); the space or stop beside it stays.
	underscores = regexp.MustCompile(`(^|[\s(])_+|_+([\s.,!?;:)]|$)`)
	// lineMarks are heading and quote marks that start a line.
	lineMarks = regexp.MustCompile(`(?m)^[ \t]*(?:#{1,6}|>+)[ \t]*`)
	// spaces are runs of white space within a line.
	spaces = regexp.MustCompile(`[ \t]+`)
)

// spokenText is a reply as it is read aloud: Markdown's marks dropped and
// the words kept, at most maxSpokenChars characters, cut at a sentence end
// when it is longer.
func spokenText(reply string) string {
	s := lineMarks.ReplaceAllString(reply, "")
	s = marks.ReplaceAllString(s, "")
	s = underscores.ReplaceAllString(s, "${1}${2}")
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	kept := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(spaces.ReplaceAllString(l, " ")); l != "" {
			kept = append(kept, l)
		}
	}
	return clipAtSentence(strings.Join(kept, "\n"), maxSpokenChars)
}

// clipAtSentence returns s when it has at most n characters, else its
// longest start of at most n characters that ends a sentence; failing one
// in the second half, at a space; failing that, n characters.
func clipAtSentence(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := text.CutRunes(s, n)
	best, space := -1, -1
	for i, r := range cut {
		end := i + utf8.RuneLen(r)
		switch {
		case strings.ContainsRune(".!?…。！？\n", r):
			best = end
		case r == ' ':
			space = i
		}
	}
	half := len(cut) / 2
	switch {
	case best > half:
		return strings.TrimSpace(cut[:best])
	case space > half:
		return strings.TrimSpace(cut[:space])
	case best > 0:
		return strings.TrimSpace(cut[:best])
	}
	return cut
}
