package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"troupe/cards"
)

// defaultBenchCard is the card bench plays when --card is not given; a
// small built-in card stands in when the file is not there (bench run
// outside the source tree).
const defaultBenchCard = "examples/cards/lantern-keeper.json"

// benchOptions are bench's flags.
type benchOptions struct {
	channels int
	turns    int
	latency  time.Duration
	// scribeLatency is how long the fake waits before answering a memory
	// job's call.
	scribeLatency time.Duration
	jsonPath      string
	dsn           string
	redis         string
	keepDB        bool
	card          string
	profile       string
	// seedPerceptions seeds the card's character with this many
	// perceptions before the turns, so that recall searches a long story.
	seedPerceptions int
}

// benchResult is what one bench run measured. Times are in milliseconds,
// sizes in MiB.
type benchResult struct {
	Database        string  `json:"database"`
	Redis           string  `json:"redis"`
	Card            string  `json:"card"`
	Channels        int     `json:"channels"`
	TurnsPerChannel int     `json:"turns_per_channel"`
	ModelLatencyMS  float64 `json:"model_latency_ms"`
	ScribeLatencyMS float64 `json:"scribe_latency_ms"`

	Turns       int `json:"turns"`
	Replies     int `json:"replies"`
	FailedTurns int `json:"failed_turns"`
	// FirstFailure is what the first failed turn said or returned.
	FirstFailure   string  `json:"first_failure,omitempty"`
	WallSeconds    float64 `json:"wall_seconds"`
	TurnsPerSecond float64 `json:"turns_per_second"`
	PipelineP50MS  float64 `json:"pipeline_p50_ms"`
	PipelineP99MS  float64 `json:"pipeline_p99_ms"`
	PipelineMaxMS  float64 `json:"pipeline_max_ms"`
	// The steady state leaves out each channel's opening turn, which
	// creates its channel and chat: the turns after every channel opened.
	SteadyTurnsPerSecond float64 `json:"steady_turns_per_second"`
	SteadyP50MS          float64 `json:"steady_pipeline_p50_ms"`
	SteadyP99MS          float64 `json:"steady_pipeline_p99_ms"`
	SteadyMaxMS          float64 `json:"steady_pipeline_max_ms"`
	// ConcurrentTurns is the pipeline's gate: how many turns did their own
	// work at once. The others waited in line for a slot; the queue figures
	// are that wait (not part of the pipeline time), overall and after the
	// openings.
	ConcurrentTurns int     `json:"concurrent_turns"`
	QueueP50MS      float64 `json:"queue_p50_ms"`
	QueueP99MS      float64 `json:"queue_p99_ms"`
	SteadyQueueP50  float64 `json:"steady_queue_p50_ms"`
	SteadyQueueP99  float64 `json:"steady_queue_p99_ms"`
	// CPUMSPerTurn is this process's CPU time (user and system, the fake
	// model included) per answered turn while the turns ran; 0 where
	// /proc/self/stat is not there.
	CPUMSPerTurn float64 `json:"cpu_ms_per_turn"`
	// PromptTokensFirst and PromptTokensLast are the mean prompt tokens of
	// the first and of the last turn of each channel, as the model reported
	// them.
	PromptTokensFirst float64 `json:"prompt_tokens_first"`
	PromptTokensLast  float64 `json:"prompt_tokens_last"`
	// PrefixReuseMedian is the median share of a chat turn's prompt, as
	// sent, that starts with the same bytes as its channel's previous
	// prompt: what a provider's prompt cache can reuse. PrefixReusePairs
	// is how many turn pairs it is taken over.
	PrefixReuseMedian float64 `json:"prefix_reuse_median"`
	PrefixReusePairs  int     `json:"prefix_reuse_pairs"`

	MessagesStored  int64 `json:"messages_stored"`
	SummariesStored int64 `json:"summaries_stored"`
	ChatRequests    int64 `json:"chat_requests"`
	ScribeRequests  int   `json:"scribe_requests"`
	// SideRequests counts the side model's calls by kind: summary,
	// recap, consolidate, record, reflect and belief_check.
	SideRequests map[string]int `json:"side_requests"`
	// Recalls counts the answered turns' recall by how it went
	// (bot.RecallFull, RecallFewer, RecallCached, RecallLate).
	Recalls map[string]int `json:"recalls,omitempty"`
	// Statements and round trips per answered turn, as the store sent
	// them: the turns' own and the memory jobs' (models.Statements; round
	// trips as PostgreSQL counts them).
	StatementsPerTurn    float64 `json:"statements_per_turn"`
	RoundTripsPerTurn    float64 `json:"round_trips_per_turn"`
	JobStatementsPerTurn float64 `json:"job_statements_per_turn"`
	JobRoundTripsPerTurn float64 `json:"job_round_trips_per_turn"`
	// TurnsPerSecondDrained counts the jobs' drain in the time: turns
	// answered over the wall time plus the drain.
	TurnsPerSecondDrained float64 `json:"turns_per_second_drained"`
	// JobsDrainSeconds is how long the worker took, after the last turn,
	// to finish the memory jobs the turns left owed.
	JobsDrainSeconds float64 `json:"jobs_drain_seconds"`

	PeakRSSMiB    float64 `json:"peak_rss_mib"`
	PeakRSSSource string  `json:"peak_rss_source"`
	SQLitePath    string  `json:"sqlite_path,omitempty"`
}

