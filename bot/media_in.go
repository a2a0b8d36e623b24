package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"troupe/media"
	"troupe/models"
	"troupe/text"
	"troupe/usage"
)

// MediaOptions bounds the pictures, voice notes and files players send, and
// says what is kept of them.
type MediaOptions struct {
	// Limits bound one message's attachments (media.Limits.WithDefaults
	// fills what is 0).
	Limits media.Limits
	// Timeout bounds the downloads, captions and transcriptions of one
	// message; 0 means a minute.
	Timeout time.Duration
	// Keep, when its Dir is set, keeps each downloaded original under
	// Dir/<chat id>/ once its message is stored in that chat.
	Keep media.Keep
}

// Inbound media (issue 37). A message's attachments become text before the
// message is stored in the inbox, so the stored text is the record that
// summaries, the recorder, recall and the inspector see:
//
//   - a picture, with Options.Vision, is captioned once and stored as the
//     line "[image: <caption>]"; its pixels (downscaled, as a data URL) stay
//     in this process for the turn that takes the message, which sends them
//     as ModelRequest.Images, and are dropped then or after heldFor;
//   - a picture without vision is the line "[<author> sent an image: <name>]",
//     and the channel is told once (per process) that pictures are not seen;
//   - a voice note or audio file, with a Transcriber, is the line
//     "[spoken] <transcript>"; without one, "[<author> sent a voice note]"
//     and a notice once per channel (per process);
//   - a text file is quoted under its name.
//
// An item refused (too many, too large, unreadable, download refused, an
// endpoint failed) costs the message only that item: one notice names each
// and why, in the card's language. A caption or transcription that fails
// leaves the name line, and no pixels are sent: the character never answers
// to a picture its memory cannot hold. A message left with no text and
// nothing to say of its media gets no turn.

// heldFor is how long a message's pixels wait for the turn that takes it.
const heldFor = 5 * time.Minute

// decodeSlots bounds the pictures decoded and scaled at once, the costly
// part in memory (a 12-megapixel photo decodes to about 48 MB).
const decodeSlots = 2

// imagePromptTokens is the fixed estimate of the prompt tokens one picture
// costs, reserved when a prompt that carries it is fitted: a 1024 px picture
// costs a vision model 765 tokens at OpenAI's high detail, fewer elsewhere.
const imagePromptTokens = 800

// Bounds of the text an attachment becomes.
const (
	// captionRunes bounds a stored caption.
	captionRunes = 400
	// captionTokens caps the caption call's answer.
	captionTokens = 200
)

// inMedia is the pipeline's in-process state of inbound media.
type inMedia struct {
	mu sync.Mutex
	// held maps an inbox row id to the pixels and originals of its
	// message, until the turn that takes the row.
	held map[string]heldMedia
	// told holds channel key + kind for each channel told, once, that
	// pictures are not seen or voice notes not heard (per process: the
	// channel table has no column for it).
	told sync.Map
	// decode bounds the pictures decoded at once.
	decode chan struct{}
}

func newInMedia() *inMedia {
	return &inMedia{held: map[string]heldMedia{}, decode: make(chan struct{}, decodeSlots)}
}

// heldMedia is what a message's attachments leave for its turn.
type heldMedia struct {
	images []string
	files  []keptFile
	at     time.Time
}

// keptFile is a downloaded original, saved once its message is stored
// (MediaOptions.Keep).
type keptFile struct {
	name string
	data []byte
}

// hold keeps h for the turn that takes inbox row id, and drops what waited
// past heldFor.
func (m *inMedia) hold(id string, h heldMedia) {
	if id == "" || len(h.images) == 0 && len(h.files) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.held {
		if h.at.Sub(v.at) > heldFor {
			delete(m.held, k)
		}
	}
	m.held[id] = h
}

// take removes and returns what inbox row id holds.
func (m *inMedia) take(id string) (heldMedia, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.held[id]
	delete(m.held, id)
	return h, ok
}

// takenMedia is what a message's attachments became.
type takenMedia struct {
	// lines are the stored lines, in the attachments' order.
	lines   []string
	notices []string
	held    heldMedia
}

// itemResult is what one attachment became: a line (or none), the pixels
// sent this turn, the original to keep, a notice.
type itemResult struct {
	line, image, notice string
	file                *keptFile
}

