package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"troupe/fakes/memorytest"
	"troupe/handbook"
	"troupe/memory"
	"troupe/models/testenv"
	"troupe/prompt"
)

// longHandResident is a resident a person wrote by hand, its lines alone over
// the 1,200-character budget: twenty lines of some 75 characters.
func longHandResident() (string, []string) {
	var hand []string
	for i := 1; i <= 20; i++ {
		hand = append(hand, fmt.Sprintf("- Hand note %02d: Qingwu keeps each guest's name in a ledger by lamplight.", i))
	}
	return handbook.ResidentHeadings["en"][0] + "\n" + strings.Join(hand, "\n"), hand
}

// Issue 30, item 9: a resident a person made longer than the budget no
// longer refuses every consolidation. With a faithful scribe the next one
// is installed at the first answer, the stored resident keeps every hand
// line, the prompt's resident is cut to the budget (the scribe's lines kept,
// the person's last lines out), and the report says what was cut.
func TestHandResidentOverBudgetConsolidates(t *testing.T) {
	for _, b := range testenv.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newWorked(t, b)
			scribe := &memorytest.Faithful{}
			w.fake.SetResponder(scribe.Respond)
			rs, hand := longHandResident()
			if n := utf8.RuneCountInString(rs); n < 1400 {
				t.Fatalf("the hand resident has %d characters, want it well over the budget", n)
			}
			must(t, w.st.EditMemory(ctx, "qingwu", space, nil, &rs, "edited by hand"))

			res, err := w.mem.Consolidate(ctx, "qingwu", space)
			if err != nil || res.Outcome != memory.Written {
				t.Fatalf("consolidate after a long hand edit: %+v, %v", res, err)
			}
			if n := scribe.Count("consolidate"); n != 1 {
				t.Errorf("the scribe was asked %d times, want one answer installed", n)
			}
			mem := w.memory(t)
			for _, h := range hand {
				if !strings.Contains(mem.Resident, h) {
					t.Errorf("the stored resident lost the hand line %q", h)
				}
			}
			if !strings.Contains(mem.Resident, "[chat:jA]") || !strings.Contains(mem.Resident, "[chat:jB]") {
				t.Fatalf("the stored resident lacks the scribe's lines:\n%s", mem.Resident)
			}

			p, err := prompt.Build(prompt.Material{AssembleInput: prompt.AssembleInput{Language: "en", System: "You are Qingwu.",
				History: []prompt.Turn{{Role: prompt.RoleUser, Content: "Do you remember me?"}}}, StoredResident: memory.ResidentOf(mem.Resident)}, w.mem.Budget())
			if err != nil {
				t.Fatal(err)
			}
			header := strings.TrimSuffix(prompt.Previously("en", "", "x"), "x")
			var injected string
			for _, m := range p.Messages {
				if strings.HasPrefix(m.Content, header) {
					injected = strings.TrimPrefix(m.Content, header)
				}
			}
			if n := utf8.RuneCountInString(injected); n == 0 || n > 1200 {
				t.Errorf("the prompt's resident has %d characters, want some and at most 1200:\n%s", n, injected)
			}
			if !strings.Contains(injected, "(jA)") || !strings.Contains(injected, "(jB)") || !strings.Contains(injected, hand[0]) {
				t.Errorf("the prompt's resident lacks the scribe's lines or the first hand line:\n%s", injected)
			}
			if strings.Contains(injected, hand[len(hand)-1]) || !strings.HasSuffix(injected, prompt.ResidentMarker["en"]) {
				t.Errorf("the prompt's resident is not cut from the last hand line, with the marker:\n%s", injected)
			}

			rep, err := w.mem.Report(ctx, "qingwu", space)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Resident != injected {
				t.Errorf("the report's resident is not the injected one:\n%s\n---\n%s", rep.Resident, injected)
			}
			if rep.ResidentCutLines == 0 || rep.ResidentHandCut != rep.ResidentCutLines || len(rep.ResidentCut) != rep.ResidentCutLines ||
				rep.ResidentCut[len(rep.ResidentCut)-1] != hand[len(hand)-1] {
				t.Errorf("the report does not say which hand lines the injected resident cuts: %d lines, %d by hand, %q",
					rep.ResidentCutLines, rep.ResidentHandCut, rep.ResidentCut)
			}
		})
	}
}
