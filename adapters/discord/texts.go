package discord

import (
	"strings"

	"troupe/bot"
)

// The adapter's own user-facing texts; the pipeline writes everything else.
const (
	txtUndelivered = iota
	txtNotHere
	txtUnbound
	txtDone
	txtExpired
	txtWhispered
)

var texts = map[string]map[int]string{
	"en": {
		txtUndelivered: "The reply could not be posted here. It is saved in the story; /regen writes it again.",
		txtNotHere:     "troupe does not play here.",
		txtUnbound:     "No character plays in this channel yet. Someone who can manage channels can choose one with /card set.",
		txtDone:        "Done.",
		txtExpired:     "(This question has expired.)",
		txtWhispered:   "You whispered to %s; only you two know it.",
	},
	"zh": {
		txtUndelivered: "回复没能发到这里。它已存进故事，发送 /regen 可重新生成。",
		txtNotHere:     "troupe 不在这里演出。",
		txtUnbound:     "这个频道还没有角色。能管理频道的成员可以用 /card set 选择一个。",
		txtDone:        "完成。",
		txtExpired:     "（这个确认已过期。）",
		txtWhispered:   "你对 %s 说了悄悄话，只有你们俩知道。",
	},
}

// text returns a text in lang ("zh" or anything else for English).
func text(lang string, key int) string { return bot.Localized(texts, lang, key) }

// localeLang maps a Discord locale to a troupe language.
func localeLang(locale string) string {
	if strings.HasPrefix(locale, "zh") {
		return "zh"
	}
	return "en"
}
