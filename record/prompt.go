package record

import (
	"encoding/json"
	"fmt"
	"strings"

	"troupe/text"
)

// Message is one chat message of a recorder request.
type Message struct {
	Role    string
	Content string
}

// Prompt builds the recorder's request for a batch: a system message with
// the task and the answer's shape, and the user message of the contract —
// <cast>, <ledger>, <entities>, <events> (and the open threads it may
// resolve).
func Prompt(lang string, in Input) []Message {
	w := recorderWords[lang]
	if w.system == "" {
		w = recorderWords["en"]
	}
	system := w.system
	if in.sharesMedia() {
		system += "\n" + w.media
	}
	if !in.Fading {
		system += "\n" + w.exact
	}
	return []Message{{Role: "system", Content: system}, {Role: "user", Content: UserMessage(in)}}
}

// mediaMarks are the marks the pipeline stores a shared picture, voice note
// or file under (bot's media texts, both languages).
var mediaMarks = []string{"[image: ", "[spoken]", "[file: ", " sent an image", " sent a voice note]", " sent an audio file", " 发来一张图片", " 发来一条语音]", " 发来一个音频文件"}

// sharesMedia reports whether an event of the batch holds a shared
// picture, voice note or file: only then does the prompt say how to read
// them (the recorder's prompt is long enough for a scribe with a small
// window).
func (in Input) sharesMedia() bool {
	for _, e := range in.Events {
		for _, m := range mediaMarks {
			if strings.Contains(e.Text, m) {
				return true
			}
		}
	}
	return false
}

// UserMessage is the contract's user message for a batch.
func UserMessage(in Input) string {
	var b strings.Builder
	b.WriteString("<cast>\n")
	for _, c := range in.Cast {
		if c.Away {
			fmt.Fprintf(&b, "- %s (away)\n", c.Name)
		} else {
			fmt.Fprintf(&b, "- %s\n", c.Name)
		}
	}
	b.WriteString("</cast>\n")
	if len(in.Players) > 0 {
		b.WriteString("<players>\n")
		for _, p := range in.Players {
			fmt.Fprintf(&b, "- %s\n", text.Line(p))
		}
		b.WriteString("</players>\n")
	}
	ledger, _ := json.Marshal(in.Ledger)
	fmt.Fprintf(&b, "<ledger>%s</ledger>\n", ledger)
	b.WriteString("<entities>\n")
	for _, e := range in.Entities {
		if e.Within != "" {
			fmt.Fprintf(&b, "- %s (%s, within: %s)\n", text.Line(e.Name), e.Kind, text.Line(e.Within))
		} else {
			fmt.Fprintf(&b, "- %s (%s)\n", text.Line(e.Name), e.Kind)
		}
	}
	b.WriteString("</entities>\n")
	if len(in.Threads) > 0 {
		b.WriteString("<threads>\n")
		for _, t := range in.Threads {
			fmt.Fprintf(&b, "[t:%s %s] %s\n", t.ID, t.Kind, text.Line(t.Text))
		}
		b.WriteString("</threads>\n")
	}
	b.WriteString("<events>\n")
	for _, e := range in.Events {
		fmt.Fprintf(&b, "[e:%s turn=%d present=%s] %s: %s\n", e.ID, e.Turn, strings.Join(e.Present, ","), text.Line(e.Actor), text.Line(e.Text))
	}
	b.WriteString("</events>")
	return b.String()
}

// RepairMessage asks once more after an answer that was not the contract:
// it names the problem, never the story.
func RepairMessage(lang string, problem error) string {
	w := recorderWords[lang]
	if w.repair == "" {
		w = recorderWords["en"]
	}
	return fmt.Sprintf(w.repair, problem)
}

type recorderWordsT struct{ system, media, exact, repair string }

