package bot

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"troupe/memory"
	"troupe/models"
	"troupe/text"
)

// ownerMemory answers /memory where the asker is the space's only player
// (a direct chat, the console): the card's whole memory in the space —
// the resident summary, counts, the chat's record and ledger, every belief
// of the space and the failing work, by kind (a failure's reason, which
// can carry a provider's error, stays in the log and the CLI).
func (cm *commands) ownerMemory(ctx context.Context, lang string, cs chatState, sink Sink) error {
	rep, err := cm.p.opt.Memory.Report(ctx, cs.card.ID, cs.chat.SpaceID)
	if err != nil {
		return cm.p.internal(ctx, sink, "memory report", err)
	}
	var b strings.Builder
	cm.writeResident(&b, lang, cs, rep)
	cm.writeSummaries(ctx, &b, lang, cs)
	b.WriteString("\n\n")
	last := "—"
	if !rep.LastConsolidation.IsZero() {
		last = rep.LastConsolidation.UTC().Format(time.RFC3339)
	}
	b.WriteString(cm.p.text(lang, msgMemoryCounts, rep.Merged, rep.Owed, last))
	b.WriteString("\n")
	if rep.LastReorganize.IsZero() {
		b.WriteString(cm.mtext(lang, msgNeverReorganized))
	} else {
		c := rep.ReorganizeChange
		b.WriteString(cm.mtext(lang, msgReorganized, rep.LastReorganize.UTC().Format(time.RFC3339), c.HandbookBefore, c.HandbookAfter,
			c.Merged, c.Stale, c.Trimmed, c.BeliefsRetired, c.BeliefsMerged, c.Folded, c.Terms+c.Vectors))
	}
	cm.writeRecord(ctx, &b, lang, cs, true)
	if cm.p.opt.Recorder.Enabled && cs.chat.ID != "" {
		bs, err := cm.store.Beliefs(ctx, cs.chat.SpaceID, "")
		if err != nil {
			cm.log.Warn("beliefs", "chat_id", cs.chat.ID, "err", err)
		}
		cm.writeBeliefs(&b, lang, bs)
	}
	cm.writeFailures(&b, lang, rep.Failures, true)
	return sink.Notice(ctx, b.String())
}

// groupMemory answers /memory asked where several people read, to the
// asker alone, with only what this chat's prompts may hold: the resident
// summary as a turn here injects it, this chat's recap and record counts,
// the beliefs of its cast that rest on its own lines heard by all (not on
// another channel's, another chat's or a whisper's), and failing work by
// kind. No ledger, no reasons: the rest is the operator's (`troupe
// memory show`).
func (cm *commands) groupMemory(ctx context.Context, lang string, cs chatState, sink Sink) error {
	c, ok := sink.(Confiding)
	if !ok {
		return refuse(ctx, sink, cm.mtext(lang, msgMemoryAskPrivately))
	}
	rep, err := cm.p.opt.Memory.ChatReport(ctx, cs.card.ID, cs.chat.SpaceID, cs.chat.ID, utf8.RuneCountInString(cm.leadScene(ctx, cs)))
	if err != nil {
		return cm.p.internal(ctx, sink, "memory report", err)
	}
	var b strings.Builder
	b.WriteString(cm.mtext(lang, msgMemoryHereHeading, cs.chat.Name))
	b.WriteString("\n\n")
	cm.writeResident(&b, lang, cs, rep)
	b.WriteString("\n\n")
	recap := msgRecapNone
	switch {
	case rep.Merged > 0:
		recap = msgRecapMerged
	case rep.Owed > 0:
		recap = msgRecapOwed
	}
	b.WriteString(cm.mtext(lang, msgMemoryChatRecap, cm.mtext(lang, recap)))
	cm.writeRecord(ctx, &b, lang, cs, false)
	if cm.p.opt.Recorder.Enabled && cs.chat.ID != "" {
		bs, err := cm.store.ChatBeliefs(ctx, cs.chat.SpaceID, cs.chat.ID, cs.castNames())
		if err != nil {
			cm.log.Warn("beliefs of the chat", "chat_id", cs.chat.ID, "err", err)
		}
		cm.writeBeliefs(&b, lang, bs)
	}
	cm.writeFailures(&b, lang, rep.Failures, false)
	err = c.Confide(ctx, b.String())
	if errors.Is(err, ErrNoPrivateAnswer) {
		return refuse(ctx, sink, cm.mtext(lang, msgMemoryAskPrivately))
	}
	return err
}

