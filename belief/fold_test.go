package belief

import (
	"slices"
	"testing"
)

// TestFolded: after a run, the perceptions cited as support are folded
// into the belief they support; contradicting ones are not.
func TestFolded(t *testing.T) {
	t.Parallel()
	a, err := ParseAnswer(`{"add":[{"text":"Tess hides things from me.","supports":["p1","p2"],"against":["p3"]}],
		"strengthen":[{"belief":"b2","supports":["p6"]}],
		"doubt":[{"belief":"b3","against":["p5"]}],
		"merge":[{"beliefs":["b8","b9"],"text":"Elias keeps his word.","supports":["p4"]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	r := scene()
	r.NewID = func() string { n++; return []string{"", "01NEW1", "01NEW2"}[n] }
	ch, notes := Validate(r, a)
	if len(notes) != 0 {
		t.Errorf("notes: %v", notes)
	}
	var got []string
	for _, f := range ch.Folded {
		got = append(got, f.Perception+">"+f.Belief)
	}
	want := []string{"p1>01NEW1", "p2>01NEW1", "p6>b2", "q11>01NEW2", "q12>01NEW2", "p4>01NEW2"}
	if !slices.Equal(got, want) {
		t.Errorf("folded %q, want %q", got, want)
	}
}

func TestConfidence(t *testing.T) {
	t.Parallel()
	steps := []struct {
		c        Confidence
		up, down Confidence
	}{{Doubtful, Likely, Doubtful}, {Likely, Sure, Doubtful}, {Sure, Sure, Likely}}
	for _, s := range steps {
		if s.c.Up() != s.up || s.c.Down() != s.down {
			t.Errorf("%v: up %v down %v, want %v and %v", s.c, s.c.Up(), s.c.Down(), s.up, s.down)
		}
		back, err := ParseConfidence(" " + s.c.String() + " ")
		if err != nil || back != s.c {
			t.Errorf("ParseConfidence(%q) = %v, %v", s.c.String(), back, err)
		}
	}
	if !(Doubtful < Likely && Likely < Sure) {
		t.Error("confidences are not ordered doubtful < likely < sure")
	}
	if _, err := ParseConfidence("certain"); err == nil {
		t.Error("ParseConfidence(certain) gave no error")
	}
	if b, err := Sure.MarshalText(); err != nil || string(b) != "sure" {
		t.Errorf("MarshalText = %q, %v", b, err)
	}
	var c Confidence
	if err := c.UnmarshalText([]byte("Doubtful")); err != nil || c != Doubtful {
		t.Errorf("UnmarshalText = %v, %v", c, err)
	}
}