// takeMedia turns in's attachments into the lines stored with its text,
// tells sink what was refused, and returns the text to store and what the
// turn needs of them. ok is false when the message is left with nothing to
// say: no text and no line.
func (p *Pipeline) takeMedia(ctx context.Context, in Inbound, sink Sink) (msgText string, held heldMedia, ok bool) {
	lang := p.langOf(in)
	tm := p.prepareMedia(ctx, in, lang)
	if len(tm.notices) > 0 {
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := sink.Notice(nctx, strings.Join(tm.notices, "\n")); err != nil {
			p.log.Warn("media notice", "channel", in.Channel.Key(), "err", err)
		}
	}
	msgText = in.Text
	if len(tm.lines) > 0 {
		msgText = strings.TrimSpace(strings.TrimRight(in.Text, " \t\n") + "\n" + strings.Join(tm.lines, "\n"))
	}
	return msgText, tm.held, strings.TrimSpace(msgText) != ""
}

// prepareMedia downloads and reads in's attachments within the limits and
// MediaOptions.Timeout, all at once.
func (p *Pipeline) prepareMedia(ctx context.Context, in Inbound, lang string) takenMedia {
	lim := p.opt.Media.Limits.WithDefaults()
	timeout := cmp.Or(p.opt.Media.Timeout, time.Minute)
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	author := cmp.Or(strings.TrimSpace(in.AuthorName), p.itext(lang, mediaSomeone))
	results := make([]itemResult, len(in.Media))
	var wg sync.WaitGroup
	images, others := 0, 0
	for i, it := range in.Media {
		// The count comes first: past it nothing is downloaded.
		n := &others
		if it.Kind == media.Image {
			n = &images
		}
		if *n++; *n > lim.MaxImages {
			results[i] = itemResult{notice: p.refusal(lang, it, media.ErrTooMany, lim)}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					p.log.Error("media item panicked", "channel", in.Channel.Key(), "kind", it.Kind, "panic", r)
					results[i] = itemResult{notice: p.refusal(lang, it, errMediaFailed, lim)}
				}
			}()
			results[i] = p.prepareItem(mctx, it, author, lang, lim)
		}()
	}
	wg.Wait()
	tm := takenMedia{held: heldMedia{at: p.opt.Now()}}
	seen := map[media.Kind]bool{}
	for i, r := range results {
		if r.line != "" {
			tm.lines = append(tm.lines, r.line)
		}
		if r.image != "" {
			tm.held.images = append(tm.held.images, r.image)
		}
		if r.file != nil {
			tm.held.files = append(tm.held.files, *r.file)
		}
		if r.notice != "" {
			tm.notices = append(tm.notices, r.notice)
		}
		// Once per channel: pictures are not seen, voice notes not heard.
		kind := in.Media[i].Kind
		if r.line != "" && !seen[kind] && p.unseen(kind) {
			seen[kind] = true
			if _, told := p.inbound.told.LoadOrStore(in.Channel.Key()+"\x00"+string(kind), true); !told {
				tm.notices = append(tm.notices, p.itext(lang, unseenNotice(kind)))
			}
		}
	}
	return tm
}

// unseen reports whether attachments of kind reach the character only by
// name: pictures without vision, sound without a transcriber.
func (p *Pipeline) unseen(kind media.Kind) bool {
	switch kind {
	case media.Image:
		return !p.opt.Vision
	case media.Voice, media.Audio:
		return p.opt.Transcriber == nil
	}
	return false
}

// unseenNotice is the once-per-channel notice for kind.
func unseenNotice(kind media.Kind) mediaMsg {
	if kind == media.Image {
		return mediaNoVision
	}
	return mediaNoSTT
}

// errMediaFailed is an endpoint (captions, transcriptions) that failed.
var errMediaFailed = errors.New("bot: media endpoint failed")

// errTooManyPixels is a picture too large to decode, whatever its bytes.
var errTooManyPixels = errors.New("bot: picture has too many pixels")

// errNoSource is an attachment without a download.
var errNoSource = errors.New("bot: attachment without a source")

