package cards

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// book parses a world-info JSON written in a test.
func book(t testing.TB, raw string) *Book {
	t.Helper()
	b, err := ParseBook([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// contents lists the inserted entries' text.
func contents(r Result) []string {
	var out []string
	for _, a := range r.Entries {
		out = append(out, a.Content)
	}
	return out
}

func TestMatchKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, text string
		cs, whole bool
		want      bool
	}{
		{"bar", "She works as a barista.", false, true, false},
		{"bar", "They meet at the bar.", false, true, true},
		{"bar", "They meet at the BAR!", false, true, true},
		{"bar", "She works as a barista.", false, false, true},
		{"Bar", "the bar", true, true, false},
		{"magical forest", "the Magical Forest glows", false, true, true},
		{"龙", "巨龙从山上飞来", false, true, true},
		{"长安", "他回到长安城", false, true, true},
		{"Ω", "xΩy", false, true, false},
		{"Ω", "the Ω sign", false, true, true},
		{"café", "un café noir", false, true, true},
		{"café", "cafés", false, true, false},
		{"/dragons?/i", "A DRAGON!", false, true, true},
		{"/^the end$/m", "a\nthe end\nb", false, true, true},
		{"/drag(?=on)/", "a dragon", false, false, true},
		{"/drag(?=on)/", "a drag race", false, false, false},
		{"/shadow(?!fang)/i", "the Shadowfang", false, true, false},
		{"/shadow(?!fang)/i", "a SHADOW falls", false, true, true},
		{"/(?<=sir )lancel/i", "Sir Lancel rides", false, true, true},
		{"/(?<=sir )lancel/i", "Lancel rides", false, true, false},
		{`/\b(\w+) \1\b/`, "it was was late", false, true, true},
		{`/\b(\w+) \1\b/`, "it was late", false, true, false},
		{`/(?<n>ha)\k<n>/`, "hahaha", false, true, true},
		{`/a.b/`, "a\nb", false, true, false},
		{`/a.b/s`, "a\nb", false, true, true},
		{`/\u00e9t\u00e9/u`, "un été chaud", false, true, true},
		{`/\p{Lu}{3}/u`, "the NASA probe", false, true, true},
		{"/drag(on/", "/drag(on/ is literal", false, false, true},
		{"/x/q", "/x/q", false, false, true},
		{`/Sword\s*\d/i`, "a SWORD 7", false, true, true},
		{`/sword\s*\d/`, "a SWORD 7", false, true, false},
		{`/sword\s*\d/`, "a sword, no number", false, true, false},
		{"长安城", "他回到长安", false, true, false},
		{"宝剑", "宝 剑", false, true, false},
		{`/sword/i`, "a ſword", false, true, true},
		{`/kin/i`, "\u212Ain", false, true, true},
		{"宝剑", "一把宝剑", false, true, true},
		{"  ", "anything", false, true, false},
	}
	for _, tt := range tests {
		if got := MatchKey(tt.key, tt.text, tt.cs, tt.whole); got != tt.want {
			t.Errorf("MatchKey(%q, %q, cs=%v, whole=%v) = %v, want %v", tt.key, tt.text, tt.cs, tt.whole, got, tt.want)
		}
	}
}

func TestActivateSecondaryLogic(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[
	 {"uid":0,"key":["gate"],"keysecondary":["key","lock"],"selective":true,"selectiveLogic":0,"content":"and-any"},
	 {"uid":1,"key":["gate"],"keysecondary":["key","lock"],"selective":true,"selectiveLogic":1,"content":"not-all"},
	 {"uid":2,"key":["gate"],"keysecondary":["key","lock"],"selective":true,"selectiveLogic":2,"content":"not-any"},
	 {"uid":3,"key":["gate"],"keysecondary":["key","lock"],"selective":true,"selectiveLogic":3,"content":"and-all"}]}`)
	tests := []struct {
		text string
		want []string
	}{
		{"the gate", []string{"not-all", "not-any"}},
		{"the gate and its key", []string{"and-any", "not-all"}},
		{"the gate, the key, the lock", []string{"and-any", "and-all"}},
		{"a key and a lock", nil},
	}
	for _, tt := range tests {
		got := contents(Activate([]*Book{b}, Scan{Messages: []string{tt.text}}, State{Turn: 1}))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestActivateOrderBudgetAndConstants(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[
	 {"uid":0,"key":["a"],"content":"low priority, long text here","order":1,"priority":1},
	 {"uid":1,"key":["a"],"content":"high","order":50,"priority":9},
	 {"uid":2,"constant":true,"content":"always","order":99,"priority":0},
	 {"uid":3,"key":["zzz"],"content":"not called","order":0}]}`)
	count := func(s string) int { return len(strings.Fields(s)) }
	r := Activate([]*Book{b}, Scan{Messages: []string{"a"}, Budget: 3, Count: count}, State{Turn: 1})
	if got, want := contents(r), []string{"high", "always"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q (constant first into the budget, then priority; placed by order)", got, want)
	}
	if len(r.Left) != 1 || r.Left[0].UID != "0" || !strings.HasPrefix(r.Left[0].Reason, "budget") {
		t.Errorf("left out: %+v, want entry 0 for the budget", r.Left)
	}
	if r.Tokens != 2 {
		t.Errorf("tokens: got %d, want 2", r.Tokens)
	}
}

