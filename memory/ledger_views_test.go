package memory

import (
	"testing"

	"troupe/models"
	"troupe/record"
)

// TestMemberLedgers: after a batch, a member that perceived all of it
// takes what it changed, one that missed an event keeps its ledger, and a
// member that joined the scene starts from none; a batch that leaves the
// ledger alone writes no member ledger; members with one story have one
// ledger.
func TestMemberLedgers(t *testing.T) {
	t.Parallel()
	chat := models.Chat{ID: "c", CardID: "lantern"}
	cast := []models.CastMember{{Name: "Maren", CardID: "lantern"}, {Name: "Iris", CardID: "iris"}, {Name: "苏砚", CardID: "tea"}, {Name: "Wren", CardID: "wren"}}
	old := `{"place":"the lighthouse"}`
	b := models.RecordBatch{Chat: chat, Ledger: old, Views: map[string]string{"Iris": old, "苏砚": old}}
	in := record.Input{Ledger: record.Ledger{Place: "the lighthouse"}, Events: []record.Event{
		{ID: "e1", Present: []string{"Maren", "Iris", "苏砚", "Wren", "Ada"}},
		{ID: "e2", Present: []string{"Maren", "Iris", "Wren", "Ada"}},
	}}
	next := record.Ledger{Place: "the lighthouse", Flags: map[string]string{"vault": "the blue book"}}
	got := memberLedgers(b, in, record.Record{Ledger: &next}, cast)
	want := map[string]string{
		"Maren": `{"place":"the lighthouse","flags":{"vault":"the blue book"}}`,
		"Iris":  `{"place":"the lighthouse","flags":{"vault":"the blue book"}}`,
		"苏砚":    old,
		"Wren":  `{"flags":{"vault":"the blue book"}}`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s's ledger = %s, want %s", name, got[name], w)
		}
	}
	if got := memberLedgers(b, in, record.Record{}, cast); got != nil {
		t.Errorf("a batch that kept the ledger wrote %v", got)
	}
}
