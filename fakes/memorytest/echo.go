package memorytest

import (
	"fmt"
	"strings"

	"troupe/fakes/openaitest"
	"troupe/handbook"
	"troupe/memory"
)

// EchoMark starts every line of the chat blocks EchoBlocks writes, so a test
// can tell whether any of them reached the memory.
const EchoMark = "ECHOED-BLOCK"

// EchoBlocks wraps a responder so that its consolidation answers also
// write, before the handbook's cross-chat sections, a block for each chat
// whose recap the prompt carries, in the seed's format: "# 局：<名>（<id>）"
// or "# Chat: <name> (<id>)", sections, and "来源：局/<id>.md" or
// "Source: chat/<id>.md" last. A model that learned that format writes
// them; the engine owns those blocks.
func EchoBlocks(next func(openaitest.Request) openaitest.Answer) func(openaitest.Request) openaitest.Answer {
	return func(req openaitest.Request) openaitest.Answer {
		a := next(req)
		if Kind(req) != "consolidate" {
			return a
		}
		lang := "en"
		if isZH(req) {
			lang = "zh"
		}
		var blocks strings.Builder
		for _, m := range recapBlockRe.FindAllStringSubmatch(req.Messages[1].Content, -1) {
			id, name := m[1], m[2]
			if lang == "zh" {
				fmt.Fprintf(&blocks, "%s\n## 人物结局\n- %s：%s\n\n## 既定事实\n- %s：本局的事实，未加标记。\n\n来源：局/%s.md\n\n",
					handbook.ChatBlockHeading("zh", name, id), EchoMark, memory.RecapTitle(m[3]), EchoMark, id)
				continue
			}
			fmt.Fprintf(&blocks, "%s\n## Characters at the end\n- %s: %s\n\n## Established facts\n- %s: the chat's facts, untagged.\n\nSource: chat/%s.md\n\n",
				handbook.ChatBlockHeading("en", name, id), EchoMark, memory.RecapTitle(m[3]), EchoMark, id)
		}
		mk := memory.Markers[lang][0] + "\n"
		a.Text = strings.Replace(a.Text, mk, mk+blocks.String(), 1)
		return a
	}
}