func TestActivateScanDepth(t *testing.T) {
	t.Parallel()
	b := book(t, `{"scan_depth":1,"entries":[{"uid":0,"key":["old"],"content":"book depth"},{"uid":1,"key":["old"],"content":"entry depth","scanDepth":3}]}`)
	got := contents(Activate([]*Book{b}, Scan{Messages: []string{"old", "new", "newer"}}, State{Turn: 1}))
	if want := []string{"entry depth"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestActivateTimedEffects(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[
	 {"uid":0,"key":["storm"],"content":"sticky","sticky":2,"cooldown":1},
	 {"uid":1,"key":["storm"],"content":"cool","cooldown":2},
	 {"uid":2,"key":["storm"],"content":"late","delay":2}]}`)
	script := []struct {
		text string
		want []string
	}{
		{"storm", []string{"sticky", "cool"}}, // turn 1
		{"calm", []string{"sticky"}},          // 2: sticky holds
		{"storm", []string{"sticky", "late"}}, // 3: still sticky; cool cools; late now allowed
		{"storm", []string{"cool", "late"}},   // 4: sticky's cooldown
		{"storm", []string{"sticky", "late"}}, // 5
	}
	st := State{}
	for i, step := range script {
		st.Turn = i + 1
		r := Activate([]*Book{b}, Scan{Messages: []string{step.text}}, st)
		if got := contents(r); !slices.Equal(got, step.want) {
			t.Errorf("turn %d (%q): got %q, want %q; state %+v", st.Turn, step.text, got, step.want, st)
		}
		st = r.State
	}
}

func TestActivateGroupsAndProbability(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[
	 {"uid":0,"key":["sky"],"content":"blue","group":"weather","groupWeight":1},
	 {"uid":1,"key":["sky"],"content":"grey","group":"weather","groupWeight":3},
	 {"uid":2,"key":["sky"],"content":"coin","probability":50,"useProbability":true}]}`)
	for _, tt := range []struct {
		roll float64
		want []string
	}{{0.1, []string{"blue", "coin"}}, {0.9, []string{"grey"}}} {
		r := Activate([]*Book{b}, Scan{Messages: []string{"the sky"}, Rand: func() float64 { return tt.roll }}, State{Turn: 1})
		if got := contents(r); !slices.Equal(got, tt.want) {
			t.Errorf("roll %v: got %q, want %q (left %+v)", tt.roll, got, tt.want, r.Left)
		}
	}
	over := book(t, `{"entries":[
	 {"uid":0,"key":["sky"],"content":"weighted","group":"w","groupWeight":100},
	 {"uid":1,"key":["sky"],"content":"low","group":"w","groupOverride":true,"order":1},
	 {"uid":2,"key":["sky"],"content":"high","group":"w","groupOverride":true,"order":5}]}`)
	if got := contents(Activate([]*Book{over}, Scan{Messages: []string{"sky"}}, State{Turn: 1})); !slices.Equal(got, []string{"high"}) {
		t.Errorf("override: got %q, want the highest priority among overrides", got)
	}
}

