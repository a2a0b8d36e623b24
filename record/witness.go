package record

import "slices"

// A character's own ledger (DESIGN "Who sees what"). The recorder writes
// one ledger for the whole chat, from the whole batch and the previous
// ledger; its text may carry anything any of them held, and no field of it
// can be trusted to mark a secret. So each cast member of a scene keeps its
// own ledger, and a batch changes it only by a rule the answer cannot get
// around: what the batch changed, and only when the character perceived
// every event of the batch. A value set while it was away never reaches it
// by being carried forward in later ledgers; only a later change it
// witnessed does.

// Witnessed reports whether name perceived every event of the batch: only
// then may what the recorder wrote from the batch reach its view.
func (in Input) Witnessed(name string) bool {
	for _, e := range in.Events {
		if !contains(e.Present, name) {
			return false
		}
	}
	return len(in.Events) > 0
}

// Witness returns the ledger a character holds after a batch turned the
// chat's ledger from old into next: view itself when it did not witness
// the batch; else view with every value the batch changed taken from next
// (a value it left as it was stays as the view has it, absent included).
// Maps go key by key and lists item by item.
func (view Ledger) Witness(old, next Ledger, witnessed bool) Ledger {
	if !witnessed {
		return view
	}
	out := Ledger{
		Time:      scalar(view.Time, old.Time, next.Time),
		Place:     scalar(view.Place, old.Place, next.Place),
		Where:     scalars(view.Where, old.Where, next.Where),
		Flags:     scalars(view.Flags, old.Flags, next.Flags),
		Threads:   items(view.Threads, old.Threads, next.Threads),
		Roster:    items(view.Roster, old.Roster, next.Roster),
		Inventory: map[string][]string{},
	}
	for _, k := range keys(view.Inventory, old.Inventory, next.Inventory) {
		if l := items(view.Inventory[k], old.Inventory[k], next.Inventory[k]); len(l) > 0 {
			out.Inventory[k] = l
		}
	}
	if len(out.Inventory) == 0 {
		out.Inventory = nil
	}
	return out
}

func scalar(view, old, next string) string {
	if old != next {
		return next
	}
	return view
}

func scalars(view, old, next map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range keys(view, old, next) {
		v, inView := view[k]
		o, inOld := old[k]
		n, inNext := next[k]
		switch {
		case inOld != inNext || o != n:
			if inNext {
				out[k] = n
			}
		case inView:
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// items keeps the view's items the batch left alone, drops those it
// removed and adds those it added, in next's order (the view's own items
// next no longer has come last).
func items(view, old, next []string) []string {
	var out []string
	for _, x := range next {
		if !slices.Contains(old, x) || slices.Contains(view, x) {
			out = appendNew(out, x)
		}
	}
	for _, x := range view {
		if !slices.Contains(next, x) && !slices.Contains(old, x) {
			out = appendNew(out, x)
		}
	}
	return out
}

func appendNew(list []string, x string) []string {
	if slices.Contains(list, x) {
		return list
	}
	return append(list, x)
}

// keys lists the keys of the maps, each once, sorted.
func keys[V any](maps ...map[string]V) []string {
	var out []string
	for _, m := range maps {
		for k := range m {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
