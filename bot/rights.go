package bot

import (
	"context"

	"troupe/models"
	"troupe/prompt"
	"troupe/text"
)

// groupMsg names a text of the rights of group members and of the model
// budgets.
type groupMsg int

const (
	msgNewNotAllowed groupMsg = iota
	msgRegenNotYours
	msgOverBudget
)

var groupTexts = map[string]map[groupMsg]string{
	"en": {
		msgNewNotAllowed: "Only members who can manage this channel (or an admin role) may end its chat with /new.",
		msgRegenNotYours: "Only the player whose message that reply answers, or someone who can manage this channel, may have it written again.",
		msgOverBudget:    "The character has used up its share of the model for this minute. Your message is saved: send /regen in a minute.",
	},
	"zh": {
		msgNewNotAllowed: "只有能管理这个频道的成员（或管理员角色）才能用 /new 结束这里的对局。",
		msgRegenNotYours: "只有这条回复所回答的那位玩家，或能管理这个频道的成员，才能让它重新生成。",
		msgOverBudget:    "角色这一分钟的模型用量已经用完。你的消息已保存，一分钟后发送 /regen 即可。",
	},
}

func (p *Pipeline) gtext(lang string, key groupMsg, args ...any) string {
	return Localized(groupTexts, lang, key, args...)
}

// mayEndChat reports whether in's author may end the channel's shared chat
// (/new): anyone outside groups, and in a group those who may manage the
// channel unless the operator opened /new to every member.
func (cm *commands) mayEndChat(in Inbound) bool {
	return !in.Channel.Group || in.CanManage || cm.p.opt.NewByAnyone
}

// maxRegenWalk bounds the replies walked back to find the message a reply
// answers: a beat has one reply per speaker, at most scene.max_cast.
const maxRegenWalk = 64

// mayRegen reports whether in's author may have head, the chat's last
// message, written again: anyone outside groups; in a group a manager, or
// a player who wrote the turn head answers (head itself when its answer
// failed). The greeting answers nobody: anyone may pick another. Authors
// are read from the stored messages, never from what the player typed.
func (cm *commands) mayRegen(ctx context.Context, in Inbound, head models.Message) (bool, error) {
	if !in.Channel.Group || in.CanManage {
		return true, nil
	}
	me := text.FitID(in.AuthorID, models.IDSize)
	m := head
	for i := 0; m.Role != prompt.RoleUser; i++ {
		if m.ParentID == "" {
			return true, nil // the chat's openings
		}
		if i >= maxRegenWalk {
			return false, nil
		}
		var err error
		if m, err = cm.store.Message(ctx, m.ParentID); err != nil {
			return false, err
		}
	}
	// The turn is the run of user messages the reply answers: any of its
	// writers may ask again.
	for i := 0; m.Role == prompt.RoleUser; i++ {
		if m.AuthorID != "" && m.AuthorID == me {
			return true, nil
		}
		if m.ParentID == "" || i >= maxRegenWalk {
			return false, nil
		}
		var err error
		if m, err = cm.store.Message(ctx, m.ParentID); err != nil {
			return false, err
		}
	}
	return false, nil
}
