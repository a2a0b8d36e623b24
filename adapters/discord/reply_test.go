package discord

import (
	"strings"
	"testing"
	"time"

	"troupe/fakes/openaitest"
)

func TestBoundChannelMessageGetsWebhookReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.say("Hello, keeper.")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello, keeper.") }, "the character's reply")
	got := h.characterMessages(h.channel)[0]
	if got.Username != "Maren" || got.AvatarURL != cardAvatar {
		t.Errorf("reply posted as %q with avatar %q, want Maren with %q", got.Username, got.AvatarURL, cardAvatar)
	}
	if !strings.Contains(got.Content, "Hello, keeper.") {
		t.Errorf("reply %q does not answer the message", got.Content)
	}
	// A call is recorded once the fake has answered it; wait for the record.
	waitFor(t, 5*time.Second, func() bool { return len(h.discord.CallsTo("POST /webhooks/*/*")) > 0 }, "the webhook post recorded")
	typing := h.discord.CallsTo("POST /channels/" + h.channel + "/typing")
	execs := h.discord.CallsTo("POST /webhooks/*/*")
	if len(typing) == 0 || len(execs) == 0 || typing[0].At.After(execs[0].At) {
		t.Errorf("typing calls %d, webhook posts %d: want typing before the first text", len(typing), len(execs))
	}

	h.say("And the light?")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 2, "And the light?") }, "the second reply")
	if n := len(h.discord.CallsTo("POST /channels/" + h.channel + "/webhooks")); n != 1 {
		t.Errorf("webhooks created = %d, want 1 (created once, reused)", n)
	}
	if n := h.model.Count(); n != 2 {
		t.Errorf("model calls = %d, want 2 (the character's own messages are no turns)", n)
	}
	if got, want := h.userTexts(h.channel), []string{"Hello, keeper.", "And the light?"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stored user messages = %q, want %q", got, want)
	}
}

func TestStreamingEditsAtMostOncePerSecond(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	text := strings.Repeat("The lantern hums softly. ", 14)
	h.model.Script(openaitest.Answer{Text: text, ChunkSize: 12, ChunkDelay: 90 * time.Millisecond})
	h.say("Tell me a long story.")
	waitFor(t, 15*time.Second, func() bool {
		m := h.characterMessages(h.channel)
		return len(m) == 1 && m[0].Content == strings.TrimSpace(text)
	}, "the whole reply in one message")
	msg := h.characterMessages(h.channel)[0]
	if len(msg.Edits) < 2 {
		t.Fatalf("the reply was edited %d times, want it streamed with several edits", len(msg.Edits))
	}
	for i := 1; i < len(msg.Edits); i++ {
		if gap := msg.Edits[i].Sub(msg.Edits[i-1]); gap < 950*time.Millisecond {
			t.Errorf("edits %d and %d are %v apart, want at least 1s", i-1, i, gap)
		}
	}
}

func TestLongReplyArrivesAsThreeMessagesInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	var b strings.Builder
	for i := 0; b.Len() < 4500; i++ {
		b.WriteString("Sentence number ")
		b.WriteString(strings.Repeat("x", i%7+1))
		b.WriteString(" of the keeper's long tale. ")
	}
	text := strings.TrimSpace(b.String()[:4500])
	h.model.Script(openaitest.Answer{Text: text, ChunkSize: 400})
	h.say("Tell me everything.")
	waitFor(t, 15*time.Second, func() bool {
		var got []string
		for _, m := range h.characterMessages(h.channel) {
			got = append(got, m.Content)
		}
		return strings.Join(strings.Fields(strings.Join(got, " ")), " ") == strings.Join(strings.Fields(text), " ")
	}, "the whole reply")
	msgs := h.characterMessages(h.channel)
	if len(msgs) != 3 {
		t.Fatalf("reply arrived as %d messages, want 3", len(msgs))
	}
	rest := text
	for i, m := range msgs {
		if n := len([]rune(m.Content)); n > 2000 {
			t.Errorf("message %d has %d characters", i, n)
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, m.Content) {
			t.Fatalf("message %d is not the next piece of the reply:\n%q", i, m.Content)
		}
		rest = rest[len(m.Content):]
	}
}

func TestRateLimitedSendIsDeliveredAfterTheWait(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.discord.RateLimit("POST /webhooks/*/*", 1, 1500*time.Millisecond)
	h.say("Hello?")
	// The fake stores the message before it records the call that posted
	// it: wait for both.
	waitFor(t, 15*time.Second, func() bool {
		return h.replied(h.channel, 1, "Hello?") && len(h.discord.CallsTo("POST /webhooks/*/*")) >= 2
	}, "the reply and its second post")
	calls := h.discord.CallsTo("POST /webhooks/*/*")
	if len(calls) != 2 || calls[0].Status != 429 || calls[1].Status != 200 {
		var st []int
		for _, c := range calls {
			st = append(st, c.Status)
		}
		t.Fatalf("webhook posts answered %v, want [429 200]", st)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < 1400*time.Millisecond {
		t.Errorf("retried %v after the 429, want after retry_after (1.5s)", gap)
	}
	if n := len(h.characterMessages(h.channel)); n != 1 {
		t.Errorf("reply posted %d times, want once", n)
	}
}

func TestWithoutWebhookPermissionTheBotSpeaksWithTheNameInBold(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.discord.DenyWebhooks(h.channel)
	h.say("Hello?")
	waitFor(t, 10*time.Second, func() bool { return h.replied(h.channel, 1, "Hello?") }, "the reply")
	m := h.characterMessages(h.channel)[0]
	if m.WebhookID != "" || !strings.HasPrefix(m.Content, "**Maren**\n") {
		t.Errorf("reply = %q (webhook %q), want the bot's message starting with **Maren**", m.Content, m.WebhookID)
	}
}

func TestBrokenOffReplyIsTakenBackAndExplained(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	h.model.Script(openaitest.Answer{Text: strings.Repeat("Half a story, then silence. ", 20), ChunkSize: 20, ChunkDelay: 30 * time.Millisecond, Fault: openaitest.FaultCut})
	h.say("Tell me.")
	waitFor(t, 15*time.Second, func() bool {
		for _, m := range h.discord.Messages(h.channel) {
			if strings.Contains(m.Content, "/regen") && m.ReplyTo != "" {
				return true
			}
		}
		return false
	}, "the notice answering the message")
	if msgs := h.characterMessages(h.channel); len(msgs) != 0 {
		t.Errorf("%d pieces of the broken-off reply stayed in the channel", len(msgs))
	}
	if len(h.discord.CallsTo("POST /webhooks/*/*")) == 0 || len(h.discord.CallsTo("DELETE /webhooks/*/*/messages/*")) == 0 {
		t.Errorf("want the partial reply streamed and then deleted; calls: %d posts, %d deletes",
			len(h.discord.CallsTo("POST /webhooks/*/*")), len(h.discord.CallsTo("DELETE /webhooks/*/*/messages/*")))
	}
}
