package discord

import (
	"context"
	"sync"
	"time"

	"troupe/bot"
)

// Bindings tells the adapter which channels play a card. The pipeline owns
// the binding (/card set writes it); the adapter only asks.
type Bindings interface {
	// ChannelBinding returns the id of the card bound to the channel ("" when
	// none) and whether only messages that mention or reply to the character
	// count there.
	ChannelBinding(ctx context.Context, ref bot.ChannelRef) (cardID string, mentionOnly bool, err error)
}

// binding is a channel's card and mention setting.
type binding struct {
	cardID      string
	mentionOnly bool
}

// bindingTTL bounds how stale a cached binding may be: /card set in this
// process clears its entry at once; one made by another replica shows after
// at most this long.
const bindingTTL = 30 * time.Second

// bindingCache keeps recent bindings so that busy unbound channels cost no
// query per message.
type bindingCache struct {
	src Bindings
	mu  sync.Mutex
	m   map[string]cachedBinding
	// gen counts forgets, so that a lookup that raced one is not cached.
	gen uint64
}

type cachedBinding struct {
	b  binding
	at time.Time
}

func (c *bindingCache) get(ctx context.Context, ref bot.ChannelRef) (binding, error) {
	key := ref.Key()
	c.mu.Lock()
	e, ok := c.m[key]
	gen := c.gen
	c.mu.Unlock()
	if ok && time.Since(e.at) < bindingTTL {
		return e.b, nil
	}
	card, mention, err := c.src.ChannelBinding(ctx, ref)
	if err != nil {
		return binding{}, err
	}
	b := binding{cardID: card, mentionOnly: mention}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return b, nil
	}
	if c.m == nil {
		c.m = map[string]cachedBinding{}
	}
	if len(c.m) > 10000 {
		clear(c.m)
	}
	c.m[key] = cachedBinding{b: b, at: time.Now()}
	return b, nil
}

func (c *bindingCache) forget(ref bot.ChannelRef) {
	c.mu.Lock()
	delete(c.m, ref.Key())
	c.gen++
	c.mu.Unlock()
}

// cached reports whether a binding of ref is cached (tests).
func (c *bindingCache) cached(ref bot.ChannelRef) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[ref.Key()]
	return ok
}
