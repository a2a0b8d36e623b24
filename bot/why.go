package bot

import (
	"context"
	"strings"
	"time"

	"troupe/memory"
	"troupe/text"
)

// whyMsg keys the texts of /why.
type whyMsg int

const (
	msgWhyOff whyMsg = iota
	msgWhyNone
	msgWhyHeading
	msgWhyNothingPicked
)

var whyTexts = map[string]map[whyMsg]string{
	"en": {
		msgWhyOff:           "Recall diagnostics are off: set recall.diagnostics: true to see why the character recalled what it did.",
		msgWhyNone:          "No recall has been kept for this chat yet.",
		msgWhyHeading:       "What the last turn recalled, and why (scores are never shown to the model):",
		msgWhyNothingPicked: "Nothing was found that bears on the last message.",
	},
	"zh": {
		msgWhyOff:           "召回诊断未开启：设置 recall.diagnostics: true 才能看到角色为何想起这些。",
		msgWhyNone:          "这个对话还没有保存过召回记录。",
		msgWhyHeading:       "上一轮想起了什么、为什么（分数从不发给模型）：",
		msgWhyNothingPicked: "没有找到与上一条消息有关的记忆。",
	},
}

func (cm *commands) wtext(lang string, key whyMsg) string { return Localized(whyTexts, lang, key) }

// cmdWhy shows a GM (anyone in a private chat) the last turn's recall: the
// candidates with their scores by component, which were picked and why.
// It reads the inspector's record; the model never sees it.
func (cm *commands) cmdWhy(ctx context.Context, in Inbound, sink Sink) error {
	lang := cm.p.langOf(in)
	if in.Channel.Group && !in.CanManage {
		return sink.Notice(ctx, cm.p.text(lang, msgNotAllowed))
	}
	if !cm.p.opt.Recall.Diagnostics {
		return sink.Notice(ctx, cm.wtext(lang, msgWhyOff))
	}
	cs, ok, err := cm.commandChat(ctx, in, sink, lang, "why")
	if !ok {
		return err
	}
	// The last turn's record is written beside its reply: wait for it
	// (its write gives up after 10 s), or /why shows the turn before.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	cm.p.notes.wait(wctx, cs.chat.ID)
	cancel()
	ds, err := cm.store.RecallDiagnostics(ctx, cs.chat.ID, "", 1)
	if err != nil {
		return cm.p.internal(ctx, sink, "why", err)
	}
	if len(ds) == 0 {
		return sink.Notice(ctx, cm.wtext(lang, msgWhyNone))
	}
	rep, err := memory.ParseRecallReport(ds[0].Data)
	if err != nil {
		return cm.p.internal(ctx, sink, "why", err)
	}
	var b strings.Builder
	b.WriteString(cm.wtext(lang, msgWhyHeading) + "\n")
	if len(rep.Items) == 0 {
		b.WriteString(cm.wtext(lang, msgWhyNothingPicked))
	} else {
		b.WriteString(text.Clip(rep.Text(lang), 3500))
	}
	return sink.Notice(ctx, b.String())
}