func (c *cli) benchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the turn pipeline under load against a fake model",
		Long: `Measure the turn pipeline under load. bench starts a fake OpenAI-compatible
model on loopback, builds the real pipeline and job worker in this process, and
plays --channels conversations of --turns turns each at once: one goroutine per
conversation, its turns in order. Every conversation's opening turn (which
creates its channel and chat) finishes before any plays its second; the
"after the openings" line reports the turns after that point. With --latency
the conversations are spread over one latency, so that turns arrive as a
stream rather than in waves.

It reports turns per second, the pipeline's own time per turn (model time
excluded, queueing for the database and the CPU included), how long turns
waited in line for one of the pipeline's slots before that (the
limits.concurrent_turns gate; with every conversation busy at once and an
instant model this is where the load queues), this process's CPU per turn, the prompt tokens of the first and the last turn of a conversation,
the median share of a turn's prompt that starts with the same bytes as its
conversation's previous prompt (what a provider's prompt cache can reuse),
the messages stored, and the peak memory of the process (which holds the fake
model and, by default, the database and Redis too). It fails when a turn went
unanswered or fewer than 2×C×T messages were stored. --profile DIR writes
CPU, block and mutex profiles of the turns for go tool pprof (cpu.pprof, …),
and of the memory jobs' drain after them (drain-cpu.pprof, …).

By default it runs on a temporary SQLite file and an in-process Redis, never on
the configured database. --dsn postgres://… --redis redis://… benchmarks the
deployed shape; give it a database and a Redis db that hold nothing you need.
The memory settings come from the configuration and TROUPE_* variables as
usual: with the default memory.period (30) and keep (6), compaction starts
after 36 turns, so use --turns 100 (or a smaller TROUPE_MEMORY_PERIOD) to see
prompts stop growing. The per-user rate limit is off during the bench.
--seed-perceptions N gives the card's character N perceptions first (in a
chat of their own, indexed as the recorder's are), so that each turn's
recall searches a long story. The store is then settled as a live one of
that size would be: on PostgreSQL the seeded tables are vacuumed and a
CHECKPOINT written (it needs a superuser or pg_checkpoint), on SQLite the
WAL is copied into the database file, and then the machine's dirty pages
are written out (sync), so that the turns do not wait for the bulk load's
pages to be written out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.channels < 1 || o.turns < 1 {
				return usageError{errors.New("--channels and --turns must be at least 1")}
			}
			if o.seedPerceptions < 0 {
				return usageError{errors.New("--seed-perceptions must not be negative")}
			}
			if o.latency < 0 || o.scribeLatency < 0 {
				return usageError{errors.New("--latency and --scribe-latency must not be negative")}
			}
			cfg, err := c.load()
			if err != nil {
				return err
			}
			logCfg := cfg.Log
			if logCfg.Level == "info" {
				// Keep the report readable; warnings still show.
				logCfg.Level = "warn"
			}
			card, cardSource, err := benchCard(o.card, cmd.Flags().Changed("card"))
			if err != nil {
				return usageError{fmt.Errorf("--card: %w", err)}
			}
			res, err := runBench(cmd.Context(), cfg, o, card, newLogger(logCfg, c.stderr))
			if res == nil {
				return err
			}
			res.Card = cardSource
			if werr := c.writeBench(res, o.jsonPath); werr != nil {
				return errors.Join(err, werr)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.channels, "channels", 100, "conversations played at once")
	f.IntVar(&o.turns, "turns", 20, "turns per conversation")
	f.DurationVar(&o.latency, "latency", 0, "how long the fake model waits before each reply")
	f.DurationVar(&o.scribeLatency, "scribe-latency", 0, "how long the fake model waits before answering each memory job's call (record, reflection, belief check, summary, recap)")
	f.StringVar(&o.jsonPath, "json", "", "also write the results as JSON to this file (- for stdout)")
	f.StringVar(&o.dsn, "dsn", "", "database to use (sqlite://FILE or postgres://…); default a temporary SQLite file")
	f.StringVar(&o.redis, "redis", "", "Redis to queue jobs on (redis://…); default an in-process Redis")
	f.BoolVar(&o.keepDB, "keep-db", false, "keep the temporary SQLite file and print its path")
	f.StringVar(&o.card, "card", defaultBenchCard, "card file to play")
	f.StringVar(&o.profile, "profile", "", "write CPU, block and mutex profiles of the turns to this directory")
	f.IntVar(&o.seedPerceptions, "seed-perceptions", 0, "seed the character with this many perceptions first (recall over a long story)")
	return cmd
}

// benchCard loads the card at path; when no --card was given and the
// default file is not there, it returns the built-in card.
func benchCard(path string, given bool) (cards.Card, string, error) {
	card, err := cards.LoadCard(path)
	if err == nil {
		return card, path, nil
	}
	if !given && errors.Is(err, os.ErrNotExist) {
		return builtinBenchCard(), "built-in", nil
	}
	return cards.Card{}, "", err
}

func builtinBenchCard() cards.Card {
	return cards.Card{
		ID:          "bench-keeper",
		Name:        "Maren",
		Language:    "en",
		Description: "Maren keeps the lighthouse on Gull Rock, two hours by boat from the harbour town of Weyport. She has tended the light alone since her brother was lost at sea.",
		Personality: "Dry, patient, observant. Short sentences, long silences. Kind in deeds rather than words.",
		Scenario:    "A storm has driven {{user}}'s boat onto the rocks below the lighthouse; Maren has sat them by the stove.",
		FirstMes:    "*The kettle rattles on the stove. Maren sets a chipped mug in front of you.* \"Drink that. It's only tea, but it's hot. Who are you running from?\"",
	}
}
