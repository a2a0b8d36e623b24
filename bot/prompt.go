package bot

import (
	"encoding/json"
	"strings"

	"troupe/cards"
	"troupe/models"
)

// systemText builds the character part of the system message. creator_notes
// are for people browsing cards and are never sent.
func systemText(c cards.Card, lang, user, persona string) string {
	var b strings.Builder
	x := func(s string) string { return strings.TrimSpace(cards.Expand(s, c.Name, user)) }
	if sp := x(c.SystemPrompt); sp != "" {
		b.WriteString(sp)
	} else if lang == "zh" {
		b.WriteString("你在和" + user + "进行一场持续的角色扮演，你扮演" + c.Name + "。始终保持角色，只写" + c.Name +
			"的言行与旁白，不替" + user + "说话或行动；让故事自然推进，记住已经发生的事。")
	} else {
		b.WriteString("You are " + c.Name + " in an ongoing roleplay with " + user + ". Stay in character. Write only " + c.Name +
			"'s words and actions and the narration around them, never " + user + "'s. Let the story move on its own and keep to what has happened.")
	}
	section := func(label, text string) {
		if text = x(text); text != "" {
			b.WriteString("\n\n")
			b.WriteString(label)
			b.WriteString("\n")
			b.WriteString(text)
		}
	}
	if lang == "zh" {
		section("【"+c.Name+"】", c.Description)
		section("【性格】", c.Personality)
		section("【场景】", c.Scenario)
		section("【"+user+"】", persona)
		section("【对话示例】", c.MesExample)
	} else {
		section("["+c.Name+"]", c.Description)
		section("[Personality]", c.Personality)
		section("[Scenario]", c.Scenario)
		section("["+user+"]", persona)
		section("[Example dialogue]", c.MesExample)
	}
	return b.String()
}

// cardRow is the stored form of a card.
func cardRow(c cards.Card) models.Card {
	data, _ := json.Marshal(c)
	return models.Card{ID: c.ID, Name: c.Name, Language: c.Language, Data: string(data)}
}
