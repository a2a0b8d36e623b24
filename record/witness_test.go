package record

import (
	"reflect"
	"testing"
)

func TestWitness(t *testing.T) {
	t.Parallel()
	// The chat's ledger before and after a batch: the batch moved the
	// time, set a flag, gave Tess a vial and opened a thread; the gate
	// flag and the key were set before and left alone.
	old := Ledger{Time: "day 3", Place: "the gate", Flags: map[string]string{"gate": "open"},
		Inventory: map[string][]string{"Mara": {"key"}}, Threads: []string{"Who took the key?"}}
	next := Ledger{Time: "day 4", Place: "the gate", Flags: map[string]string{"gate": "open", "well": "poisoned"},
		Inventory: map[string][]string{"Mara": {"key"}, "Tess": {"vial"}}, Threads: []string{"Who took the key?", "Who poisoned the well?"}}
	tests := []struct {
		name      string
		view      Ledger
		witnessed bool
		want      Ledger
	}{
		{"missed the batch: the view stays", Ledger{Time: "day 2"}, false, Ledger{Time: "day 2"}},
		{"saw the batch with the chat's ledger: the chat's new one", old, true, next},
		{"saw the batch after missing one: only what the batch changed",
			Ledger{Time: "day 2", Place: "the gate"}, true,
			Ledger{Time: "day 4", Place: "the gate", Flags: map[string]string{"well": "poisoned"},
				Inventory: map[string][]string{"Tess": {"vial"}}, Threads: []string{"Who poisoned the well?"}}},
		{"a value the view holds that the chat lost meanwhile stays",
			Ledger{Time: "day 2", Flags: map[string]string{"gate": "shut"}, Threads: []string{"Where is Elias?"}}, true,
			Ledger{Time: "day 4", Flags: map[string]string{"gate": "shut", "well": "poisoned"},
				Inventory: map[string][]string{"Tess": {"vial"}}, Threads: []string{"Who poisoned the well?", "Where is Elias?"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.view.Witness(old, next, tt.witnessed); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// A batch that removes: the flag and the thread go, the key goes.
	after := Ledger{Time: "day 5", Place: "the gate", Inventory: map[string][]string{"Mara": {}}}
	got := next.Witness(next, after, true)
	if want := (Ledger{Time: "day 5", Place: "the gate"}); !reflect.DeepEqual(got, want) {
		t.Errorf("after removals got %+v, want %+v", got, want)
	}
}

func TestWitnessed(t *testing.T) {
	t.Parallel()
	in := batch()
	for name, want := range map[string]bool{"Tess": true, "Mara": false, "Elias": false, "Nobody": false} {
		if got := in.Witnessed(name); got != want {
			t.Errorf("Witnessed(%s) = %v, want %v", name, got, want)
		}
	}
	if (Input{}).Witnessed("Tess") {
		t.Error("an empty batch is witnessed")
	}
}
