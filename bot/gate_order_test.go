package bot

import (
	"context"
	"testing"
	"time"
)

// gateOrder holds a one-slot gate's slot, lines up the waits given (name,
// finishing or not, and a context), lets go and reports the order the
// slot went in: a wait whose context ends reports "NAME gave up".
type gateOrder struct {
	t        *testing.T
	g        gate
	hold     func()
	order    chan string
	releases chan func()
}

func newGateOrder(t *testing.T, longLine int) *gateOrder {
	g := newGate(1)
	g.longLine = longLine
	hold, _, err := g.enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &gateOrder{t: t, g: g, hold: hold, order: make(chan string, 16), releases: make(chan func(), 16)}
}

// wait lines up one turn and returns once it is in line.
func (o *gateOrder) wait(ctx context.Context, name string, finish bool) {
	enter := o.g.enter
	if finish {
		enter = o.g.enterToFinish
	}
	n := o.g.waiting.Load()
	go func() {
		release, _, err := enter(ctx)
		if err != nil {
			o.order <- name + " gave up"
			return
		}
		o.order <- name
		o.releases <- release
	}()
	for deadline := time.Now().Add(5 * time.Second); o.g.waiting.Load() == n; {
		if time.Now().After(deadline) {
			o.t.Fatalf("%s never got in line", name)
		}
		time.Sleep(time.Millisecond)
	}
}

// expect lets the slot go and checks who gets it, one after another.
func (o *gateOrder) expect(want ...string) {
	o.t.Helper()
	o.hold()
	for _, w := range want {
		select {
		case got := <-o.order:
			if got != w {
				o.t.Fatalf("the slot went to %s, want %s", got, w)
			}
		case <-time.After(5 * time.Second):
			o.t.Fatalf("nobody got the slot; want %s", w)
		}
		(<-o.releases)()
	}
	if o.g.waiting.Load() != 0 || o.g.used != 0 {
		o.t.Fatalf("after the line: %d waiting, %d slots used; want none", o.g.waiting.Load(), o.g.used)
	}
}

// TestGateServesInOrderOfArrival: while few turns wait to start, a turn
// storing its reply waits its turn like the rest. A wait given up leaves
// the line.
func TestGateServesInOrderOfArrival(t *testing.T) {
	o := newGateOrder(t, 3)
	ctx := context.Background()
	gone, giveUp := context.WithCancel(ctx)
	o.wait(ctx, "start-1", false)
	o.wait(gone, "start-2", false)
	o.wait(ctx, "finish-1", true)
	o.wait(ctx, "start-3", false)
	giveUp()
	if got := <-o.order; got != "start-2 gave up" {
		t.Fatalf("first out of line: %s, want start-2 giving up", got)
	}
	o.expect("start-1", "finish-1", "start-3")
}

// TestGateLetsFinishingTurnsGoFirstInALongLine: once more turns wait to
// start than the long line allows, a turn storing its reply goes ahead of
// all of them; the starts keep their order.
func TestGateLetsFinishingTurnsGoFirstInALongLine(t *testing.T) {
	o := newGateOrder(t, 2)
	ctx := context.Background()
	o.wait(ctx, "start-1", false)
	o.wait(ctx, "start-2", false)
	o.wait(ctx, "start-3", false)
	o.wait(ctx, "finish-1", true)
	o.wait(ctx, "finish-2", true)
	// finish-1 and finish-2 jump three waiting starts; once they are
	// served the line is short again, and arrival order is back.
	o.expect("finish-1", "finish-2", "start-1", "start-2", "start-3")
}

// The gate is active while a turn holds a slot or waits for one, and only
// then.
func TestGateActiveWhileATurnHoldsOrWaitsForASlot(t *testing.T) {
	g := newGate(1)
	ctx := context.Background()
	if g.active() {
		t.Fatal("active with no turn")
	}
	release, _, err := g.enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !g.active() {
		t.Fatal("not active with the slot held")
	}
	got := make(chan func(), 1)
	go func() {
		r, _, err := g.enter(ctx)
		if err == nil {
			got <- r
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); g.waiting.Load() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second turn never got in line")
		}
	}
	release()
	second := <-got
	if !g.active() {
		t.Fatal("not active with the second turn in the slot")
	}
	second()
	if g.active() {
		t.Fatal("still active after both turns left")
	}
}