// prepareItem turns one attachment into its line.
func (p *Pipeline) prepareItem(ctx context.Context, it media.Item, author, lang string, lim media.Limits) itemResult {
	if p.unseen(it.Kind) {
		return itemResult{line: p.nameLine(lang, it, author)}
	}
	// A text file may take four bytes a character (UTF-8's most), and a
	// byte order mark.
	limit := lim.Max(it.Kind)
	switch it.Kind {
	case media.Text:
		limit += 3
	case media.Image, media.Voice, media.Audio:
	default:
		return itemResult{}
	}
	if it.Size > limit {
		return itemResult{notice: p.refusal(lang, it, media.ErrTooLarge, lim)}
	}
	if it.Source == nil {
		return itemResult{notice: p.refusal(lang, it, errNoSource, lim)}
	}
	data, err := it.Source.Download(ctx, limit)
	if err != nil {
		p.log.Info("attachment not downloaded", "kind", it.Kind, "err", err)
		return itemResult{notice: p.refusal(lang, it, err, lim)}
	}
	var r itemResult
	if p.opt.Media.Keep.Dir != "" {
		r.file = &keptFile{name: keptName(it), data: data}
	}
	switch it.Kind {
	case media.Image:
		p.prepareImage(ctx, &r, data, it, author, lang, lim)
	case media.Voice, media.Audio:
		p.prepareSound(ctx, &r, data, it, author, lang, lim)
	case media.Text:
		quoted, cut, err := media.ReadText(data, lim.MaxTextChars)
		if err != nil {
			return itemResult{notice: p.refusal(lang, it, err, lim)}
		}
		r.line = quoteFile(it.Name, quoted, cut, p.itext(lang, mediaCut))
	}
	return r
}

// prepareImage scales a picture, captions it and keeps its pixels for the
// turn; a caption that fails leaves the name line and no pixels.
func (p *Pipeline) prepareImage(ctx context.Context, r *itemResult, data []byte, it media.Item, author, lang string, lim media.Limits) {
	select {
	case p.inbound.decode <- struct{}{}:
	case <-ctx.Done():
		*r = itemResult{notice: p.refusal(lang, it, ctx.Err(), lim)}
		return
	}
	pic, err := media.PrepareImage(data, lim.MaxSide)
	<-p.inbound.decode
	if errors.Is(err, media.ErrTooLarge) {
		err = errTooManyPixels
	}
	if err != nil {
		*r = itemResult{notice: p.refusal(lang, it, err, lim)}
		return
	}
	url := pic.DataURL()
	caption, err := p.caption(ctx, url, lang)
	if err != nil {
		p.warnFailure("caption failed", err, "kind", it.Kind)
		r.line, r.notice = p.nameLine(lang, it, author), p.refusal(lang, it, errMediaFailed, lim)
		return
	}
	r.line, r.image = "[image: "+caption+"]", url
}

// prepareSound transcribes a voice note or audio file; a transcription that
// fails leaves the name line.
func (p *Pipeline) prepareSound(ctx context.Context, r *itemResult, data []byte, it media.Item, author, lang string, lim media.Limits) {
	f := media.File{Kind: it.Kind, Name: it.Name, MIME: cmp.Or(it.MIME, media.AudioMIME(data)), Data: data, Duration: it.Duration}
	said, err := p.opt.Transcriber.Transcribe(ctx, f)
	said = oneEvent(said, lim.MaxTextChars)
	if err == nil && said == "" {
		err = &ModelError{Kind: "empty", Source: "stt"}
	}
	if err != nil {
		p.warnFailure("transcription failed", err, "kind", it.Kind)
		r.line, r.notice = p.nameLine(lang, it, author), p.refusal(lang, it, errMediaFailed, lim)
		return
	}
	r.line = "[spoken] " + said
}

// caption asks the caption model (Options.CaptionModel, else Model) for a
// short factual description of the picture at dataURL.
func (p *Pipeline) caption(ctx context.Context, dataURL, lang string) (string, error) {
	m := p.opt.CaptionModel
	if m == nil {
		m = p.opt.Model
	}
	req := ModelRequest{Messages: []PromptMessage{{Role: RoleSystem, Content: p.itext(lang, mediaCaptionSystem)}, {Role: RoleUser, Content: p.itext(lang, mediaCaptionAsk)}},
		MaxTokens: captionTokens, Images: []string{dataURL}}
	res, err := m.Stream(usage.WithKind(ctx, "caption"), req, func(string) error { return nil })
	if err != nil {
		return "", err
	}
	c := oneEvent(res.Text, captionRunes)
	if c == "" {
		return "", &ModelError{Kind: "empty", Source: "caption"}
	}
	return c, nil
}

// eventMarks are the marks that would split one line into several plain
// events (quotes make lines, asterisks actions) or close the line's
// bracket: a caption or a transcript is one event of its author.
var eventMarks = strings.NewReplacer(`"`, "'", "“", "‘", "”", "’", "「", "‘", "」", "’", "『", "‘", "』", "’", "«", "‹", "»", "›", "*", "", "[", "(", "]", ")")

// oneEvent makes model text one line of one event, at most n characters.
func oneEvent(s string, n int) string {
	return text.Clip(strings.TrimSpace(eventMarks.Replace(text.Line(s))), n)
}