var recorderWords = map[string]recorderWordsT{
	"en": {
		system: `You keep the record of a roleplay story. You are shown the newest events, each with its id, its turn, who was present and its exact words, together with the cast, the world ledger and the places and things already known. Record what happened; do not continue the story and do not invent.

Answer with one JSON object and nothing else. Every key is optional; leave out what did not change.
- "turns": [{"turn": n, "story_time": {"day": d, "minute": m}, "place": "…"}] — story time (minute 0–1439 of the day) and place per turn, only where they changed. Time never goes back.
- "events": [{"event": "<id>", "importance": 1-10, "about": ["names"], "place": "…"}] — how much each event matters to the story and who or what it is about.
- "changes": [{"turn": n, "actor": "…", "text": "…", "importance": 1-10, "pivotal": true|false, "about": [...]}] — what actually changed in the world (a door unlocked, an item handed over). "pivotal" only when it turns the story.
- "perceptions": [{"character": "…", "event": "<id>", "mode": "saw|heard|told|inferred|none", "text": "…", "gist": "…", "importance": 1-10, "via": "<id>"}] — every present cast member already perceives each event exactly as written. List only the perceptions that differ: missed ("none"), partly seen or misunderstood (their own words in "text"), told later ("told"; "via" is the event in which someone who witnessed it tells them, and they must have been present at that event), or guessed ("inferred"). "gist" is a short version for when details fade.
- "threads": [{"op": "open", "kind": "promise|mystery|goal", "text": "…", "event": "<id>"}, {"op": "resolve", "thread": "<thread id>", "event": "<id>"}]
- "ledger": {"time": "…", "place": "…", "where": {"name": "place"}, "inventory": {"name": ["item"]}, "flags": {"key": "value"}, "threads": ["…"], "roster": ["…"]} — the whole new ledger.
- "entities": [{"name": "…", "kind": "place|item|exit|lore", "within": "…"}] — places and things that appear for the first time.
- "relationships": [{"from": "…", "to": "…", "description": "…", "event": "<id>"}] — when characters meet or how one sees another changes.
- "knowledge": [{"character": "…", "entity": "…", "event": "<id>"}] — a cast member learns of a place, thing or piece of lore.
Use the ids exactly as shown, without their prefix. Name characters exactly as in <cast> and <players>. Only characters present at an event can perceive it, unless someone tells them later.`,
		media:  `Pictures, voice notes and files reach you as text: "[image: …]" is a picture its author showed those present (who showed what to whom; they saw it); "[spoken]" starts words said aloud; "[file: …]" and the "> " lines after it are text its author shared; "[… sent an image: …]" or "[… sent a voice note]" means only that it was sent is known.`,
		exact:  `Details do not fade in this story: perceptions are complete and accurate, so list only missed, told and inferred ones.`,
		repair: "Your answer could not be used (%v). Answer again with exactly one JSON object in the shape described, and nothing else.",
	},
	"zh": {
		system: `你负责为一段角色扮演故事做记录。下面给出最新的事件（每条带编号、所属回合、当时在场的人和原话），以及角色表、世界账本和已知的地点与物件。只记录发生了什么，不续写，不编造。

只回答一个 JSON 对象，别的什么都不要写。每个键都可省略，没有变化就不写。
- "turns": [{"turn": n, "story_time": {"day": d, "minute": m}, "place": "…"}]——每回合的故事时间（当天第 0–1439 分钟）和地点，只写有变化的。时间不能倒退。
- "events": [{"event": "<编号>", "importance": 1-10, "about": ["名字"], "place": "…"}]——每个事件对故事有多重要，涉及哪些人和物。
- "changes": [{"turn": n, "actor": "…", "text": "…", "importance": 1-10, "pivotal": true|false, "about": [...]}]——世界里真正发生的改变（门被打开、东西交到别人手里）。只有扭转剧情时 "pivotal" 才为 true。
- "perceptions": [{"character": "…", "event": "<编号>", "mode": "saw|heard|told|inferred|none", "text": "…", "gist": "…", "importance": 1-10, "via": "<编号>"}]——在场的每个角色默认都按原话感知到了每个事件。只列出与此不同的：没注意到（"none"）、只看到一部分或理解错了（在 "text" 里用他自己的话写）、事后听别人说起（"told"；"via" 填亲历者告诉他的那个事件，他当时必须在场）、自己推测（"inferred"）。"gist" 是细节淡去后剩下的简短版本。
- "threads": [{"op": "open", "kind": "promise|mystery|goal", "text": "…", "event": "<编号>"}, {"op": "resolve", "thread": "<线索编号>", "event": "<编号>"}]
- "ledger": {"time": "…", "place": "…", "where": {"名字": "地点"}, "inventory": {"名字": ["物品"]}, "flags": {"键": "值"}, "threads": ["…"], "roster": ["…"]}——完整的新账本。
- "entities": [{"name": "…", "kind": "place|item|exit|lore", "within": "…"}]——第一次出现的地点和物件。
- "relationships": [{"from": "…", "to": "…", "description": "…", "event": "<编号>"}]——角色初次见面，或一方对另一方的看法变了。
- "knowledge": [{"character": "…", "entity": "…", "event": "<编号>"}]——某个角色得知了一个地点、物件或设定。
编号照原样写，不带前缀。角色名与 <cast>、<players> 中的写法完全一致。只有事件发生时在场的角色才能感知它，除非事后有人告诉他。`,
		media:  `图片、语音和文件以文字出现："[image: …]" 是作者给在场的人看的图片（谁给谁看了什么；在场者看到了）；"[spoken]" 之后是说出口的话；"[file: …]" 及其后以 "> " 开头的行是作者分享的文字；"[… 发来一张图片：…]" 或 "[… 发来一条语音]" 只说明发了，内容无人知晓。`,
		exact:  `这个故事里细节不会淡去：感知都是完整准确的，所以只需列出没注意到、听人说起和推测的情况。`,
		repair: "你的回答无法使用（%v）。请重新回答：只写一个符合上述格式的 JSON 对象，别的什么都不要写。",
	},
}
