package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"troupe/media"
	"troupe/models"
	"troupe/prompt"
	"troupe/record"
	"troupe/text"
)

// Pictures out: /picture [what] asks the image endpoint (Options.Painter)
// for a picture of the scene as the speaking character is in it, shows it
// in the channel, and keeps its caption in the chat as something the
// character showed.

const (
	// paintTimeout bounds the image endpoint's work for one picture.
	paintTimeout = 2 * time.Minute
	// pictureTokens is what a picture costs of the model token budgets
	// (limits.channel_tokens_per_minute, limits.tokens_per_minute): a fixed
	// charge, about a short turn's, so that /picture cannot be a way round
	// them; it is checked before the endpoint is asked, as a turn's is.
	pictureTokens = 1000
	// The most characters of what was asked, of the card's appearance and
	// of the caption.
	maxPictureWhat       = 300
	maxPictureAppearance = 600
	maxPictureCaption    = 200
	// pictureAuthor marks the stored message of a picture (its AuthorID,
	// which a character's replies leave empty).
	pictureAuthor = "troupe:picture"
)

// pictureMsg names a text of /picture.
type pictureMsg int

const (
	msgPictureNoEndpoint pictureMsg = iota
	msgPictureNoFiles
	msgPictureFailed
	msgPictureOverBudget
	msgPictureNotKept
	msgPictureScene
)

var pictureTexts = map[string]map[pictureMsg]string{
	"en": {
		msgPictureNoEndpoint: "No image endpoint is configured (image.base_url), so there are no pictures.",
		msgPictureNoFiles:    "Pictures cannot be shown here.",
		msgPictureFailed:     "The picture could not be made (%s). Try /picture again in a while.",
		msgPictureOverBudget: "The character has used up its share of the model for this minute: ask for the picture again in a minute.",
		msgPictureNotKept:    "The picture was shown but could not be kept in the story's memory.",
		msgPictureScene:      "the scene",
	},
	"zh": {
		msgPictureNoEndpoint: "没有配置图像生成端点（image.base_url），无法生成图片。",
		msgPictureNoFiles:    "这里无法显示图片。",
		msgPictureFailed:     "图片没能生成（%s）。请稍后再试 /picture。",
		msgPictureOverBudget: "角色这一分钟的模型用量已经用完：请一分钟后再要图片。",
		msgPictureNotKept:    "图片已显示，但没能记入剧情记忆。",
		msgPictureScene:      "此刻的场景",
	},
}

func (cm *commands) ptext(lang string, key pictureMsg, args ...any) string {
	return Localized(pictureTexts, lang, key, args...)
}

// picturePrompts are the image prompt's frame: the scene's facts follow
// in its language.
var picturePrompts = map[string]struct {
	intro, looks, place, time, present, show, showScene, style string
}{
	"en": {
		intro:     "One illustration of a moment in an ongoing story.",
		looks:     "%s, as the story describes them: %s",
		place:     "Where: %s.",
		time:      "When: %s.",
		present:   "Who is there: %s.",
		show:      "Show: %s.",
		showScene: "Show: the scene as it is now, with %s in view.",
		style:     "A painted story illustration; no text, letters or captions in the picture.",
	},
	"zh": {
		intro:     "为一个进行中的故事画一幅插图，表现此刻的情景。",
		looks:     "%s，故事里对其的描述：%s",
		place:     "地点：%s。",
		time:      "时间：%s。",
		present:   "在场的人：%s。",
		show:      "画面内容：%s。",
		showScene: "画面内容：此刻的场景，%s 在画面中。",
		style:     "绘画风格的故事插图；画面里不要有文字、字母或标题。",
	},
}

// pictureScene is where and when the speaking character is, and who is
// there, as its view of the recorder's ledger has it.
type pictureScene struct {
	place, time string
	present     []string
}

