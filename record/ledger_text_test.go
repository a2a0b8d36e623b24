package record

import "testing"

func TestLedgerText(t *testing.T) {
	snap := `{"time":"day 2, dusk","place":"the lighthouse","where":{"Maren":"the lamp room","Ada":"the kitchen"},"inventory":{"Ada":["a brass key","rope"]},"flags":{"storm":"over"},"threads":["who cut the rope"],"roster":["Maren","Ada"]}`
	for _, tc := range []struct{ lang, snap, want string }{
		{"en", snap, "Time: day 2, dusk\nScene: the lighthouse\nWhere each is: Ada (the kitchen); Maren (the lamp room)\nAda carries: a brass key; rope\nFlags: storm (over)\nOpen threads: who cut the rope\nRoster: Maren; Ada"},
		{"zh", `{"time":"第二天黄昏","inventory":{"苏砚":["茶壶"]}}`, "时间：第二天黄昏\n苏砚 身上带着：茶壶"},
		{"en", "not json", "not json"},
		{"en", "{}", ""},
	} {
		if got := LedgerText(tc.lang, tc.snap); got != tc.want {
			t.Errorf("LedgerText(%s, %.20q):\ngot  %q\nwant %q", tc.lang, tc.snap, got, tc.want)
		}
	}
}