// leadScene is the scene a turn of the asker's with the chat's lead would
// carry now (sceneOf); the resident summary gets what it leaves. "" when
// the recorder is off, as in a turn.
func (cm *commands) leadScene(ctx context.Context, cs chatState) string {
	if !cm.p.opt.Recorder.Enabled {
		return ""
	}
	sk, err := cm.store.Scene(ctx, cs.chat.SpaceID, cs.chat.ID, cs.speakerName())
	if err != nil {
		// A turn then goes without its scene too.
		cm.log.Warn("load scene", "chat_id", cs.chat.ID, "err", err)
		return ""
	}
	return cm.p.sceneOf(cs, cs.user, sk)
}

// writeResident writes the resident summary as a turn injects it, or
// that there is none yet, and what the injected one leaves out of the
// stored one: a person's lines past the budget stay stored and out of the
// prompts (prompt.RenderResident), which /memory must not hide.
func (cm *commands) writeResident(b *strings.Builder, lang string, cs chatState, rep memory.Report) {
	if rep.Resident == "" && rep.ResidentCutLines == 0 {
		b.WriteString(cm.p.text(lang, msgNoMemory, cs.card.Name))
		return
	}
	b.WriteString(rep.Resident)
	if rep.ResidentCutLines > 0 {
		if rep.Resident != "" {
			b.WriteString("\n\n")
		}
		b.WriteString(cm.mtext(lang, msgResidentCut, rep.ResidentCutLines, rep.ResidentHandCut))
	}
}

// maxSummaryRunes bounds each relay summary /memory shows; `troupe memory
// show` prints it whole.
const maxSummaryRunes = 700

// writeSummaries writes the chat's relay summary, the [Previously] its
// next prompt holds, shortened (in a scene, each member view's). Only the
// owner's view has it: a scene's member summary can hold what a whisper
// told that member.
func (cm *commands) writeSummaries(ctx context.Context, b *strings.Builder, lang string, cs chatState) {
	if cs.chat.ID == "" {
		return
	}
	ss, err := cm.store.ActiveSummaries(ctx, cs.chat)
	if err != nil {
		cm.log.Warn("active summaries", "chat_id", cs.chat.ID, "err", err)
		return
	}
	for _, s := range ss {
		b.WriteString("\n\n")
		if len(s.Members) > 0 {
			b.WriteString(cm.mtext(lang, msgSummaryViewHeading, strings.Join(s.Members, ", ")))
		} else {
			b.WriteString(cm.mtext(lang, msgSummaryHeading))
		}
		b.WriteString("\n")
		b.WriteString(text.Clip(s.Content, maxSummaryRunes))
		if utf8.RuneCountInString(s.Content) > maxSummaryRunes {
			b.WriteString("\n")
			b.WriteString(cm.mtext(lang, msgSummaryShortened))
		}
	}
}

// maxShownFailures bounds the failing jobs /memory lists.
const maxShownFailures = 5

// writeFailures lists the memory work that failed and stays owed: what,
// (for the owner) of which key, how often in a row, when last, when it is
// tried next. Never why: a reason can quote a story or a provider's error.
func (cm *commands) writeFailures(b *strings.Builder, lang string, fs []memory.JobFailure, whole bool) {
	for i, f := range fs {
		if i == maxShownFailures {
			b.WriteString("\n…")
			break
		}
		next := cm.p.text(lang, msgNextTrySweep)
		if !f.NextTry.IsZero() {
			next = f.NextTry.UTC().Format(time.RFC3339)
		}
		at := f.At.UTC().Format(time.RFC3339)
		b.WriteString("\n")
		if whole {
			b.WriteString(cm.p.text(lang, msgMemoryFailure, cm.jobKind(lang, f.Kind), f.Key, f.Attempts, at, next))
		} else {
			b.WriteString(cm.mtext(lang, msgMemoryFailureHere, cm.jobKind(lang, f.Kind), f.Attempts, at, next))
		}
	}
}

// jobKind names a kind of memory work.
func (cm *commands) jobKind(lang, kind string) string {
	switch kind {
	case memory.KindCompact:
		return cm.p.text(lang, msgJobCompact)
	case memory.KindRecap:
		return cm.p.text(lang, msgJobRecap)
	case memory.KindConsolidate:
		return cm.p.text(lang, msgJobConsolidate)
	case models.JobKindRecord:
		return cm.mtext(lang, msgJobRecord)
	case memory.KindReflect:
		return cm.mtext(lang, msgJobReflect)
	case memory.KindReorganize:
		return cm.mtext(lang, msgJobReorganize)
	}
	return kind
}

