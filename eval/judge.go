package eval

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// JudgeMarker opens every judge prompt, so fakes can tell it apart.
const JudgeMarker = "[troupe-eval-judge]"

// JudgeMessage is one message of a judge prompt.
type JudgeMessage struct {
	Role, Content string
}

// JudgePrompt asks a model to grade reply against the case's gold and
// forbidden answers with a fixed rubric, in the case's language. The
// answer's last line must be "VERDICT: PASS" or "VERDICT: FAIL" (结论：通过 /
// 结论：不通过).
func JudgePrompt(c Case, reply string) []JudgeMessage {
	gold, forbidden := strings.Join(c.Gold, " | "), strings.Join(c.Forbidden, " | ")
	if c.Lang == "zh" {
		if gold == "" {
			gold = "（无：角色不该知道，说不知道即可）"
		}
		if forbidden == "" {
			forbidden = "（无）"
		}
		sys := JudgeMarker + `
你是记忆测评的阅卷人。一个角色扮演模型被问了一个关于先前剧情的问题，下面给出问题、参考答案、禁止出现的答案和它的回答。按下面的规则判定：
1. 回答里出现任何一个禁止答案（包括换个说法表达的同一件事），判不通过。
2. 参考答案为“无”时，角色应当表示不知道或不记得；只要没有编造具体内容，就判通过。
3. 否则，回答必须说出与某个参考答案意思相同的内容（措辞、语言、繁简、全角半角不同都算），才判通过；含糊其辞、答非所问判不通过。
4. 只看事实对不对，不看文笔和是否在角色中。
先用一两句话说明理由，最后单独一行写“结论：通过”或“结论：不通过”。`
		user := fmt.Sprintf("<question>\n%s\n</question>\n<gold>\n%s\n</gold>\n<forbidden>\n%s\n</forbidden>\n<reply>\n%s\n</reply>", c.Ask, gold, forbidden, reply)
		return []JudgeMessage{{"system", sys}, {"user", user}}
	}
	if gold == "" {
		gold = "(none: the character must not know; saying so is right)"
	}
	if forbidden == "" {
		forbidden = "(none)"
	}
	sys := JudgeMarker + `
You grade a memory test. A roleplay model was asked a question about an earlier part of its story; below are the question, the gold answers, the forbidden answers and its reply. Grade by these rules:
1. If the reply contains any forbidden answer (also said in other words), it fails.
2. If the gold is "none", the character should say it does not know or remember; it passes as long as it invents nothing specific.
3. Otherwise it passes only if it states something that means the same as one of the gold answers (other wording, language, script or width is fine); vague or evasive replies fail.
4. Judge only whether the facts are right, not style or staying in character.
Give your reason in one or two sentences, then a last line of exactly "VERDICT: PASS" or "VERDICT: FAIL".`
	user := fmt.Sprintf("<question>\n%s\n</question>\n<gold>\n%s\n</gold>\n<forbidden>\n%s\n</forbidden>\n<reply>\n%s\n</reply>", c.Ask, gold, forbidden, reply)
	return []JudgeMessage{{"system", sys}, {"user", user}}
}

// ErrNoVerdict is returned for a judge answer without a verdict line.
var ErrNoVerdict = errors.New("eval: the judge gave no verdict")

var verdictRe = regexp.MustCompile(`(?i)(VERDICT:\s*(PASS|FAIL)|结论[:：]\s*(不通过|通过))`)

// ParseVerdict reads the last verdict in a judge's answer: 1 for pass, 0
// for fail.
func ParseVerdict(answer string) (float64, error) {
	m := verdictRe.FindAllStringSubmatch(answer, -1)
	if len(m) == 0 {
		return 0, ErrNoVerdict
	}
	last := m[len(m)-1]
	if strings.EqualFold(last[2], "PASS") || last[3] == "通过" {
		return 1, nil
	}
	return 0, nil
}

// JudgeCase rebuilds, from a judge prompt, the case and reply it grades, so
// a fake judge can grade with Score.
func JudgeCase(system, user string) (Case, string, bool) {
	if !strings.HasPrefix(system, JudgeMarker) {
		return Case{}, "", false
	}
	field := func(tag string) string {
		_, rest, ok := strings.Cut(user, "<"+tag+">\n")
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(rest, "\n</"+tag+">")
		return v
	}
	list := func(s string) []string {
		if strings.HasPrefix(s, "(none") || strings.HasPrefix(s, "（无") {
			return nil
		}
		return strings.Split(s, " | ")
	}
	c := Case{Ask: field("question"), Gold: list(field("gold")), Forbidden: list(field("forbidden")), Lang: "en"}
	if strings.Contains(system, "阅卷人") {
		c.Lang = "zh"
	}
	c.Category = SingleFact
	if len(c.Gold) == 0 {
		c.Category = Abstention
	}
	return c, field("reply"), true
}