func TestActivateRecursion(t *testing.T) {
	t.Parallel()
	raw := `{"recursive_scanning":%v,"entries":[
	 {"uid":0,"key":["lamp"],"content":"The lamp burns whale oil."},
	 {"uid":1,"key":["whale"],"content":"Whales sing near the reef."},
	 {"uid":2,"key":["reef"],"content":"The reef hides a wreck.","preventRecursion":true},
	 {"uid":3,"key":["wreck"],"content":"never: prevented"},
	 {"uid":4,"key":["lamp", "whale"],"content":"chat only","excludeRecursion":true},
	 {"uid":5,"key":["whale"],"content":"only by recursion","delayUntilRecursion":true}]}`
	b := book(t, fmt.Sprintf(raw, true))
	got := contents(Activate([]*Book{b}, Scan{Messages: []string{"light the lamp"}}, State{Turn: 1}))
	want := []string{"The lamp burns whale oil.", "Whales sing near the reef.", "The reef hides a wreck.", "chat only", "only by recursion"}
	if !slices.Equal(got, want) {
		t.Errorf("recursive: got %q, want %q", got, want)
	}
	got = contents(Activate([]*Book{b}, Scan{Messages: []string{"light the lamp"}, MaxRecursion: 1}, State{Turn: 1}))
	if slices.Contains(got, "The reef hides a wreck.") {
		t.Errorf("depth limit 1 still reached the second step: %q", got)
	}
	flat := book(t, fmt.Sprintf(raw, false))
	got = contents(Activate([]*Book{flat}, Scan{Messages: []string{"light the lamp"}}, State{Turn: 1}))
	if want := []string{"The lamp burns whale oil.", "chat only"}; !slices.Equal(got, want) {
		t.Errorf("not recursive: got %q, want %q", got, want)
	}
}

func TestActivateFilterDecoratorsAndDisabled(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[
	 {"uid":0,"key":["x"],"content":"for Mara","characterFilter":{"names":["Mara"]}},
	 {"uid":1,"key":["x"],"content":"not for Mara","characterFilter":{"names":["mara"],"isExclude":true}},
	 {"uid":2,"key":["nothing"],"content":"@@activate\nforced"},
	 {"uid":3,"key":["x"],"content":"@@dont_activate\nnever"},
	 {"uid":4,"key":["x"],"content":"off","disable":true},
	 {"uid":5,"key":["x"],"content":"known by Mara","extensions":{"troupe":{"known_by":["Tess","mara"]}}},
	 {"uid":6,"key":["x"],"content":"known by nobody","extensions":{"troupe":{"known_by":[]}}},
	 {"uid":7,"key":["x"],"content":"known by Tess","extensions":{"troupe":{"known_by":["Tess"]}}}]}`)
	got := contents(Activate([]*Book{b}, Scan{Messages: []string{"x"}, Character: "Mara"}, State{Turn: 1}))
	if want := []string{"for Mara", "forced", "known by Mara"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestActivateDoesNotChangeItsInput(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[{"uid":0,"key":["x"],"content":"s","sticky":1}]}`)
	st := State{Turn: 1, Timers: map[string]Timer{"/9": {StickyUntil: 5}}}
	r := Activate([]*Book{b}, Scan{Messages: []string{"x"}}, st)
	if len(st.Timers) != 1 {
		t.Errorf("input state changed: %+v", st)
	}
	if r.State.Timers["/0"].StickyUntil != 2 || r.State.Timers["/9"].StickyUntil != 5 {
		t.Errorf("state after: %+v", r.State)
	}
}

// BenchmarkActivate1000 is the speed target: a book of 1000 entries over a
// 4-message scan costs under 1 ms per turn.
func BenchmarkActivate1000(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"entries":[`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteString(",")
		}
		// One entry in 50 has a key the messages hold; the rest have an
		// English word, a phrase, a Chinese name and a regular expression
		// shared by a few.
		common := fmt.Sprintf("宝剑%d", i)
		if i%50 == 0 {
			common = "tower"
		}
		fmt.Fprintf(&sb, `{"uid":%d,"key":["keyword%d","other name %d","%s","/sword\\s*%d/i"],"keysecondary":["second%d"],"selective":%v,"content":"Entry %d text about keyword%d.","order":%d}`,
			i, i, i, common, i%10, i, i%3 == 0, i, i, i%100)
	}
	sb.WriteString(`]}`)
	bk := book(b, sb.String())
	msg := strings.Repeat("The travellers reach the old tower by the lamp light; keyword17 and keyword512 come up, then second17. ", 4)
	msgs := []string{msg, "巨龙在塔上盘旋。" + msg, msg, "What now? keyword999"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Activate([]*Book{bk}, Scan{Messages: msgs, Budget: 4096}, State{Turn: 1})
	}
}

func TestActivateKeysWithMacros(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[{"uid":0,"key":["{{char}}'s lamp"],"content":"lamp"},{"uid":1,"key":["{{user}}"],"keysecondary":["{{char}}"],"selectiveLogic":3,"content":"both"}]}`)
	env := &Env{Char: "Mara", User: "Ada"}
	got := contents(Activate([]*Book{b}, Scan{Messages: []string{"Ada lights Mara's lamp."}, Expand: env.Expand}, State{Turn: 1}))
	if want := []string{"lamp", "both"}; !slices.Equal(got, want) {
		t.Errorf("with macros expanded: got %q, want %q", got, want)
	}
	got = contents(Activate([]*Book{b}, Scan{Messages: []string{"Ada lights {{char}}'s lamp."}}, State{Turn: 1}))
	if want := []string{"lamp"}; !slices.Equal(got, want) {
		t.Errorf("without an expander the key is literal: got %q, want %q", got, want)
	}
}

