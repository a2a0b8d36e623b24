package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"troupe/memory"
	"troupe/models"
	"troupe/text"
)

// Reflector is the optional part of MemoryService that runs reflection.
type Reflector interface {
	Reflect(ctx context.Context, chatID string, manual bool) (memory.Result, error)
}

// cmdReflect runs reflection for the channel's chat now, for every cast
// member with something new (a GM's command in groups). It records first
// when turns wait unrecorded.
func (cm *commands) cmdReflect(ctx context.Context, in Inbound, sink Sink) error {
	rf, ok := cm.p.opt.Memory.(Reflector)
	return cm.runNow(ctx, in, sink, manualRun{
		job: "reflect", kind: memory.KindReflect, on: ok && cm.p.opt.Recorder.Enabled,
		run: func(ctx context.Context, chatID string) (memory.Result, error) { return rf.Reflect(ctx, chatID, true) },
		say: func(lang string, o runOutcome, arg string) string {
			if o == runOff {
				return cm.rtext(lang, msgRecorderOff)
			}
			return cm.btext(lang, [...]beliefMsg{runFailed: msgReflectFailed, runWritten: msgReflected, runNotWritten: msgNotReflected}[o], arg)
		},
	})
}

// cmdBelief handles /belief forget ID (a GM's command): the belief goes and
// the perceptions it cited become new again.
func (cm *commands) cmdBelief(ctx context.Context, in Inbound, args string, sink Sink) error {
	lang := cm.p.langOf(in)
	if !in.CanManage {
		return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
	}
	sub, id, _ := strings.Cut(strings.TrimSpace(args), " ")
	id = strings.TrimSpace(id)
	if strings.ToLower(sub) != "forget" || id == "" {
		return sink.Notice(ctx, "/belief forget BELIEF-ID")
	}
	cs, ok, err := cm.commandChat(ctx, in, sink, lang, "belief")
	if !ok {
		return err
	}
	bs, err := cm.store.Beliefs(ctx, cs.chat.SpaceID, "")
	if err != nil {
		return cm.p.internal(ctx, sink, "beliefs", err)
	}
	found := false
	for _, b := range bs {
		found = found || b.ID == id
	}
	if !found {
		// Only a belief of this space: a GM manages their own stories.
		return sink.Notice(ctx, cm.btext(lang, msgNoSuchBelief, id))
	}
	if _, err := cm.store.DeleteBelief(ctx, id); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return sink.Notice(ctx, cm.btext(lang, msgNoSuchBelief, id))
		}
		return cm.p.internal(ctx, sink, "delete belief", err)
	}
	return sink.Notice(ctx, cm.btext(lang, msgBeliefDeleted, id))
}

// maxBeliefLines bounds the beliefs /memory lists.
const maxBeliefLines = 20

// writeBeliefs adds beliefs to /memory: id, character, confidence,
// evidence for and against, text.
func (cm *commands) writeBeliefs(b *strings.Builder, lang string, bs []models.BeliefView) {
	if len(bs) == 0 {
		return
	}
	b.WriteString("\n")
	b.WriteString(cm.btext(lang, msgBeliefsHeading, len(bs)))
	for i, bl := range bs {
		if i == maxBeliefLines {
			b.WriteString("\n…")
			break
		}
		b.WriteString("\n")
		b.WriteString(BeliefLine(bl))
	}
}

// BeliefLine is one belief as /memory and `troupe memory show` list it.
func BeliefLine(b models.BeliefView) string {
	var pro, con int
	for _, e := range b.Evidence {
		if e.Stance == "contradicts" {
			con++
		} else {
			pro++
		}
	}
	return fmt.Sprintf("[%s] %s (%s, +%d/-%d): %s", b.ID, b.Character, b.Confidence, pro, con, text.Clip(b.Text, 300))
}

// beliefMsg names a text of the belief commands.
type beliefMsg int

const (
	msgReflectFailed beliefMsg = iota
	msgReflected
	msgNotReflected
	msgNoSuchBelief
	msgBeliefDeleted
	msgBeliefsHeading
)

var beliefTexts = map[string]map[beliefMsg]string{
	"en": {
		msgReflectFailed:  "Reflection failed (%s); what was written stays, the rest will be tried again.",
		msgReflected:      "Reflected: %s.",
		msgNotReflected:   "No reflection: %s.",
		msgNoSuchBelief:   "There is no belief %s here.",
		msgBeliefDeleted:  "Belief %s deleted; the perceptions it cited will be reflected on again.",
		msgBeliefsHeading: "Beliefs (%d):",
	},
	"zh": {
		msgReflectFailed:  "反思失败（%s）；已写入的保留，其余稍后再试。",
		msgReflected:      "已反思：%s。",
		msgNotReflected:   "没有反思：%s。",
		msgNoSuchBelief:   "这里没有信念 %s。",
		msgBeliefDeleted:  "信念 %s 已删除；它引用的感知会被重新反思。",
		msgBeliefsHeading: "信念（%d 条）：",
	},
}

func (cm *commands) btext(lang string, key beliefMsg, args ...any) string {
	return Localized(beliefTexts, lang, key, args...)
}
