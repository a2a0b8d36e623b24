package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"troupe/bot"
	"troupe/config"
	"troupe/eval"
	"troupe/examples"
	"troupe/fakes/memorytest"
	"troupe/fakes/openaitest"
	"troupe/memory"
	"troupe/prompt"
)

// defaultCaseTimeout bounds one case: its story, the memory work it
// leaves owed and its question.
const defaultCaseTimeout = 4 * time.Minute

// evalOptions are eval's flags.
type evalOptions struct {
	suite    string
	lang     string
	only     string
	jsonPath string
	judge    bool
	compare  string
	fake     string
	parallel int
	waiting  bool
	verbose  bool
	// caseTimeout bounds each case; past it the case is an error.
	caseTimeout time.Duration
}

func (c *cli) evalCmd() *cobra.Command {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure how well characters remember, on your model",
		Long: `Play the memory suite's scripted stories through the real pipeline and score
what the character answers afterwards. Each case gets a fresh troupe of its
own (a temporary SQLite file, an in-process Redis, the configured model,
scribe and memory settings, with the suite's settings on top: a short
memory.keep and period so that planted facts are compacted before the
question). The story is told as console messages, every memory job it left
owed is finished, then the question is asked as the player, in character.

Categories: single_fact, update, temporal, cross_chat, perspective, abstention,
said_by_character, forgetting. The default scorer normalizes case, width and
punctuation and looks for a gold answer (or a close character-level F1);
--judge also asks the scribe model to grade each reply with a fixed rubric,
and its verdict counts. A case that cannot be played to its question (no
model, a scribe that never answers, past --case-timeout) is an error: the
table counts it in its errors column and eval exits non-zero. Abstention, perspective and forgetting score 1 only
when no forbidden answer appears (and a gold answer does, where the case
names one).

--compare KEY=VALUE (any config key, e.g. memory.period=0) runs the suite a
second time with that setting and prints both side by side. --fake faithful
or --fake factless plays against the built-in fake model, which answers from
its prompt's own sentences (a perfectly faithful reader), with a scribe
whose summaries keep every fact or none; it says a case's scripted replies
(a story step's replies), the next one on each /regen.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.runEval(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.suite, "suite", "", "suite directory (suite.yaml, en/*.yaml, zh/*.yaml); default: the suite built into troupe")
	f.StringVar(&o.lang, "lang", "all", "en, zh or all")
	f.StringVar(&o.only, "only", "", "run one category only")
	f.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file (- for stdout)")
	f.BoolVar(&o.judge, "judge", false, "have the scribe model grade each reply too (its verdict counts)")
	f.StringVar(&o.compare, "compare", "", "KEY=VALUE: run again with this setting and compare")
	f.StringVar(&o.fake, "fake", "", "play against the built-in fake model: faithful or factless")
	f.IntVar(&o.parallel, "parallel", 0, "cases played at once (default: 4, or one per CPU when more)")
	f.BoolVar(&o.waiting, "include-waiting", false, "also play cases that need features troupe lacks yet")
	f.BoolVar(&o.verbose, "verbose", false, "print every case's question, reply and verdict")
	f.DurationVar(&o.caseTimeout, "case-timeout", defaultCaseTimeout, "time limit of one case (story, owed memory work, question); past it the case is an error")
	return cmd
}

// evalSetting is one KEY=VALUE override.
type evalSetting struct{ key, value string }

func parseSetting(s string) (evalSetting, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return evalSetting{}, fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	if !slices.Contains(config.EnvKeys(), config.EnvName(k)) {
		return evalSetting{}, fmt.Errorf("%q is not a config key (see troupe.example.yaml)", k)
	}
	return evalSetting{k, strings.TrimSpace(v)}, nil
}

func (c *cli) runEval(ctx context.Context, o evalOptions) error {
	if o.lang != "all" && o.lang != "en" && o.lang != "zh" {
		return usageError{fmt.Errorf("--lang must be en, zh or all")}
	}
	if o.only != "" && !slices.Contains(eval.Categories, o.only) {
		return usageError{fmt.Errorf("--only must be one of %s", strings.Join(eval.Categories, ", "))}
	}
	if o.fake != "" && o.fake != "faithful" && o.fake != "factless" {
		return usageError{fmt.Errorf("--fake must be faithful or factless")}
	}
	var compare *evalSetting
	if o.compare != "" {
		s, err := parseSetting(o.compare)
		if err != nil {
			return usageError{fmt.Errorf("--compare: %w", err)}
		}
		compare = &s
	}
	if o.caseTimeout <= 0 {
		return usageError{fmt.Errorf("--case-timeout must be positive")}
	}
	suite, cleanup, err := loadSuite(o.suite)
	if err != nil {
		return err
	}
	defer cleanup()
	cases := suite.Select(o.lang, o.only)
	if len(cases) == 0 {
		return usageError{errors.New("no case matches --lang and --only")}
	}
	overrides := map[string]string{}
	for k, v := range suite.Settings {
		overrides[config.EnvName(k)] = v
	}
	if o.fake != "" {
		fake := openaitest.Start()
		defer fake.Close()
		fake.SetRecording(false)
		fake.SetPromptTokenCounter(prompt.EstimateTokens)
		faithful := &memorytest.Faithful{Factless: o.fake == "factless"}
		for _, cs := range cases {
			for _, st := range cs.Story {
				if len(st.Replies) > 0 {
					faithful.Script(st.Say, st.Replies...)
				}
			}
		}
		fake.SetResponder(faithful.Respond)
		for _, k := range []string{"MODEL", "SCRIBE"} {
			overrides["TROUPE_"+k+"_BASE_URL"] = fake.URL()
			overrides["TROUPE_"+k+"_API_KEY"] = "fake"
			overrides["TROUPE_"+k+"_NAME"] = "openaitest-" + o.fake
		}
	}
	runs := []map[string]string{overrides}
	labels := []string{""}
	if compare != nil {
		changed := map[string]string{}
		for k, v := range overrides {
			changed[k] = v
		}
		changed[config.EnvName(compare.key)] = compare.value
		runs = append(runs, changed)
		labels = []string{"as configured", compare.key + "=" + compare.value}
	}
	var reps []eval.Report
	for i, ov := range runs {
		cfg, err := config.Load(c.configPath, overlay(ov, c.lookup))
		if err != nil {
			return err
		}
		rep, err := c.evalRun(ctx, cfg, suite, cases, o, labels[i])
		if rep.Results != nil {
			reps = append(reps, rep)
		}
		if err != nil {
			// What was played is shown, errors column and all.
			if len(reps) > 0 {
				_ = eval.PrintTable(c.stderr, reps...)
			}
			return err
		}
	}
	table := c.stdout
	if o.jsonPath == "-" {
		table = c.stderr
	}
	if err := eval.PrintTable(table, reps...); err != nil {
		return err
	}
	if o.jsonPath != "" {
		if err := writeEvalJSON(c.stdout, o.jsonPath, reps); err != nil {
			return err
		}
	}
	return errored(reps)
}

// errored fails a run in which some case could not be played to its
// question: its 0 is no measurement, and a script must not take the
// scores for one.
func errored(reps []eval.Report) error {
	n, first := 0, ""
	for _, r := range reps {
		for _, res := range r.Results {
			if res.Err != "" {
				n++
				if first == "" {
					first = res.ID + ": " + res.Err
				}
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("eval: %d case(s) could not be played to their question (see the errors column); the first, %s", n, first)
}

// loadSuite loads the suite in dir, or the one built into the binary
// when dir is "": it is written to a temporary folder, which cleanup
// removes.
func loadSuite(dir string) (*eval.Suite, func(), error) {
	if dir != "" {
		s, err := eval.Load(dir)
		return s, func() {}, err
	}
	tmp, err := os.MkdirTemp("", "troupe-eval-suite-")
	if err != nil {
		return nil, nil, fmt.Errorf("eval: unpack the built-in suite: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	if err := os.CopyFS(tmp, examples.EvalSuite()); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("eval: unpack the built-in suite: %w", err)
	}
	s, err := eval.Load(tmp)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return s, cleanup, nil
}

// overlay answers lookups from ov first, then from next.
func overlay(ov map[string]string, next env) env {
	return func(k string) (string, bool) {
		if v, ok := ov[k]; ok {
			return v, true
		}
		return next(k)
	}
}

// evalRun plays the cases, several at once, showing progress on stderr.
func (c *cli) evalRun(ctx context.Context, cfg config.Config, suite *eval.Suite, cases []eval.Case, o evalOptions, label string) (eval.Report, error) {
	logCfg := cfg.Log
	if logCfg.Level == "info" || logCfg.Level == "debug" {
		logCfg.Level = "warn" // keep the table readable; warnings still show
	}
	// The log and the progress lines share stderr (a syncWriter).
	stderr := c.stderr
	log := newLogger(logCfg, stderr)
	parallel := o.parallel
	if parallel <= 0 {
		// Cases mostly wait (on the model, on the job queue), so more run
		// at once than there are CPUs.
		parallel = max(4, runtime.NumCPU())
	}
	// Every case opens its own app; the scribe's window is asked once
	// here, not once per case (an endpoint slow to list its models would
	// spend each case's time limit).
	if cfg.ScribeModel().ContextWindow == 0 {
		cfg.Scribe.ContextWindow = cmp.Or(scribeWindow(ctx, cfg, newScribe(cfg, log, 0, nil).C, log), memory.DefaultScribeWindow)
	}
	results := make([]eval.Result, len(cases))
	prog := newProgress(stderr, isTerminal(c.stderr), len(cases), label)
	start := time.Now()
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallel)
	for i, cs := range cases {
		if missing := cs.Missing(evalFeatures()); len(missing) > 0 && !o.waiting {
			results[i] = eval.Result{ID: cs.ID, Category: cs.Category, Lang: cs.Lang, Waiting: missing}
			prog.done(results[i])
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return eval.Report{}, ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-slots }()
			e := &evalCase{s: suite, c: cs, cfg: cfg, judge: o.judge, log: log, limit: o.caseTimeout}
			results[i] = e.run(ctx)
			prog.done(results[i])
			if o.verbose {
				prog.detail(cs, results[i])
			}
		})
	}
	wg.Wait()
	prog.finish()
	if err := ctx.Err(); err != nil {
		return eval.Report{}, err
	}
	rep := eval.Summarize(results, time.Since(start))
	rep.Label = label
	rep.Model, rep.Scribe = cfg.Model.Name, cfg.ScribeModel().Name
	return rep, nonePlayed(results)
}

// nonePlayed fails a run in which no case reached its question (no model
// there, a wrong key): its scores would measure nothing.
func nonePlayed(results []eval.Result) error {
	first := ""
	for _, r := range results {
		switch {
		case len(r.Waiting) > 0:
		case r.Err == "":
			return nil
		case first == "":
			first = r.Err
		}
	}
	if first == "" {
		return nil
	}
	return fmt.Errorf("eval: no case could be played; the first said: %s", first)
}

// evalFeatures lists what the pipeline offers of the features suite cases
// may need: scenes once the chat commands include /cast.
func evalFeatures() []string {
	var have []string
	if slices.ContainsFunc(bot.Commands, func(c struct{ Name, Description string }) bool { return c.Name == "cast" }) {
		have = append(have, eval.FeatureScenes)
	}
	return have
}

// writeEvalJSON writes one report, or for --compare {"runs": [a, b]}.
func writeEvalJSON(stdout io.Writer, path string, reps []eval.Report) error {
	var v any = reps[0]
	if len(reps) > 1 {
		v = map[string]any{"runs": reps}
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "-" {
		_, err = stdout.Write(data)
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("eval: write results: %w", err)
	}
	return nil
}

// progress shows how far a run is: a redrawn bar on a terminal, a line per
// case otherwise.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	total int
	n     int
	sum   float64
	label string
}

func newProgress(w io.Writer, tty bool, total int, label string) *progress {
	return &progress{w: w, tty: tty, total: total, label: label}
}

// syncWriter serializes writes to w.
func (p *progress) done(r eval.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.sum += r.Final()
	state := fmt.Sprintf("%.2f", r.Final())
	switch {
	case len(r.Waiting) > 0:
		state = "waiting for " + strings.Join(r.Waiting, ", ")
	case r.Err != "":
		state = "error: " + r.Err
	}
	if !p.tty {
		prefix := ""
		if p.label != "" {
			prefix = p.label + ": "
		}
		fmt.Fprintf(p.w, "%s[%d/%d] %s %s %s: %s (%.1fs)\n", prefix, p.n, p.total, r.Lang, r.Category, r.ID, state, r.Elapsed.Seconds())
		return
	}
	if r.Err != "" {
		// A redrawn bar would hide it.
		fmt.Fprintf(p.w, "\r%s %s %s: %s (%.1fs)\n", r.Lang, r.Category, r.ID, state, r.Elapsed.Seconds())
	}
	const width = 30
	filled := width * p.n / p.total
	fmt.Fprintf(p.w, "\r%s[%s%s] %d/%d  %-40.40s", p.label, strings.Repeat("#", filled), strings.Repeat(" ", width-filled), p.n, p.total, r.ID+" "+state)
}

func (p *progress) detail(c eval.Case, r eval.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "  Q: %s\n  A: %s\n  %s (%s)", c.Ask, r.Reply, fmt.Sprintf("%.2f", r.Final()), r.Why)
	for _, n := range r.Notes {
		fmt.Fprintf(p.w, "; note: %s", n)
	}
	fmt.Fprintln(p.w)
}

func (p *progress) finish() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