// nameLine is what the character learns of an attachment it cannot see or
// hear: who sent what.
func (p *Pipeline) nameLine(lang string, it media.Item, author string) string {
	name := text.Clip(text.Line(it.Name), 100)
	switch it.Kind {
	case media.Image:
		return p.itext(lang, mediaSentImage, author, cmp.Or(name, p.itext(lang, mediaAPicture)))
	case media.Voice:
		return p.itext(lang, mediaSentVoice, author)
	}
	return p.itext(lang, mediaSentAudio, author, cmp.Or(name, p.itext(lang, mediaAnAudio)))
}

// quoteFile is a text file quoted under its name.
func quoteFile(name, body string, cut bool, cutMark string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[file: %s]", cmp.Or(text.Clip(text.Line(name), 100), "text"))
	for _, l := range strings.Split(strings.TrimRight(strings.ReplaceAll(body, "\r\n", "\n"), "\n"), "\n") {
		b.WriteString("\n> " + l)
	}
	if cut {
		b.WriteString("\n> " + cutMark)
	}
	return b.String()
}

// keptName is the file name an original is kept under (the store adds the
// message id): the platform's name, else one by kind.
func keptName(it media.Item) string {
	if it.Name != "" {
		return it.Name
	}
	switch it.Kind {
	case media.Image:
		return "image"
	case media.Voice, media.Audio:
		return "voice.ogg"
	}
	return "file.txt"
}

// refusal is the notice for an attachment refused with err.
func (p *Pipeline) refusal(lang string, it media.Item, err error, lim media.Limits) string {
	name := text.Clip(text.Line(it.Name), 80)
	if name == "" {
		name = p.itext(lang, kindNoun(it.Kind))
	}
	var why string
	switch {
	case errors.Is(err, media.ErrTooMany):
		why = p.itext(lang, mediaWhyTooMany, lim.MaxImages)
	case errors.Is(err, media.ErrTooLarge):
		limit := lim.MaxImageBytes
		if it.Kind == media.Voice || it.Kind == media.Audio {
			limit = lim.MaxAudioBytes
		}
		if it.Kind == media.Text {
			why = p.itext(lang, mediaWhyTooLongText, lim.MaxTextChars)
		} else {
			why = p.itext(lang, mediaWhyTooLarge, megabytes(limit))
		}
	case errors.Is(err, errTooManyPixels):
		why = p.itext(lang, mediaWhyTooManyPixels)
	case errors.Is(err, media.ErrMalformed):
		if it.Kind == media.Text {
			why = p.itext(lang, mediaWhyNotText)
		} else {
			why = p.itext(lang, mediaWhyNotPicture)
		}
	case errors.Is(err, media.ErrNotAllowed), errors.Is(err, errNoSource):
		why = p.itext(lang, mediaWhyNotAllowed)
	case errors.Is(err, errMediaFailed):
		if it.Kind == media.Image {
			why = p.itext(lang, mediaWhyNoCaption)
		} else {
			why = p.itext(lang, mediaWhyNoTranscript)
		}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		why = p.itext(lang, mediaWhyTimeout)
	default:
		why = p.itext(lang, mediaWhyDownload)
	}
	return p.itext(lang, mediaRefused, name, why)
}

// megabytes says a byte count in whole MB, at least 1.
func megabytes(n int64) int64 { return max(1, (n+(1<<20)/2)>>20) }

// kindNoun names an attachment that has no name.
func kindNoun(k media.Kind) mediaMsg {
	switch k {
	case media.Image:
		return mediaAPicture
	case media.Voice:
		return mediaAVoiceNote
	case media.Audio:
		return mediaAnAudio
	}
	return mediaATextFile
}

// takeHeld hands the turn that stored inbox rows as msgs (aligned) the
// pixels their messages hold, and keeps their originals in chatID's folder
// (MediaOptions.Keep). A failure to keep a file is logged: the message is
// stored either way.
func (p *Pipeline) takeHeld(chatID string, rows []models.InboxMessage, msgs []*models.Message) []string {
	var images []string
	for i, row := range rows {
		h, ok := p.inbound.take(row.ID)
		if !ok {
			continue
		}
		images = append(images, h.images...)
		for j, f := range h.files {
			name := fmt.Sprintf("%s-%d-%s", msgs[i].ID, j+1, f.name)
			if _, err := p.opt.Media.Keep.Save(chatID, name, f.data); err != nil {
				p.log.Error("keep an original", "chat_id", chatID, "err", err)
			}
		}
	}
	return images
}