// memoryMsg keys the texts of /memory's views.
type memoryMsg int

const (
	msgMemoryAskPrivately memoryMsg = iota
	msgMemoryHereHeading
	msgMemoryChatRecap
	msgRecapMerged
	msgRecapOwed
	msgRecapNone
	msgMemoryFailureHere
	msgJobRecord
	msgJobReflect
	msgResidentCut
	msgSummaryHeading
	msgSummaryViewHeading
	msgSummaryShortened
	msgReorganized
	msgNeverReorganized
	msgJobReorganize
)

var memoryTexts = map[string]map[memoryMsg]string{
	"en": {
		msgMemoryAskPrivately: "What the characters remember is shown only to whoever asks, and it can't be shown to you alone here: send /memory to the bot in a direct message.",
		msgMemoryHereHeading:  "For your eyes only: what the characters of the chat \"%s\" may draw on there. Their whole memory is for the operator (troupe memory show).",
		msgMemoryChatRecap:    "This chat's recap: %s.",
		msgRecapMerged:        "merged into the character's memory",
		msgRecapOwed:          "written, not merged yet",
		msgRecapNone:          "not written yet",
		msgMemoryFailureHere:  "Owed, failing: %s (failures in a row: %d, the last at %s; next try: %s).",
		msgJobRecord:          "recording",
		msgJobReflect:         "reflection",
		msgSummaryHeading:     "The story so far, as the scribe condensed it (the next reply reads it as [Previously]):",
		msgSummaryViewHeading: "The story so far as %s saw it, condensed by the scribe (their next replies read it as [Previously]):",
		msgSummaryShortened:   "(Shortened here. The operator sees it whole with troupe memory show and can rewrite it with troupe memory edit --summary.)",
		msgResidentCut:        "Cut to fit a prompt: %d lines of the stored summary are left out or shortened (%d of them written by hand). The stored summary keeps them all: the operator sees it whole with troupe memory show.",
		msgReorganized:        "Last reorganize: %s — handbook %d → %d characters (%d entries merged, %d no live chat supported, %d dropped for the budget); beliefs: %d retired, %d merged; %d perceptions folded to their gist; %d orphaned index entries dropped.",
		msgNeverReorganized:   "Last reorganize: never.",
		msgJobReorganize:      "reorganize",
	},
	"zh": {
		msgMemoryAskPrivately: "角色的记忆只给提问的人本人看，这里没法只让你一个人看到：请在与机器人的私聊里发送 /memory。",
		msgMemoryHereHeading:  "仅你可见：对局「%s」里的角色在那里能用上的记忆。完整的记忆只给运维查看（troupe memory show）。",
		msgMemoryChatRecap:    "本局复盘：%s。",
		msgRecapMerged:        "已并入角色的记忆",
		msgRecapOwed:          "已写好，尚未合并",
		msgRecapNone:          "还没有写",
		msgMemoryFailureHere:  "待办、失败中：%s——已连续失败 %d 次，最近一次在 %s；下次尝试：%s。",
		msgJobRecord:          "记录",
		msgJobReflect:         "反思",
		msgSummaryHeading:     "前情至此，由记录员浓缩（下一次回复会把它当作【前情提要】读到）：",
		msgSummaryViewHeading: "%s 眼中的前情至此，由记录员浓缩（其下一次回复会把它当作【前情提要】读到）：",
		msgSummaryShortened:   "（此处有删节。运维可用 troupe memory show 查看全文，并可用 troupe memory edit --summary 改写。）",
		msgResidentCut:        "为放进提示已裁剪：存档的摘要有 %d 行没有放入或被截短（其中人工写的 %d 行）。存档本身一行不少，运维可用 troupe memory show 查看全文。",
		msgReorganized:        "上次整理：%s——记忆文件 %d → %d 字（合并 %d 条，无在世对局支持而删去 %d 条，超出预算删去 %d 条）；信念：退役 %d 条，合并 %d 条；%d 条感知淡化为梗概；清除孤立索引 %d 条。",
		msgNeverReorganized:   "上次整理：从未。",
		msgJobReorganize:      "整理",
	},
}

func (cm *commands) mtext(lang string, key memoryMsg, args ...any) string {
	return Localized(memoryTexts, lang, key, args...)
}
