package bot

import "fmt"

// msgKey names a user-facing text.
type msgKey int

const (
	msgShuttingDown msgKey = iota
	msgModelFailed
	msgModelTimeout
	msgModelRateLimited
	msgModelAuth
	msgInternal
	msgNoCard
	msgHelp
	msgNewChat
	msgNothingToRegen
	msgUnknownCommand
	msgBusy
	msgEmpty
	msgNotAllowed
	msgUnknownCard
	msgCardSet
	msgConfirmGone
	msgNotYours
	msgCancelled
	msgCompacted
	msgNotCompacted
	msgCompactFailed
	msgNothingToForget
	msgAlreadyForgotten
	msgNoSuchChat
	msgForgetQuestion
	msgForgotten
	msgRecapDeleted
	msgNoMemory
	msgMemoryCounts
	msgMemoryFailure
	msgJobCompact
	msgJobRecap
	msgJobConsolidate
	msgNextTrySweep
	msgTooLarge
	msgInterrupted
	msgMentionOnly
	msgTooLong
	msgSlowDown
	msgNotStored
	msgRefusedContext
	msgLeftOut
	msgCardFillsContext
	msgPanicked
)

var texts = map[string]map[msgKey]string{
	"en": {
		msgShuttingDown:     "troupe is restarting; please send that again in a minute.",
		msgModelFailed:      "The model didn't answer (%s). Your message is saved: send /regen to try again.",
		msgModelTimeout:     "The model took too long to answer. Your message is saved: send /regen to try again.",
		msgModelRateLimited: "The model is rate limited right now. Your message is saved: send /regen in a little while.",
		msgModelAuth:        "The model API refused troupe's credentials; ask whoever runs troupe to check the API key. Your message is saved.",
		msgInternal:         "Something went wrong on troupe's side. Your message is saved: send /regen to try again.",
		msgNoCard:           "No character is bound here yet. Use /card set NAME to choose one.",
		msgHelp: "Commands:\n" +
			"/new — start a new chat with the character (the old one is remembered)\n" +
			"/regen — write the last reply again\n" +
			"/swipe [N] — a new alternative of the last reply, every earlier one kept; with N, alternative N again (1 = the first); on the greeting, the card's next greeting\n" +
			"/compact — condense older turns into the relay summary now\n" +
			"/record — record what happened so far into the characters' memories now\n" +
			"/reflect — let the characters form beliefs from what they perceived, now (GM)\n" +
			"/belief forget ID — delete one belief; its perceptions are reflected on again (GM)\n" +
			"/why — what the last turn recalled and why, with recall.diagnostics on (GM)\n" +
			"/forget [chat-id] — erase this chat (or an earlier one) from the character's memory\n" +
			"/chats — list this channel's chats\n" +
			"/memory — show what the character remembers of earlier chats\n" +
			"/persona NAME [| description] — how the character should call and see you\n" +
			"/card list | show | set NAME — the characters you can play with\n" +
			"/cast [add CARD | remove NAME | away NAME | back NAME] — the characters of this scene (changes: GM)\n" +
			"/whisper NAME text — a line only NAME hears; NAME answers\n" +
			"/voice [on | off] — replies here also spoken aloud, or text only (in groups: GM)\n" +
			"/picture [what] — a picture of the scene, kept in the story as something the character showed\n" +
			"/help — this list",
		msgNewChat:          "New chat started with %s.",
		msgNothingToRegen:   "There is no reply to write again yet.",
		msgUnknownCommand:   "Unknown command %s.",
		msgBusy:             "A reply is being written; try again when it is done.",
		msgEmpty:            "The model returned an empty reply. Your message is saved: send /regen to try again.",
		msgNotAllowed:       "Only members who can manage messages here (or an admin role) may do that.",
		msgUnknownCard:      "No card called %q. /card list shows them.",
		msgCardSet:          "This channel now plays %s.",
		msgConfirmGone:      "That question has expired or was already answered; nothing was changed.",
		msgNotYours:         "Only the person who asked can answer that.",
		msgCancelled:        "Cancelled; nothing was changed.",
		msgCompacted:        "Compacted: the relay summary now %s.",
		msgNotCompacted:     "Nothing compacted: %s.",
		msgCompactFailed:    "Compaction failed (%s); nothing was changed and it will be tried again.",
		msgNothingToForget:  "There is no chat here to forget.",
		msgAlreadyForgotten: "That chat is already forgotten.",
		msgNoSuchChat:       "No chat %q in this channel; /chats lists them.",
		msgForgetQuestion:   "Forget the chat \"%s\" (%s)? Its messages, summaries and recap are deleted, and the character's memory keeps only what other chats also support. This cannot be undone.",
		msgForgotten:        "Forgotten: \"%s\" is gone from the character's memory.",
		msgRecapDeleted:     "The recap of chat %s is deleted; the memory will be rebuilt from the remaining chats.",
		msgNoMemory:         "%s remembers no earlier chats here yet.",
		msgMemoryCounts:     "Chats merged: %d · recaps owed: %d · last consolidation: %s",
		msgMemoryFailure:    "Owed, failing: %s of %s (failures in a row: %d, the last at %s; next try: %s). Why is for the operator: the log, or troupe memory show.",
		msgJobCompact:       "compaction",
		msgJobRecap:         "recap",
		msgJobConsolidate:   "consolidation",
		msgNextTrySweep:     "at the next turn or sweep",
		msgTooLong:          "That message is too long (the limit is %d characters); it was not sent to the character. Please shorten it.",
		msgNotStored:        "troupe can't reach its database right now, so that message was not kept; please send it again in a moment.",
		msgPanicked:         "Something broke inside troupe while handling that, so it was set aside (the operator has the details). Please send it again or try something else.",
		msgSlowDown:         "You're writing faster than the character can keep up; please wait a moment before the next message.",
		msgMentionOnly:      "Mention-only is %s: with on, the character answers only messages that mention it or reply to it.",
		msgInterrupted:      "The reply was interrupted (troupe is restarting). Your message is saved: send /regen when it is back.",
		msgTooLarge:         "Your last message does not fit the model's context window, so it was kept but not answered. Please shorten it or split it; the chat goes on with your next message.",
		msgRefusedContext:   "That message is too long for this character's model: it is about %d tokens, and at most about %d fit beside the character. It was kept for the record but not sent; please shorten it or split it into several messages.",
		msgLeftOut:          "Part of the recent story did not fit the model's context window and was left out of this reply; it is being condensed into the summary.",
		msgCardFillsContext: "This character's card alone takes about %d tokens, and the model's context leaves %d for the prompt: no message can be answered. Ask whoever runs troupe for a shorter card or a model with a larger context_window. Your message was kept for the record.",
	},
	"zh": {
		msgShuttingDown:     "troupe 正在重启，请稍后再发一次。",
		msgModelFailed:      "模型没有回应（%s）。你的消息已保存，发送 /regen 可重试。",
		msgModelTimeout:     "模型回应超时。你的消息已保存，发送 /regen 可重试。",
		msgModelRateLimited: "模型暂时限流。你的消息已保存，稍后发送 /regen 重试。",
		msgModelAuth:        "模型接口拒绝了 troupe 的凭据，请联系部署者检查 API 密钥。你的消息已保存。",
		msgInternal:         "troupe 内部出错了。你的消息已保存，发送 /regen 可重试。",
		msgNoCard:           "这里还没有绑定角色。用 /card set 角色名 选择一个。",
		msgHelp: "命令：\n" +
			"/new — 和角色开始新的一局（旧的一局会被记住）\n" +
			"/regen — 重写上一条回复\n" +
			"/swipe [N] — 为上一条回复写一个新版本，之前的版本都保留；带 N 时重新显示第 N 个版本（1 是第一个）；对开场白则换成角色卡的下一个开场白\n" +
			"/compact — 立即把较早的剧情压进前情提要\n" +
			"/record — 立即把目前的剧情记进各个角色的记忆\n" +
			"/reflect — 立即让角色从感知中形成信念（GM）\n" +
			"/belief forget ID — 删除一条信念，它引用的感知会被重新反思（GM）\n" +
			"/why — 开启 recall.diagnostics 时，查看上一轮想起了什么、为什么（GM）\n" +
			"/forget [局id] — 把这一局（或更早的某一局）从角色记忆里彻底删除\n" +
			"/chats — 列出这个频道的各局\n" +
			"/memory — 查看角色记得的往局\n" +
			"/persona 名字 [| 描述] — 角色如何称呼、看待你\n" +
			"/card list | show | set 名字 — 可选的角色\n" +
			"/cast [add 角色卡 | remove 名字 | away 名字 | back 名字] — 这一幕的角色阵容（修改需 GM）\n" +
			"/whisper 名字 内容 — 只有该角色听得到的悄悄话，由它回答\n" +
			"/voice [on | off] — 这里的回复同时发语音，或只发文字（群里需 GM）\n" +
			"/picture [内容] — 画一幅此刻场景的图，作为角色展示的东西记入剧情\n" +
			"/help — 本列表",
		msgNewChat:          "已和%s开始新的一局。",
		msgNothingToRegen:   "还没有可以重写的回复。",
		msgUnknownCommand:   "未知命令 %s。",
		msgBusy:             "正在写回复，请稍后再试。",
		msgEmpty:            "模型返回了空回复。你的消息已保存，发送 /regen 可重试。",
		msgNotAllowed:       "只有能管理这里消息的成员（或管理员角色）才能这样做。",
		msgUnknownCard:      "没有叫 %q 的角色。/card list 可查看全部。",
		msgCardSet:          "这个频道现在由%s出演。",
		msgConfirmGone:      "这个确认已过期或已处理，没有做任何改动。",
		msgNotYours:         "只有发起的人才能回答。",
		msgCancelled:        "已取消，没有做任何改动。",
		msgCompacted:        "已压缩：前情提要现在 %s。",
		msgNotCompacted:     "没有压缩：%s。",
		msgCompactFailed:    "压缩失败（%s），没有任何改动，稍后会再试。",
		msgNothingToForget:  "这里没有可以遗忘的对局。",
		msgAlreadyForgotten: "这一局已经被遗忘了。",
		msgNoSuchChat:       "这个频道里没有对局 %q，/chats 可查看全部。",
		msgForgetQuestion:   "要遗忘「%s」（%s）吗？它的消息、摘要和复盘都会删除，角色的记忆里只保留其他局也支持的内容。此操作无法撤销。",
		msgForgotten:        "已遗忘：「%s」已从角色的记忆里删除。",
		msgRecapDeleted:     "对局 %s 的复盘已删除，记忆将用其余各局重建。",
		msgNoMemory:         "%s在这里还没有关于往局的记忆。",
		msgMemoryCounts:     "已合并的局：%d · 待合并：%d · 上次合并：%s",
		msgMemoryFailure:    "待办、失败中：%s（%s）——已连续失败 %d 次，最近一次在 %s；下次尝试：%s。原因见运维日志或 troupe memory show。",
		msgJobCompact:       "压缩",
		msgJobRecap:         "复盘",
		msgJobConsolidate:   "合并",
		msgNextTrySweep:     "下一轮对话或下次巡检时",
		msgTooLong:          "这条消息太长了（上限 %d 字），没有交给角色，请缩短后再发。",
		msgNotStored:        "troupe 暂时连不上数据库，这条消息没有保存；请稍后再发一次。",
		msgPanicked:         "troupe 处理这条时内部出错，已把它搁置（详情在运维日志里）。请重新发送，或换一种说法。",
		msgSlowDown:         "你发得比角色回得快，请稍等片刻再发下一条。",
		msgMentionOnly:      "仅提及模式：%s。开启后，角色只回应提及它或回复它的消息。",
		msgInterrupted:      "回复被打断了（troupe 正在重启）。你的消息已保存，恢复后发送 /regen 即可。",
		msgTooLarge:         "你的上一条消息超出了模型的上下文长度，已保存但无法回复。请缩短或分成几条再发；下一条消息起对话照常继续。",
		msgRefusedContext:   "这条消息太长，角色所用的模型装不下：约 %d 个 token，而角色设定之外最多只能容纳约 %d 个。消息已留档但没有交给角色，请缩短或分成几条再发。",
		msgLeftOut:          "最近的部分剧情超出了模型的上下文长度，这次回复没有看到它们；这些内容正在压缩进摘要。",
		msgCardFillsContext: "这个角色卡本身就约占 %d 个 token，而模型上下文留给提示的只有 %d 个，任何消息都无法回复。请联系部署者换用更短的角色卡或 context_window 更大的模型。你的消息已留档。",
	},
}

func (p *Pipeline) text(lang string, key msgKey, args ...any) string {
	return Localized(texts, lang, key, args...)
}

// Localized returns texts[lang][key], from the English table when lang has
// none, formatted with args when there are any.
func Localized[K comparable](texts map[string]map[K]string, lang string, key K, args ...any) string {
	t, ok := texts[lang]
	if !ok {
		t = texts["en"]
	}
	if len(args) == 0 {
		return t[key]
	}
	return fmt.Sprintf(t[key], args...)
}
