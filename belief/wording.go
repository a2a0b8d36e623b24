package belief

// wording holds the fixed texts of one language.
type wording struct {
	reflectSystem string
	checkSystem   string
	repairBefore  string
	repairAfter   string
}

var wordings = map[string]wording{
	"en": {
		reflectSystem: `You help one character of a long role-play sort out what it has come to believe. The user message names the character, lists what it perceived since it last took stock (<perceptions>, each line "[p:ID turn=N] text") and what it already believes (<beliefs>, each line "[b:ID confidence] text"; confidence is doubtful, likely or sure).

Work only from these lines: they are everything this character saw, heard, was told or worked out. Write in the character's own view, in the language of its perceptions; a belief may be mistaken if what it perceived was. Propose changes:
- add: a new belief, something lasting that goes beyond one moment. It needs perceptions from at least two different turns, unless one of them turned the story. "sure" needs support from at least two different turns.
- strengthen: new perceptions back an existing belief.
- doubt: new perceptions speak against an existing belief. Only name the belief and the perceptions; its confidence is lowered for you.
- merge: several beliefs say the same thing; give the one text that replaces them.
- drop: newer perceptions show a belief no longer holds.
Cite perceptions by their ids, only ids shown above. Change a belief only with perceptions newer than it. Keep each text short (one or two sentences) and plain: no confidence words in brackets, no importance, no ids or turn numbers inside a text; those go in the fields. Leave out anything you cannot support; an empty answer is fine.

Answer with one JSON object and nothing else, ids written bare:
{"add": [{"text": "...", "confidence": "likely", "supports": ["ID", "ID"], "against": [], "about": ["Name"]}],
 "strengthen": [{"belief": "ID", "supports": ["ID"]}],
 "doubt": [{"belief": "ID", "against": ["ID"]}],
 "merge": [{"beliefs": ["ID", "ID"], "text": "...", "confidence": "likely", "supports": ["ID"]}],
 "drop": [{"belief": "ID", "because": ["ID"]}]}
Leave out the keys you do not need. "about" names the people, places and things the belief concerns, as they are written.`,
		checkSystem: `You check one belief a character of a role-play holds against what it perceived since. The user message gives the belief (<belief>, "[b:ID confidence] text") and the perceptions (<perceptions>, each line "[p:ID turn=N] text").

Question: can the belief and these perceptions all be true at once? Judge only a real contradiction, not a perception that is merely new, unrelated or incomplete.

Answer with one JSON object and nothing else, ids written bare:
{"compatible": true, "against": []}
or, when some perceptions contradict the belief:
{"compatible": false, "against": ["ID"]}
"against" lists every perception that contradicts it.`,
		repairBefore: "Your answer cannot be used: ",
		repairAfter:  ". Answer again with one JSON object in the required shape, with nothing before or after it.",
	},
	"zh": {
		reflectSystem: `你帮一场长篇角色扮演中的某个角色理一理它心里认定了什么。用户消息给出角色名；<perceptions> 里是它自上次整理以来的见闻，每行形如 "[p:编号 turn=回合] 内容"；<beliefs> 里是它已有的看法，每行形如 "[b:编号 把握] 内容"，把握为 doubtful（存疑）、likely（多半）或 sure（确信）之一。

只依据这些行：它们就是这个角色看到、听到、被告知或自己推想到的全部。按角色自己的眼光来写，用其见闻所用的语言；见闻有误，看法也可以有误。可提出的改动：
- add：新看法，要超出某一个瞬间、能持续成立。须有至少两个不同回合的见闻为据，除非其中一条改变了故事走向。"sure" 须有至少两个不同回合的支持。
- strengthen：新的见闻印证了已有的看法。
- doubt：新的见闻与已有的看法相悖。只需写明是哪条看法、哪些见闻，把握会替你降一级。
- merge：几条看法说的是同一件事，给出取代它们的一句话。
- drop：更新的见闻表明某条看法已不成立。
引用见闻只用上面出现过的编号。只有比某条看法更新的见闻才能改动它。每条文字简短（一两句）、朴素：文字里不写括号中的把握词、不写重要度、不写编号或回合数，这些都放在字段里。没有依据的就不写，什么都不改也可以。

只回答一个 JSON 对象，不加任何其他文字，编号直接写：
{"add": [{"text": "...", "confidence": "likely", "supports": ["编号", "编号"], "against": [], "about": ["名字"]}],
 "strengthen": [{"belief": "编号", "supports": ["编号"]}],
 "doubt": [{"belief": "编号", "against": ["编号"]}],
 "merge": [{"beliefs": ["编号", "编号"], "text": "...", "confidence": "likely", "supports": ["编号"]}],
 "drop": [{"belief": "编号", "because": ["编号"]}]}
用不到的键省略即可。"about" 写这条看法涉及的人、地点和物件，名字照原样写。`,
		checkSystem: `你要核对角色扮演中某个角色的一条看法，与它此后的见闻是否冲突。用户消息给出这条看法（<belief>，形如 "[b:编号 把握] 内容"）和见闻（<perceptions>，每行形如 "[p:编号 turn=回合] 内容"）。

问题：这条看法与这些见闻能否同时为真？只有真正矛盾才算，见闻只是新的、无关的或不完整的都不算。

只回答一个 JSON 对象，不加任何其他文字，编号直接写：
{"compatible": true, "against": []}
或在有见闻与之矛盾时：
{"compatible": false, "against": ["编号"]}
"against" 列出每一条与之矛盾的见闻。`,
		repairBefore: "你的回答无法使用：",
		repairAfter:  "。请按要求的格式重新回答一个 JSON 对象，前后不要加任何文字。",
	},
}

func wordingFor(lang string) wording {
	if w, ok := wordings[lang]; ok {
		return w
	}
	return wordings["en"]
}
