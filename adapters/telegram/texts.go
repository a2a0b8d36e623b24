package telegram

import (
	"strings"

	"troupe/bot"
)

// textKey names one of the adapter's own user-facing texts; the pipeline
// writes everything else.
type textKey int

const (
	txtDenied textKey = iota
	txtNotHere
	txtChooseCard
	txtYes
	txtNo
	txtStartPrivate
	txtSwipeNew
)

var texts = map[string]map[textKey]string{
	"en": {
		txtDenied:     "Sorry, this bot plays only for the people its owner has invited.",
		txtNotHere:    "This bot does not play in this chat.",
		txtChooseCard: "Choose a character to play with:",
		txtYes:        "Yes",
		txtNo:         "Cancel",
		txtSwipeNew:   "New",
		txtStartPrivate: "That answer is for you alone, so it goes to a private chat, and you have none with me yet: " +
			"open a chat with @%s, press Start, then ask again.",
	},
	"zh": {
		txtDenied:       "抱歉，这个机器人只为主人邀请的人演出。",
		txtNotHere:      "这个机器人不在这里演出。",
		txtChooseCard:   "选择要一起演的角色：",
		txtYes:          "确认",
		txtNo:           "取消",
		txtSwipeNew:     "新的",
		txtStartPrivate: "这个回答只给你一个人看，会发到私聊里，可你还没和我私聊过：请先打开和 @%s 的对话，点“开始”，再问一次。",
	},
}

// langOf maps a Telegram language_code to the adapter's languages.
func langOf(code string) string {
	if strings.HasPrefix(strings.ToLower(code), "zh") {
		return "zh"
	}
	return "en"
}

func say(lang string, key textKey, args ...any) string {
	return bot.Localized(texts, lang, key, args...)
}
