package bot

import (
	"context"
	"errors"

	"troupe/memory"
)

// cmdCompact compacts the channel's chat now, with the manual minimum, and
// says what it did or why not.
func (cm *commands) cmdCompact(ctx context.Context, in Inbound, sink Sink) error {
	lang := cm.p.langOf(in)
	l := cm.p.lane(in.Channel.Key())
	if !l.busy.TryLock() {
		return sink.Notice(ctx, cm.p.text(lang, msgBusy))
	}
	cs, err := cm.p.resolve(ctx, in)
	l.busy.Unlock()
	if errors.Is(err, ErrNoCard) {
		return sink.Notice(ctx, cm.p.text(lang, msgNoCard))
	}
	if err != nil {
		return cm.p.internal(ctx, sink, "compact", err)
	}
	if cm.p.opt.Memory == nil {
		return sink.Notice(ctx, cm.p.text(lang, msgCompactFailed, "memory is not configured"))
	}
	unlock := cm.p.crossLock(ctx, memory.JobLockKey(memory.KindCompact, cs.chat.ID))
	res, err := cm.p.opt.Memory.Compact(ctx, cs.chat.ID, true)
	unlock()
	if err != nil {
		cm.p.warnFailure("manual compaction failed", err, "chat_id", cs.chat.ID)
		var rej *memory.RejectedError
		if errors.As(err, &rej) {
			return sink.Notice(ctx, cm.p.text(lang, msgCompactFailed, rej.Reason))
		}
		return sink.Notice(ctx, cm.p.text(lang, msgCompactFailed, errorKind(err)))
	}
	switch res.Outcome {
	case memory.Written:
		return sink.Notice(ctx, cm.p.text(lang, msgCompacted, res.Reason))
	default:
		return sink.Notice(ctx, cm.p.text(lang, msgNotCompacted, localReason(lang, res.Reason)))
	}
}

// errorKind is a short, safe description of err for users.
func errorKind(err error) string {
	var me *ModelError
	if errors.As(err, &me) {
		return "model " + me.Kind
	}
	if errors.Is(err, memory.ErrStaleRetries) {
		return "the story kept moving"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "internal error"
}

func localReason(lang, reason string) string {
	if lang != "zh" {
		return reason
	}
	switch reason {
	case memory.ReasonTooFewBeats:
		return "还没有足够早的剧情可压缩"
	case memory.ReasonTooLittleCut:
		return "可压缩的早期文字太少"
	case memory.ReasonOff:
		return "自动压缩已关闭"
	}
	return reason
}