// TestActivateMacroValuesInKeysStayData: a persona name is data in a key.
// In a /pattern/ key it matches only itself, however it reads as a
// regular expression (".*", "a|b"), nested in another macro or in angle
// brackets; in a literal key it stays literal even when it looks like a
// pattern ("/.*/"). The name written out fires each entry: the control.
func TestActivateMacroValuesInKeysStayData(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[`+
		`{"uid":0,"key":["/{{user}} opens the vault/i"],"content":"vault"},`+
		`{"uid":1,"key":["{{user}}"],"content":"named"},`+
		`{"uid":2,"key":["/{{random::{{user}}}} knocks/"],"content":"knock"},`+
		`{"uid":3,"key":["/{{char}} bows to <user>/"],"content":"bow"}]}`)
	tests := []struct {
		user, text string
		want       []string
	}{
		{".*", "Someone opens the vault; Bob knocks; Maren bows to Bob.", nil},
		{".*", ".* opens the vault.", []string{"vault", "named"}},
		{".*", ".* knocks, then Maren bows to .*.", []string{"named", "knock", "bow"}},
		{"a|b", "Bob opens the vault.", nil},
		{"a|b", "A|B opens the vault.", []string{"vault", "named"}},
		{"/.*/", "Nobody here at all.", nil},
		{"/.*/", "They call me /.*/ here.", []string{"named"}},
		{"Ada", "Ada opens the vault.", []string{"vault", "named"}},
	}
	for _, tt := range tests {
		env := &Env{Char: "Maren", User: tt.user}
		got := contents(Activate([]*Book{b}, Scan{Messages: []string{tt.text}, Expand: env.Expand}, State{Turn: 1}))
		if !slices.Equal(got, tt.want) {
			t.Errorf("user %q, text %q: got entries %q, want %q", tt.user, tt.text, got, tt.want)
		}
	}
}

// TestRegexKeyGivesUp: a key (with a lookahead, so JavaScript's engine
// runs it) that backtracks without end stops at its time limit and matches
// nothing, instead of holding the turn; on a short text it matches.
func TestRegexKeyGivesUp(t *testing.T) {
	t.Parallel()
	const key = `/^(?=a)(a+)+$/`
	if !MatchKey(key, "aaaa", false, false) {
		t.Fatal("the key does not match a short text")
	}
	text := strings.Repeat("a", 60) + "!"
	start := time.Now()
	if MatchKey(key, text, false, false) {
		t.Error("a search that ran out of time matched")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the search took %v", d)
	}
}

// TestBookWarnsOfBadRegexKeys: a regex key that does not compile is named,
// with its entry, in the book's warnings, and matches only its own text.
func TestBookWarnsOfBadRegexKeys(t *testing.T) {
	t.Parallel()
	b := book(t, `{"entries":[{"uid":7,"comment":"the wolf","keys":["/shadow(fang/i","wolf"],"content":"W"},
		{"uid":8,"keys":["/(?<=sir )lancel/i"],"secondary_keys":["/[z-a]/"],"selective":true,"content":"L"}]}`)
	w := b.Warnings()
	if len(w) != 2 || !strings.Contains(w[0], `entry 7 ("the wolf")`) || !strings.Contains(w[0], "/shadow(fang/i") ||
		!strings.Contains(w[1], "entry 8") || !strings.Contains(w[1], "/[z-a]/") {
		t.Fatalf("warnings: %q", w)
	}
	res := Activate([]*Book{b}, Scan{Messages: []string{"the shadowfang"}}, State{Turn: 1})
	if got := contents(res); len(got) != 0 {
		t.Errorf("a key that did not compile matched as a pattern: %q", got)
	}
	res = Activate([]*Book{b}, Scan{Messages: []string{"it reads /shadow(fang/i"}}, State{Turn: 1})
	if got := contents(res); !slices.Equal(got, []string{"W"}) {
		t.Errorf("a key that did not compile is not its own text: %q", got)
	}
}