// cmdPicture draws a picture of the scene as the speaking character (the
// one who spoke last) is in it, sends it to the channel and keeps its
// caption in the chat. what, when given, says what to show.
func (cm *commands) cmdPicture(ctx context.Context, in Inbound, what string, sink Sink) error {
	lang := cm.p.langOf(in)
	if cm.p.opt.Painter == nil {
		return sink.Notice(ctx, cm.ptext(lang, msgPictureNoEndpoint))
	}
	files, ok := sink.(FileSender)
	if !ok {
		return sink.Notice(ctx, cm.ptext(lang, msgPictureNoFiles))
	}
	cs, ok, err := cm.commandChat(ctx, in, sink, lang, "picture")
	if !ok {
		return err
	}
	sst, err := cm.p.as(ctx, cs, pictureSpeaker(cs))
	if err != nil {
		return cm.p.internal(ctx, sink, "picture", err)
	}
	lang = cm.p.language(sst.card)
	if cm.p.tokens.over(cs.channel.ID, cm.p.opt.Now()) != "" {
		return sink.Notice(ctx, cm.ptext(lang, msgPictureOverBudget))
	}
	cm.p.tokens.charge(cs.channel.ID, pictureTokens, cm.p.opt.Now())
	what = text.Clip(text.Line(what), maxPictureWhat)
	sc := cm.pictureSceneOf(ctx, sst)
	pctx, cancel := context.WithTimeout(ctx, paintTimeout)
	defer cancel()
	f, err := cm.p.opt.Painter.Paint(pctx, cm.picturePrompt(sst, sc, what))
	if err == nil {
		f, err = pictureFile(f)
	}
	if err != nil {
		cm.p.warnFailure("picture failed", err, "chat_id", cs.chat.ID)
		return sink.Notice(ctx, cm.ptext(lang, msgPictureFailed, modelErrorKind(err)))
	}
	f.Caption = cm.pictureCaption(lang, what, sc)
	// The picture is the character's: shown under its name where the
	// platform shows speakers.
	speak(ctx, sink, sst.card, sst.scene())
	if err := files.SendFile(ctx, f); err != nil {
		cm.p.opt.Observer.SendFailed(cs.channel.Platform)
		cm.log.Warn("send picture", "chat_id", cs.chat.ID, "err_kind", "send", "err", err)
		return sink.Notice(ctx, cm.ptext(lang, msgPictureFailed, "send"))
	}
	err = cm.p.withLane(ctx, in, func() error { return cm.keepPicture(ctx, in, sst, f.Caption) })
	if err != nil {
		cm.log.Error("keep picture", "chat_id", cs.chat.ID, "err", err)
		return sink.Notice(ctx, cm.ptext(lang, msgPictureNotKept))
	}
	return nil
}

// pictureSpeaker is the cast member a picture shows the scene of: the one
// who spoke last while present, else the first one present, else the
// lead.
func pictureSpeaker(cs chatState) string {
	present := cs.presentCast()
	if last := cs.lastSpeakerName(); last != "" && slices.Contains(present, last) {
		return last
	}
	if len(present) > 0 {
		return present[0]
	}
	return cs.allCast()[0].Name
}

// pictureSceneOf reads the scene of cs's speaking member from its view of
// the ledger (in a scene its own, else the chat's): its place, the story
// time, and who is there — the members present and the players, and
// whoever the ledger puts in the same place.
func (cm *commands) pictureSceneOf(ctx context.Context, cs chatState) pictureScene {
	name := cs.speakerName()
	ledger := cs.ledger
	if cs.scene() {
		views, err := cm.store.ViewLedgers(ctx, cs.chat.ID)
		if err != nil {
			cm.log.Warn("ledger views for a picture", "chat_id", cs.chat.ID, "err", err)
		}
		ledger = models.MemberLedger(cs.chat, cs.member, cs.ledger, views)
	}
	var l record.Ledger
	if ledger != "" && json.Unmarshal([]byte(ledger), &l) != nil {
		l = record.Ledger{}
	}
	sc := pictureScene{place: text.Line(l.PlaceOf(name)), time: text.Line(l.Time)}
	for _, who := range scenePresent(cs, name, cs.user) {
		if who != "" && !slices.Contains(sc.present, who) {
			sc.present = append(sc.present, who)
		}
	}
	var there []string
	for who, where := range l.Where {
		if sc.place != "" && strings.EqualFold(text.Line(where), sc.place) && !slices.Contains(sc.present, who) {
			there = append(there, text.Line(who))
		}
	}
	sort.Strings(there)
	sc.present = append(sc.present, there...)
	return sc
}

