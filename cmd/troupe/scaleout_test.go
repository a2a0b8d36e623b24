package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"troupe/adapters/telegram/telegramtest"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/jobs"
	"troupe/memory"
	"troupe/models"
	"troupe/models/testenv"
	"troupe/prompt"
)

// TestFourProcessesScaleOut runs four troupe processes on one PostgreSQL
// database and one Redis: two `troupe serve` (Telegram by webhook) and two
// `troupe worker`. Fifty messages of one Telegram DM arrive at once, half at
// each serve process; ten seeded chats and the DM itself owe compactions
// that all four processes compete for. The DM ends as one linear branch
// holding every message exactly once, each answered, with one Telegram
// reply per stored reply; no chat's scribe requests ever overlap; each
// chat's summaries are installed once; and every process stops cleanly on
// SIGTERM.
func TestFourProcessesScaleOut(t *testing.T) {
	const (
		seeded     = 10
		seedBeats  = 40
		burst      = 50
		keep       = 1
		period     = 1
		minCut     = 100
		scribeHold = 50 * time.Millisecond
		secret     = "scale-out-secret"
		dmUser     = 42
		dmChannel  = "telegram:42"
	)
	bin := troupeBinary(t)
	dsn := testenv.FreshPostgresDB(t)
	redisURL := testenv.FreshRedisURL(t)
	ctx := context.Background()
	st, err := models.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	// Chats that owe a compaction before any process starts; their beats
	// name them, so that a scribe request tells whose it is.
	seededIDs := map[string]string{}
	for n := 0; n < seeded; n++ {
		seededIDs[fmt.Sprint("Chat", n)] = seedScaleChat(t, st, n, seedBeats)
	}

	// The fake model, shared by the four processes. Scribe requests are
	// attributed to their chat by the transcript's lines and to their
	// process by the model name; each is held open for scribeHold (and
	// those that come before the burst until it starts), so that two
	// requests for one chat from anywhere would overlap.
	fake := openaitest.NewServer(t)
	scribe := &memorytest.Scribe{Next: func(req openaitest.Request) openaitest.Answer {
		a := openaitest.DefaultResponder(req)
		// One chunk: the reply goes to Telegram whole, without edits
		// paced a second apart.
		a.ChunkSize = 1 << 16
		a.Latency = 5 * time.Millisecond
		return a
	}}
	release := make(chan struct{})
	var releaseOnce sync.Once
	openGate := func() { releaseOnce.Do(func() { close(release) }) }
	// Registered after the server: runs before its Close, which waits for
	// the requests held at the gate.
	t.Cleanup(openGate)
	var (
		mu           sync.Mutex
		inFlight     = map[string]int{}
		maxInFlight  = map[string]int{}
		scribeCalls  = map[string]int{}
		callsByProc  = map[string]int{}
		concurrent   int
		maxAll       int
		unattributed []string
	)
	chatOf := regexp.MustCompile(`\b(Chat\d+|Burst) line \d+`)
	fake.SetResponder(func(req openaitest.Request) openaitest.Answer {
		kind := memorytest.Kind(req)
		if kind == "" {
			return scribe.Respond(req)
		}
		var body strings.Builder
		for _, m := range req.Messages[1:] {
			body.WriteString(m.Content)
			body.WriteByte('\n')
		}
		key := "?"
		if m := chatOf.FindStringSubmatch(body.String()); m != nil {
			key = m[1]
		}
		mu.Lock()
		if key == "?" {
			unattributed = append(unattributed, kind)
		}
		scribeCalls[key]++
		callsByProc[req.Model]++
		inFlight[key]++
		maxInFlight[key] = max(maxInFlight[key], inFlight[key])
		concurrent++
		maxAll = max(maxAll, concurrent)
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
		time.Sleep(scribeHold)
		mu.Lock()
		inFlight[key]--
		concurrent--
		mu.Unlock()
		return scribe.Respond(req)
	})
	tg := telegramtest.NewServer(t)

	cards := t.TempDir()
	card, err := os.ReadFile("../../examples/cards/lantern-keeper.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cards, "lantern-keeper.json"), card, 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{
		"TROUPE_DATABASE_DSN=" + dsn,
		"TROUPE_REDIS_URL=" + redisURL,
		"TROUPE_MODEL_BASE_URL=" + fake.URL(),
		"TROUPE_CARDS_DIR=" + cards,
		"TROUPE_LOG_LEVEL=warn",
		"TROUPE_LIMITS_RATE_PER_MINUTE=0",
		"TROUPE_MEMORY_KEEP=" + strconv.Itoa(keep),
		"TROUPE_MEMORY_PERIOD=" + strconv.Itoa(period),
		"TROUPE_MEMORY_MIN_CUT_CHARS=" + strconv.Itoa(minCut),
		"TROUPE_MEMORY_MANUAL_MIN_CUT_CHARS=" + strconv.Itoa(minCut),
		// The sweeper re-derives owed work each second: a compaction that
		// became due while the chat's job was still running is found again.
		"TROUPE_MEMORY_SWEEP_INTERVAL=1s",
	}
	var procs []*scaleProc
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill()
		}
		if t.Failed() {
			for _, p := range procs {
				t.Logf("--- %s output ---\n%s", p.name, p.out.String())
			}
		}
	})
	start := func(name, sub string, extra ...string) *scaleProc {
		p := &scaleProc{name: name, ops: freeAddr(t), out: &testenv.Buffer{}, done: make(chan struct{})}
		env := append(append([]string{}, base...), "TROUPE_OPS_LISTEN="+p.ops, "TROUPE_MODEL_NAME="+name)
		if sub == "serve" {
			p.hook = freeAddr(t)
			env = append(env,
				"TROUPE_TELEGRAM_TOKEN="+tg.Token(),
				"TROUPE_TELEGRAM_API_ENDPOINT="+tg.Endpoint(),
				"TROUPE_TELEGRAM_WEBHOOK_URL=https://bot.example/tg/hook",
				"TROUPE_TELEGRAM_WEBHOOK_LISTEN="+p.hook,
				"TROUPE_TELEGRAM_WEBHOOK_SECRET="+secret)
		}
		p.cmd = exec.Command(bin, sub)
		p.cmd.Dir = t.TempDir()
		p.cmd.Env = append(p.cmd.Environ(), append(env, extra...)...)
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		go func() {
			p.err = p.cmd.Wait()
			close(p.done)
		}()
		procs = append(procs, p)
		return p
	}
	began := time.Now()
	serves := []*scaleProc{start("serve-1", "serve"), start("serve-2", "serve")}
	start("worker-1", "worker")
	start("worker-2", "worker")
	for _, p := range procs {
		p.waitReady(t, 20*time.Second)
	}
	t.Logf("four processes ready in %s", time.Since(began).Round(time.Millisecond))

	// The burst: fifty messages of one DM, posted at once, alternately to
	// each serve process's webhook as a load balancer would.
	ada := telegramtest.User{ID: dmUser, FirstName: "Ada"}
	type update struct {
		text  string
		msgID int
		body  []byte
	}
	var ups []update
	for i := 0; i < burst; i++ {
		text := fmt.Sprintf("Burst line %02d: the lamp, the storm and the boat.", i)
		uid, mid := tg.SendText(ada, text)
		ups = append(ups, update{text: text, msgID: mid, body: tg.RawUpdate(uid)})
	}
	// A client of its own: the connections it dialled and never used are
	// closed after the burst, else each serve process's webhook server
	// would wait 5 s for them on shutdown (net/http's rule for connections
	// that never sent a request).
	poster := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	go1 := make(chan struct{})
	var wg sync.WaitGroup
	postErrs := make(chan error, burst)
	for i, u := range ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-go1
			if err := postWebhook(poster, "http://"+serves[i%2].hook+"/tg/hook", secret, u.body); err != nil {
				postErrs <- fmt.Errorf("update %d to %s: %w", i, serves[i%2].name, err)
			}
		}()
	}
	burstAt := time.Now()
	openGate()
	close(go1)
	wg.Wait()
	poster.CloseIdleConnections()
	close(postErrs)
	for err := range postErrs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Wait until every message is stored and the last one answered. The
	// head is read after the messages: read before them, it could be an
	// answer that messages stored meanwhile have already left behind.
	deadline := time.Now().Add(30 * time.Second)
	for {
		users, headRole, assistants := 0, "", 0
		if chats, _ := st.ChannelChats(ctx, dmChannel); len(chats) > 0 {
			msgs := chatMessages(t, st, chats...)
			head, err := st.Chat(ctx, chats[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if m.Role == prompt.RoleUser {
					users++
				} else {
					assistants++
				}
				if m.ID == head.HeadID {
					headRole = m.Role
				}
			}
		}
		// The greeting is stored, not sent.
		if users == burst && headRole == prompt.RoleAssistant && len(tg.Messages(dmUser)) >= assistants-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the burst was not answered: %d of %d messages stored, head %q, %d assistant messages stored (greetings included), %d Telegram messages: %+v",
				users, burst, headRole, assistants, len(tg.Messages(dmUser)), tg.Messages(dmUser))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("burst stored and answered in %s", time.Since(burstAt).Round(time.Millisecond))

	// Wait until no chat owes a compaction and each has a summary, then
	// until the queue is empty.
	chats, err := st.ChannelChats(ctx, dmChannel)
	if err != nil || len(chats) == 0 {
		t.Fatalf("the DM's chat: %v %v", chats, err)
	}
	burstChat := chats[0].ID
	planner := memory.NewService(st, nil, memory.Config{Compact: memory.CompactParams{Keep: keep, Period: period, MinCutChars: minCut, ManualMinCutChars: minCut}}, nil)
	watched := map[string]string{}
	for k, v := range seededIDs {
		watched[k] = v
	}
	// Messages that arrive before a turn starts join it: when the whole
	// burst was stored before its first turn began (a slow start under
	// -race), it is one turn, within keep, and its chat owes nothing. It
	// must then owe nothing; otherwise it must be compacted too.
	if turns := len(chatMessages(t, st, chats[0])) - burst - 1; turns > keep {
		watched["Burst"] = burstChat
	} else {
		t.Logf("the burst formed %d turn(s): nothing of it to compact", turns)
		owed, err := planner.CompactionOwed(ctx, chats[0])
		if err != nil || owed {
			t.Fatalf("the burst's chat of %d turn(s) owes a compaction (%v)", turns, err)
		}
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		var pending []string
		for name, id := range watched {
			sums, err := st.ChatSummaries(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			chat, err := st.Chat(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			owed, err := planner.CompactionOwed(ctx, chat)
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) == 0 || owed {
				pending = append(pending, fmt.Sprintf("%s (%d summaries, owed %v)", name, len(sums), owed))
			}
		}
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			sort.Strings(pending)
			t.Fatalf("memory work not done: %s", strings.Join(pending, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
	rdb, err := jobs.OpenRedis(ctx, redisURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.NewQueue(rdb, nil).Drain(ctx, 20*time.Second); err != nil {
		t.Errorf("queue: %v", err)
	}
	rdb.Close()
	t.Logf("memory work done %s after the burst", time.Since(burstAt).Round(time.Millisecond))

	// What each process reports, before it stops.
	turnsAnswered, compactionsWritten := map[string]int{}, map[string]int{}
	for _, p := range procs {
		p.ownsOps(t)
		body := httpGet(t, "http://"+p.ops+"/metrics")
		turnsAnswered[p.name] = metricValue(body, `troupe_turns_total{outcome="answered",platform="telegram"}`)
		compactionsWritten[p.name] = metricValue(body, `troupe_memory_jobs_total{kind="compact",outcome="written"}`)
	}

	// Stop all four at once; each must exit 0 in time.
	for _, p := range procs {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("SIGTERM %s: %v", p.name, err)
		}
	}
	stopAt := time.Now()
	for _, p := range procs {
		select {
		case <-p.done:
			if p.err != nil {
				t.Errorf("%s did not exit cleanly: %v", p.name, p.err)
			}
		case <-time.After(30*time.Second - time.Since(stopAt)):
			t.Errorf("%s did not stop within 30s of SIGTERM", p.name)
		}
	}
	t.Logf("all four stopped in %s", time.Since(stopAt).Round(time.Millisecond))

	// 1. The DM: one chat, one linear branch, every message once, each
	// answered, one Telegram reply per stored reply.
	chats, err = st.ChannelChats(ctx, dmChannel)
	if err != nil || len(chats) != 1 {
		t.Fatalf("the DM has %d chats (want 1): %v", len(chats), err)
	}
	msgs := chatMessages(t, st, chats[0])
	byID := map[string]models.Message{}
	children := map[string][]string{}
	for _, m := range msgs {
		byID[m.ID] = m
		children[m.ParentID] = append(children[m.ParentID], m.ID)
	}
	for parent, kids := range children {
		if len(kids) > 1 {
			what := "the root"
			if parent != "" {
				what = fmt.Sprintf("%s %q", byID[parent].Role, byID[parent].Content)
			}
			t.Errorf("the branch forks: %s has %d children", what, len(kids))
		}
	}
	var branch []models.Message
	for id := chats[0].HeadID; id != ""; {
		m, ok := byID[id]
		if !ok {
			t.Fatalf("the branch from the head reaches %s, which is not a message of the chat", id)
		}
		branch = append(branch, m)
		id = m.ParentID
		if len(branch) > len(msgs) {
			t.Fatal("the branch has a cycle")
		}
	}
	for i, j := 0, len(branch)-1; i < j; i, j = i+1, j-1 {
		branch[i], branch[j] = branch[j], branch[i]
	}
	if len(branch) != len(msgs) {
		t.Errorf("%d of the chat's %d messages are off the head's branch", len(msgs)-len(branch), len(msgs))
	}
	if len(branch) == 0 || branch[0].Role != prompt.RoleAssistant || branch[0].ParentID != "" {
		t.Fatalf("the branch does not start at the greeting: %+v", branch[:min(1, len(branch))])
	}
	wantKey := map[string]string{}
	for _, u := range ups {
		wantKey[u.text] = fmt.Sprintf("%s:%d", dmChannel, u.msgID)
	}
	seenText, seenKey := map[string]int{}, map[string]int{}
	var replies []string
	var batches []int
	pending := 0
	for i, m := range branch[1:] {
		switch m.Role {
		case prompt.RoleUser:
			seenText[m.Content]++
			key := ""
			if m.DedupKey != nil {
				key = *m.DedupKey
			}
			seenKey[key]++
			if want, ok := wantKey[m.Content]; !ok {
				t.Errorf("a user message nobody sent: %q", m.Content)
			} else if key != want {
				t.Errorf("%q has dedup key %q, want %q", m.Content, key, want)
			}
			pending++
		case prompt.RoleAssistant:
			if pending == 0 {
				t.Errorf("reply %d follows %s, not a user message: %q", len(replies)+1, branch[i].Role, m.Content)
			} else if last := branch[i].Content; !strings.Contains(m.Content, fmt.Sprintf("You said %q", last)) {
				t.Errorf("reply %q does not answer the turn's last message %q", m.Content, last)
			}
			replies = append(replies, m.Content)
			batches = append(batches, pending)
			pending = 0
		default:
			t.Errorf("a message of role %q", m.Role)
		}
	}
	for _, u := range ups {
		if n := seenText[u.text]; n != 1 {
			t.Errorf("%q is stored %d times on the branch, want once", u.text, n)
		}
	}
	for k, n := range seenKey {
		if n != 1 {
			t.Errorf("dedup key %q appears %d times", k, n)
		}
	}
	if last := branch[len(branch)-1]; last.Role != prompt.RoleAssistant {
		t.Errorf("the branch ends on an unanswered %s message %q", last.Role, last.Content)
	}
	var sent []string
	for _, m := range tg.Messages(dmUser) {
		sent = append(sent, m.Text)
	}
	if len(sent) != len(replies) {
		t.Errorf("Telegram got %d bot messages, the database holds %d replies after the greeting\nsent: %q\nstored: %q", len(sent), len(replies), sent, replies)
	} else {
		a, b := append([]string(nil), sent...), append([]string(nil), replies...)
		sort.Strings(a)
		sort.Strings(b)
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("the replies sent differ from those stored:\nsent:   %q\nstored: %q", sent, replies)
				break
			}
		}
	}
	sends := 0
	for _, c := range tg.Calls("sendMessage") {
		if c.Params.Get("chat_id") == strconv.Itoa(dmUser) && c.Code == 0 {
			sends++
		}
	}
	if sends != len(replies) {
		t.Errorf("Telegram answered %d sendMessage calls to the DM, the database holds %d replies", sends, len(replies))
	}
	total := 0
	for _, n := range turnsAnswered {
		total += n
	}
	if total != len(replies) {
		t.Errorf("the serve processes count %d answered turns (%v), the database holds %d replies", total, turnsAnswered, len(replies))
	}

	// 2. Memory: no chat's scribe requests overlapped, anywhere; each
	// seeded chat got its one summary, the DM at least one; no two
	// summaries of a chat cover through the same message.
	mu.Lock()
	defer mu.Unlock()
	if len(unattributed) > 0 {
		t.Errorf("%d scribe requests named no chat (%v): the overlap check cannot see them", len(unattributed), unattributed)
	}
	for key, n := range maxInFlight {
		if n != 1 {
			t.Errorf("%s: %d scribe requests at once, want 1", key, n)
		}
	}
	if maxAll < 2 {
		t.Errorf("at most %d scribe request ran at once over all chats: the test did not make jobs compete", maxAll)
	}
	wantSeeded := expectedCompactions(seedBeats, keep, period)
	allSummaries := 0
	for _, name := range sortedKeys(watched) {
		id := watched[name]
		sums, err := st.ChatSummaries(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		allSummaries += len(sums)
		covers := map[string]bool{}
		for _, s := range sums {
			if covers[s.CoversThroughID] {
				t.Errorf("%s: two summaries cover through %s", name, s.CoversThroughID)
			}
			covers[s.CoversThroughID] = true
		}
		switch {
		case name == "Burst":
			if len(sums) < 1 {
				t.Errorf("the DM was never compacted")
			}
			for _, s := range sums {
				if _, ok := byID[s.CoversThroughID]; !ok {
					t.Errorf("a summary of the DM covers through %s, not on its branch", s.CoversThroughID)
				}
			}
		case len(sums) != wantSeeded:
			t.Errorf("%s has %d summaries, want %d", name, len(sums), wantSeeded)
		}
		chat, err := st.Chat(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if owed, err := planner.CompactionOwed(ctx, chat); err != nil || owed {
			t.Errorf("%s still owes a compaction after the stop (%v)", name, err)
		}
	}
	if _, ok := watched["Burst"]; !ok {
		// A burst of one turn owes nothing at the end, but a job may
		// have compacted it meanwhile (seen once in a CI run): its
		// summaries count among those the processes wrote.
		sums, err := st.ChatSummaries(ctx, burstChat)
		if err != nil {
			t.Fatal(err)
		}
		allSummaries += len(sums)
	}
	written := 0
	for _, n := range compactionsWritten {
		written += n
	}
	if written != allSummaries {
		t.Errorf("the processes report %d compactions written (%v), the database holds %d summaries", written, compactionsWritten, allSummaries)
	}

	sizes := map[int]int{}
	for _, n := range batches {
		sizes[n]++
	}
	burstSums, _ := st.ChatSummaries(ctx, burstChat)
	t.Logf("DM: %d messages in %d turns (batch size: turns %v), %d Telegram replies, %d summaries; turns per serve process %v",
		burst, len(replies), sizes, len(sent), len(burstSums), turnsAnswered)
	t.Logf("scribe: calls per chat %v, per process %v, compactions written per process %v, most at once per chat %v, over all chats %d",
		scribeCalls, callsByProc, compactionsWritten, maxInFlight, maxAll)
	t.Logf("processes up to stopped: %s", time.Since(began).Round(time.Millisecond))
}

// scaleProc is one troupe process of the scale-out test.
type scaleProc struct {
	name string
	cmd  *exec.Cmd
	out  *testenv.Buffer
	// ops is the operations endpoint, hook the webhook (serve only).
	ops, hook string
	done      chan struct{}
	// err is the exit error, set before done is closed.
	err error
}

// waitReady waits until the process's /readyz answers 200 and, for serve,
// its webhook accepts connections.
func (p *scaleProc) waitReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ready := false
		if resp, err := http.Get("http://" + p.ops + "/readyz"); err == nil {
			ready = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
		if ready && p.hook != "" {
			c, err := net.DialTimeout("tcp", p.hook, time.Second)
			if ready = err == nil; ready {
				c.Close()
			}
		}
		if ready {
			p.ownsOps(t)
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready: %v", p.name, p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %s", p.name, timeout)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// kill ends the process if it still runs.
// ownsOps fails the test when the process logged that it could not bind
// its operations address: whatever answers there is another process, and
// its figures would be counted as this one's.
func (p *scaleProc) ownsOps(t *testing.T) {
	t.Helper()
	if strings.Contains(p.out.String(), "operations endpoint not available") {
		t.Fatalf("%s could not bind its operations address %s; another process answers there", p.name, p.ops)
	}
}

func (p *scaleProc) kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// postWebhook posts a Telegram update to a webhook as Telegram does,
// retrying while the adapter answers 503 (not connected yet).
func postWebhook(client *http.Client, url, secret string, body []byte) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return nil
		case resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline):
			return errors.New(resp.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seedScaleChat stores chat number n, of beats beats whose text names it
// ("ChatN line i"), on a console channel of its own.
func seedScaleChat(t *testing.T, st *models.Store, n, beats int) string {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.EnsureSpace(ctx, models.Space{ID: "console:local:ada", Platform: "console", Kind: "local", ExternalID: "ada"}))
	must(st.UpsertCard(ctx, models.Card{ID: "maren", Name: "Maren", Language: "en", Data: "{}"}))
	ch := fmt.Sprintf("console:ada/maren%d", n)
	_, err := st.EnsureChannel(ctx, models.Channel{ID: ch, Platform: "console", ExternalID: ch, SpaceID: "console:local:ada"})
	must(err)
	chat, err := st.StartChat(ctx, ch, "maren", "console:local:ada", fmt.Sprint("chat ", n), &models.Message{Role: "assistant", AuthorName: "Maren", Content: "Hello."})
	must(err)
	head := chat.HeadID
	for i := 0; i < beats; i++ {
		u := &models.Message{Role: "user", AuthorName: "Ada", Content: fmt.Sprintf("Chat%d line %d: I ask about the lamp and the storm and the sea and the boat.", n, i)}
		a := &models.Message{Role: "assistant", AuthorName: "Maren", Content: fmt.Sprintf("Chat%d line %d: *She answers slowly, watching the rain on the glass.*", n, i)}
		must(st.Append(ctx, chat.ID, head, head, []*models.Message{u, a}))
		head = a.ID
	}
	return chat.ID
}

// expectedCompactions is how many summaries automatic compaction installs
// in a chat of beats one-message beats with enough text: each time
// keep+period beats are uncovered, all but the last keep are covered.
func expectedCompactions(beats, keep, period int) int {
	n := 0
	for beats >= keep+period {
		beats = keep
		n++
	}
	return n
}

// chatMessages returns every message of the chats, oldest first.
func chatMessages(t *testing.T, st *models.Store, chats ...models.Chat) []models.Message {
	t.Helper()
	var ids []string
	for _, c := range chats {
		ids = append(ids, c.ID)
	}
	var msgs []models.Message
	if err := st.DB().Where("chat_id IN ?", ids).Order("id").Find(&msgs).Error; err != nil {
		t.Fatal(err)
	}
	return msgs
}

// metricValue reads one sample from a Prometheus text page; 0 when absent.
func metricValue(page, series string) int {
	sc := bufio.NewScanner(strings.NewReader(page))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f)
		}
	}
	return 0
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