// picturePrompt is the image prompt: our frame, the speaking card's
// appearance (its description, macros filled, clipped), the scene and what
// was asked. Card and player text is made one line each.
func (cm *commands) picturePrompt(cs chatState, sc pictureScene, what string) string {
	lang := cm.p.language(cs.card)
	w, ok := picturePrompts[lang]
	if !ok {
		w = picturePrompts["en"]
	}
	name := cs.speakerName()
	looks := text.Clip(text.Line(cm.p.greeting(cs.card, cs.card.Description, cs.user)), maxPictureAppearance)
	lines := []string{w.intro}
	if looks != "" {
		lines = append(lines, fmt.Sprintf(w.looks, name, looks))
	}
	if sc.place != "" {
		lines = append(lines, fmt.Sprintf(w.place, sc.place))
	}
	if sc.time != "" {
		lines = append(lines, fmt.Sprintf(w.time, sc.time))
	}
	if len(sc.present) > 0 {
		lines = append(lines, fmt.Sprintf(w.present, strings.Join(sc.present, ", ")))
	}
	if what != "" {
		lines = append(lines, fmt.Sprintf(w.show, what))
	} else {
		lines = append(lines, fmt.Sprintf(w.showScene, name))
	}
	return strings.Join(append(lines, w.style), "\n")
}

// pictureCaption is the short caption of a picture: what was asked (else
// "the scene") and the place.
func (cm *commands) pictureCaption(lang, what string, sc pictureScene) string {
	c := what
	if c == "" {
		c = cm.ptext(lang, msgPictureScene)
	}
	if sc.place != "" {
		c += " — " + sc.place
	}
	// The caption sits inside the [image: …] marker it must not close.
	c = strings.NewReplacer("[", "(", "]", ")").Replace(c)
	return text.Clip(c, maxPictureCaption)
}

// errNotImage: the image endpoint answered with bytes that are no picture.
var errNotImage = &ModelError{Kind: "not_an_image"}

// pictureFile checks the image endpoint's answer: bytes of a picture
// format players' clients show. A name the endpoint gave is kept, else it
// is named by its format (picture.png, as the endpoints answer).
func pictureFile(f media.File) (media.File, error) {
	names := map[string]string{"image/png": "picture.png", "image/jpeg": "picture.jpg", "image/gif": "picture.gif", "image/webp": "picture.webp"}
	mime := http.DetectContentType(f.Data)
	name, ok := names[mime]
	if !ok {
		return f, errNotImage
	}
	f.Kind, f.MIME = media.Image, mime
	if f.Name == "" {
		f.Name = name
	}
	return f, nil
}

// keepPicture stores a picture just shown as a message of the chat, after
// its head: the line "[image: caption]", written by the character that
// showed it (an assistant message under its name and card). So the next
// prompt, the relay summary and the recorder (an event of that character)
// all read that the character showed this picture, and /forget takes it
// with the chat. It is marked as a picture (pictureAuthor) so that /regen
// and /swipe, which work on the last reply, pass over it (pastPictures):
// writing a picture again as a reply would make no sense. When the channel
// moved on to another chat meanwhile, the picture is not kept there.
func (cm *commands) keepPicture(ctx context.Context, in Inbound, shown chatState, caption string) error {
	cs, err := cm.p.resolve(ctx, in)
	if err != nil {
		return err
	}
	if cs.chat.ID != shown.chat.ID {
		cm.log.Info("picture not kept: the channel is on another chat now", "chat_id", shown.chat.ID)
		return nil
	}
	sst, err := cm.p.as(ctx, cs, shown.speakerName())
	if err != nil {
		return err
	}
	// Named as replyOne names a reply.
	msg := &models.Message{Role: prompt.RoleAssistant, AuthorID: pictureAuthor, AuthorName: sst.card.Name,
		Content: storable("[image: " + caption + "]"), SpeakerCardID: sst.speakerCard()}
	if sst.scene() {
		msg.AuthorName = sst.speakerName()
	}
	head := cs.chat.HeadID
	return cm.store.AppendTurn(ctx, cs.chat.ID, head, head, []*models.Message{msg}, cm.p.turnRecord(sst, []*models.Message{msg}, false, ""))
}

// isPicture reports whether m is a picture /picture kept.
func isPicture(m models.Message) bool {
	return m.Role == prompt.RoleAssistant && m.AuthorID == pictureAuthor
}

// pastPictures returns head, or when head is a picture the last message
// before the pictures that end the branch: /regen and /swipe work on the
// last reply, which a picture shown after it is not. A reply written again
// goes beside that reply, and the picture stays with the branch it was
// drawn on.
func (cm *commands) pastPictures(ctx context.Context, head models.Message) (models.Message, error) {
	for i := 0; isPicture(head) && head.ParentID != "" && i < maxRegenWalk; i++ {
		m, err := cm.store.Message(ctx, head.ParentID)
		if err != nil {
			return head, err
		}
		head = m
	}
	return head, nil
}
