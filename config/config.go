// Package config loads troupe's configuration: defaults, a YAML file, and
// TROUPE_* environment overrides, then validates the result.
package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// Config is the whole configuration of one troupe process.
type Config struct {
	Model      Model      `yaml:"model"`
	Scribe     Model      `yaml:"scribe"`
	Database   Database   `yaml:"database"`
	Redis      Redis      `yaml:"redis"`
	Memory     Memory     `yaml:"memory"`
	Recorder   Recorder   `yaml:"recorder"`
	Reflection Reflection `yaml:"reflection"`
	Scene      Scene      `yaml:"scene"`
	Recall     Recall     `yaml:"recall"`
	Cards      Cards      `yaml:"cards"`
	Lore       Lore       `yaml:"lore"`
	TTS        TTS        `yaml:"tts"`
	Image      Image      `yaml:"image"`
	Media      Media      `yaml:"media"`
	STT        STT        `yaml:"stt"`
	Language   string     `yaml:"language"`
	Discord    Discord    `yaml:"discord"`
	Telegram   Telegram   `yaml:"telegram"`
	Limits     Limits     `yaml:"limits"`
	Groups     Groups     `yaml:"groups"`
	Ops        Ops        `yaml:"ops"`
	Web        Web        `yaml:"web"`
	Log        Log        `yaml:"log"`
}

// Model configures an OpenAI-compatible chat model.
type Model struct {
	BaseURL        string        `yaml:"base_url"`
	APIKey         Secret        `yaml:"api_key"`
	Name           string        `yaml:"name"`
	ContextWindow  int           `yaml:"context_window"`
	MaxReplyTokens int           `yaml:"max_reply_tokens"`
	Temperature    float64       `yaml:"temperature"`
	Timeout        time.Duration `yaml:"timeout"`
	MaxRetries     int           `yaml:"max_retries"`
	// Vision: the model sees pictures (image parts). Only the main
	// model's counts; the scribe reads text alone.
	Vision bool `yaml:"vision"`
}

// Database selects the store: sqlite://FILE or postgres://….
type Database struct {
	DSN Secret `yaml:"dsn"`
}

// Redis selects the job queue's Redis; empty runs an in-process Redis.
type Redis struct {
	URL Secret `yaml:"url"`
}

// Memory holds the constants of compaction and cross-chat memory.
type Memory struct {
	Keep              int           `yaml:"keep"`
	Period            int           `yaml:"period"`
	MinCutChars       int           `yaml:"min_cut_chars"`
	ManualMinCutChars int           `yaml:"manual_min_cut_chars"`
	ResidentMaxChars  int           `yaml:"resident_max_chars"`
	EnvelopeChars     int           `yaml:"envelope_chars"`
	MinUsefulChars    int           `yaml:"min_useful_chars"`
	IdleRecap         time.Duration `yaml:"idle_recap"`
	SweepInterval     time.Duration `yaml:"sweep_interval"`
	RecapMaxChars     int           `yaml:"recap_max_chars"`
	// BatchTokens bounds the material (transcript, events, recaps) one
	// side-model call carries; larger work goes in batches.
	BatchTokens int `yaml:"batch_tokens"`
	// Fading: details fade with elapsed story time (off: exact recall).
	Fading bool `yaml:"fading"`
	// FoldedFade scales how long a perception folded into a belief is
	// kept (0.5: half as long; 1: no change).
	FoldedFade float64 `yaml:"folded_fade"`
	// HandbookMaxChars bounds a handbook's cross-chat part (what every
	// consolidation sends the scribe); a reorganize brings it back under.
	HandbookMaxChars int `yaml:"handbook_max_chars"`
	// BeliefsMax bounds a character's beliefs in a space.
	BeliefsMax int `yaml:"beliefs_max"`
	// ReorganizeBatches and ReorganizeTokens: a card's memory in a space
	// is reorganized after this many memory writes, or this many tokens
	// written, since the last time (seed 001: 5 and 40,000).
	ReorganizeBatches int `yaml:"reorganize_batches"`
	ReorganizeTokens  int `yaml:"reorganize_tokens"`
	// ReorganizeAt is the time of day ("03:00") of the nightly
	// reorganize, in Timezone (an IANA name; "" is UTC); "" turns the
	// nightly one off.
	ReorganizeAt string `yaml:"reorganize_at"`
	Timezone     string `yaml:"timezone"`
}

// Recorder configures the side-model pass that turns plain events into
// perceptions, threads, relationships, knowledge and the ledger.
type Recorder struct {
	Enabled bool `yaml:"enabled"`
	// Batch is how many recordable turns wait before the recorder runs.
	Batch int `yaml:"batch"`
	// JSONMode asks the scribe endpoint for response_format json_object.
	JSONMode bool `yaml:"json_mode"`
}

// Scene configures chats with several characters (DESIGN.md "Scenes").
type Scene struct {
	// MaxCast is how many characters one chat's cast may hold.
	MaxCast int `yaml:"max_cast"`
}

// Reflection configures when characters turn their new perceptions into
// beliefs (DESIGN.md "Characters' own memory", 5).
type Reflection struct {
	// Auto off: only /reflect runs reflection.
	Auto bool `yaml:"auto"`
	// EveryTurns: a chat reflects after this many turns since its last
	// reflection.
	EveryTurns int `yaml:"every_turns"`
	// MinTurns: no automatic run within this many turns of the last one.
	MinTurns int `yaml:"min_turns"`
	// PerRun: at most this many characters per automatic run.
	PerRun int `yaml:"per_run"`
	// MinNew: only characters with at least this many new perceptions.
	MinNew int `yaml:"min_new"`
	// MaxChecks: existing beliefs checked against the new perceptions.
	MaxChecks int `yaml:"max_checks"`
	// PivotalImportance: one perception of a pivotal event this important
	// may found a belief.
	PivotalImportance int `yaml:"pivotal_importance"`
}

// Recall configures what a speaking character brings back of its own
// perceptions and beliefs each turn (DESIGN.md "Characters' own memory", 3).
type Recall struct {
	Enabled bool `yaml:"enabled"`
	// Candidates is how many items are fetched before scoring.
	Candidates int `yaml:"candidates"`
	// MaxItems is how many items maximal marginal relevance picks.
	MaxItems int `yaml:"max_items"`
	// MaxChars bounds the recalled items' text.
	MaxChars int `yaml:"max_chars"`
	// KeptChars bounds the recall blocks of earlier turns that are sent
	// again in place (so the prompt stays a cacheable prefix); 0 sends
	// only the turn's own block.
	KeptChars int `yaml:"kept_chars"`
	// Timeout caps recall's time in a turn; past it the block is left out.
	Timeout time.Duration `yaml:"timeout"`
	// BusyWait caps how long a turn waits for its search while other
	// turns wait for a slot; past it the turn loads again, by id, what
	// its chat's last search ranked (a cached block), or goes on without
	// a new block. 0 waits up to Timeout whatever the load.
	BusyWait time.Duration `yaml:"busy_wait"`
	Weights  RecallWeights `yaml:"weights"`
	// Embeddings, when BaseURL and Model are set, adds vector similarity.
	Embeddings Embeddings `yaml:"embeddings"`
	// VectorCacheMB bounds the in-process cache of item vectors.
	VectorCacheMB int `yaml:"vector_cache_mb"`
	// Rerank, when set, re-orders the candidates (a Jina/Cohere /rerank).
	Rerank Rerank `yaml:"rerank"`
	// Diagnostics keeps each turn's recall for /why and troupe memory why.
	Diagnostics bool `yaml:"diagnostics"`
	// DiagnosticsTurns is how many turns of a chat are kept.
	DiagnosticsTurns int `yaml:"diagnostics_turns"`
}

// RecallWeights weigh the parts of a recall score.
type RecallWeights struct {
	Importance float64 `yaml:"importance"`
	Relevance  float64 `yaml:"relevance"`
	Recency    float64 `yaml:"recency"`
	Retention  float64 `yaml:"retention"`
}

// Embeddings is an OpenAI-compatible /embeddings endpoint.
type Embeddings struct {
	BaseURL    string `yaml:"base_url"`
	APIKey     Secret `yaml:"api_key"`
	Model      string `yaml:"model"`
	Dimensions int    `yaml:"dimensions"`
}

// On reports whether embeddings are configured.
func (e Embeddings) On() bool { return e.BaseURL != "" && e.Model != "" }

// Rerank is a Jina/Cohere-style /rerank endpoint.
type Rerank struct {
	BaseURL string `yaml:"base_url"`
	APIKey  Secret `yaml:"api_key"`
	Model   string `yaml:"model"`
}

// On reports whether a rerank endpoint is configured.
func (r Rerank) On() bool { return r.BaseURL != "" && r.Model != "" }

// Cards locates the card library.
type Cards struct {
	Dir     string `yaml:"dir"`
	Default string `yaml:"default"`
	// WorldsDir is the folder of world-info files; empty, a worlds/ folder
	// inside Dir, then one beside it (as SillyTavern lays them out).
	WorldsDir string `yaml:"worlds_dir"`
}

// Lore bounds what lorebooks add to a prompt: a share of the model's context
// window, capped by a number of tokens.
type Lore struct {
	BudgetPercent int `yaml:"budget_percent"`
	BudgetTokens  int `yaml:"budget_tokens"`
}

// Budget is the lore token budget for a context window (0: unknown); 0
// means no bound.
func (l Lore) Budget(contextWindow int) int {
	budget := l.BudgetTokens
	if share := contextWindow * l.BudgetPercent / 100; contextWindow > 0 && l.BudgetPercent > 0 && (budget == 0 || share < budget) {
		budget = share
	}
	return budget
}

// Media bounds the pictures, voice notes and text files players send, and
// says what is kept of them.
type Media struct {
	// MaxImages bounds the pictures of one message (and, apart, its other
	// attachments); those past it are refused with a notice.
	MaxImages     int `yaml:"max_images"`
	MaxImageBytes int `yaml:"max_image_bytes"`
	MaxAudioBytes int `yaml:"max_audio_bytes"`
	// MaxTextChars bounds a text file's quoted text; the rest is cut.
	MaxTextChars int `yaml:"max_text_chars"`
	// CaptionModel names the vision model that captions pictures, at
	// model.base_url; "" is model.name.
	CaptionModel string `yaml:"caption_model"`
	// Keep saves each downloaded original under Dir/<chat id>/; /forget
	// removes the folder.
	Keep bool   `yaml:"keep"`
	Dir  string `yaml:"dir"`
	// Timeout bounds a message's downloads, captions and transcriptions.
	Timeout time.Duration `yaml:"timeout"`
}

// STT is an OpenAI-compatible /audio/transcriptions endpoint (Whisper,
// faster-whisper servers); voice notes are heard only when BaseURL is set.
type STT struct {
	BaseURL string `yaml:"base_url"`
	APIKey  Secret `yaml:"api_key"`
	Model   string `yaml:"model"`
	// Language is the spoken language (ISO-639-1, such as en); "" lets the
	// endpoint detect it.
	Language string `yaml:"language"`
}

// On reports whether a transcription endpoint is configured.
func (s STT) On() bool { return s.BaseURL != "" }

// Discord configures the Discord adapter; it runs when Token is set.
type Discord struct {
	Token           Secret   `yaml:"token"`
	APIBaseURL      string   `yaml:"api_base_url"`
	ShardID         int      `yaml:"shard_id"`
	ShardCount      int      `yaml:"shard_count"`
	AllowDMs        bool     `yaml:"allow_dms"`
	DevGuild        string   `yaml:"dev_guild"`
	AdminRoles      []string `yaml:"admin_roles"`
	AllowedGuilds   []string `yaml:"allowed_guilds"`
	AllowedChannels []string `yaml:"allowed_channels"`
	// Space is how guild channels are grouped into memory spaces:
	// SpaceAudience, SpaceGuild or SpaceChannel.
	Space string `yaml:"space"`
	// CDNBaseURL is where attachments are downloaded from, ending in /:
	// the only host (with DiscordMediaURL when it is DiscordCDNURL) a
	// picture or voice message is fetched from, whatever a message links.
	CDNBaseURL string `yaml:"cdn_base_url"`
}

// Discord's file hosts: its CDN, the default of discord.cdn_base_url, and
// the media proxy that serves the same attachments (allowed along with the
// CDN when cdn_base_url is Discord's own).
const (
	DiscordCDNURL   = "https://cdn.discordapp.com/"
	DiscordMediaURL = "https://media.discordapp.net/"
)

// Values of discord.space.
const (
	// SpaceAudience makes a guild's public channels one space and each
	// private channel or private thread (one @everyone cannot view) a
	// space of its own.
	SpaceAudience = "audience"
	// SpaceGuild makes each guild one space, private channels included.
	SpaceGuild = "guild"
	// SpaceChannel makes each channel a space of its own (a public
	// thread its parent's, a private thread its own).
	SpaceChannel = "channel"
)

// Telegram configures the Telegram adapter; it runs when Token is set.
type Telegram struct {
	Token         Secret   `yaml:"token"`
	APIEndpoint   string   `yaml:"api_endpoint"`
	WebhookURL    string   `yaml:"webhook_url"`
	WebhookListen string   `yaml:"webhook_listen"`
	WebhookSecret Secret   `yaml:"webhook_secret"`
	AllowGroups   bool     `yaml:"allow_groups"`
	AllowedUsers  []string `yaml:"allowed_users"`
}

// Limits bound what one user can ask of troupe, on every platform, and how
// much work troupe does at once.
type Limits struct {
	RatePerMinute   int `yaml:"rate_per_minute"`
	MaxMessageChars int `yaml:"max_message_chars"`
	// ConcurrentTurns bounds the turns doing their own database work at
	// once; 0 means one per CPU.
	ConcurrentTurns int `yaml:"concurrent_turns"`
	// ConcurrentJobs bounds the memory jobs (recorder, reflection,
	// summaries, recaps) one process runs at once; 0 means 4. They mostly
	// wait for the scribe: with a slow one and many busy channels, more
	// drain the backlog sooner.
	ConcurrentJobs int `yaml:"concurrent_jobs"`
	// ChannelTokensPerMinute and TokensPerMinute are the model's token
	// budgets (prompt and reply) of one channel and of the whole process;
	// a turn over either gets a notice instead of a model call. 0 is off.
	ChannelTokensPerMinute int `yaml:"channel_tokens_per_minute"`
	TokensPerMinute        int `yaml:"tokens_per_minute"`
}

// Groups sets what the members of a group channel (a Discord guild
// channel, a Telegram group) may do without the right to manage it.
type Groups struct {
	// NewNeedsManager: only those who may manage the channel end its
	// shared chat with /new.
	NewNeedsManager bool `yaml:"new_needs_manager"`
}

// Ops configures the operations HTTP endpoint.
type Ops struct {
	Listen string `yaml:"listen"`
}

// Web configures the web inspector. It is off unless Token is set.
type Web struct {
	// Listen is the inspector's HOST:PORT.
	Listen string `yaml:"listen"`
	// Token logs in with every right; ReadOnlyToken logs in to look only.
	Token         Secret `yaml:"token"`
	ReadOnlyToken Secret `yaml:"read_only_token"`
	// Prompts is how many of a chat's latest replies keep the prompt they
	// were built from, for the inspector; 0 keeps none.
	Prompts int `yaml:"prompts"`
}

// On reports whether the inspector is configured (a token is set).
func (w Web) On() bool { return w.Token != "" }

// PromptTraces is how many of a chat's latest replies keep their prompt
// trace: Prompts when the inspector is on, else 0 (none is computed).
func (w Web) PromptTraces() int {
	if !w.On() {
		return 0
	}
	return max(w.Prompts, 0)
}

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// Secret is a string that never prints its value.
type Secret string

// String hides the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// Value returns the secret itself.
func (s Secret) Value() string { return string(s) }

// GoString hides the value from %#v.
func (s Secret) GoString() string { return s.String() }

// Format hides the value from every fmt verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// LogValue hides the value from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON hides the value from JSON output.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// MarshalYAML hides the value from YAML output.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// DefaultBaseURL is the OpenAI API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Default returns the configuration with every default filled in.
func Default() Config {
	return Config{
		Model: Model{
			BaseURL:        DefaultBaseURL,
			Name:           "gpt-4o-mini",
			ContextWindow:  128000,
			MaxReplyTokens: 1024,
			Temperature:    0.9,
			Timeout:        120 * time.Second,
			MaxRetries:     2,
		},
		Database:   Database{DSN: "sqlite://troupe.db"},
		Recorder:   Recorder{Enabled: true, Batch: 6, JSONMode: true},
		Scene:      Scene{MaxCast: 8},
		Reflection: Reflection{Auto: true, EveryTurns: 20, MinTurns: 5, PerRun: 3, MinNew: 3, MaxChecks: 5, PivotalImportance: 8},
		Recall: Recall{Enabled: true, Candidates: 50, MaxItems: 8, MaxChars: 1500, KeptChars: 3000, Timeout: 5 * time.Second, BusyWait: 10 * time.Millisecond,
			Weights:    RecallWeights{Importance: 1, Relevance: 1.5, Recency: 0.5, Retention: 1},
			Embeddings: Embeddings{Dimensions: 256}, VectorCacheMB: 64, DiagnosticsTurns: 50},
		Memory: Memory{
			Keep:              6,
			Period:            30,
			MinCutChars:       2000,
			ManualMinCutChars: 500,
			ResidentMaxChars:  1200,
			EnvelopeChars:     4300,
			MinUsefulChars:    200,
			IdleRecap:         30 * time.Minute,
			SweepInterval:     5 * time.Minute,
			RecapMaxChars:     60000,
			BatchTokens:       16000,
			Fading:            true,
			FoldedFade:        0.5,
			HandbookMaxChars:  6000,
			BeliefsMax:        120,
			ReorganizeBatches: 5,
			ReorganizeTokens:  40000,
			ReorganizeAt:      "03:00",
		},
		Cards: Cards{Dir: "cards"},
		Lore:  Lore{BudgetPercent: 25, BudgetTokens: 4096},
		TTS:   defaultTTS,
		Image: defaultImage,
		Media: Media{MaxImages: 4, MaxImageBytes: 8 << 20, MaxAudioBytes: 25 << 20, MaxTextChars: 8000,
			Dir: "media", Timeout: 60 * time.Second},
		STT:      STT{Model: "whisper-1"},
		Language: "en",
		Discord:  Discord{ShardCount: 1, Space: SpaceAudience, CDNBaseURL: DiscordCDNURL},
		Telegram: Telegram{WebhookListen: "127.0.0.1:8443"},
		Limits:   Limits{RatePerMinute: 20, MaxMessageChars: 8000},
		Groups:   Groups{NewNeedsManager: true},
		Ops:      Ops{Listen: "127.0.0.1:9090"},
		Web:      Web{Listen: "127.0.0.1:8080", Prompts: 20},
		Log:      Log{Level: "info", Format: "text"},
	}
}

// ScribeModel returns the scribe's model settings, each empty key taken from
// the main model, but for api_key: the main model's only when the scribe is
// on its server (sideKey); and for context_window: the main model's only
// when the scribe is the main model, else 0 (ask the endpoint).
func (c Config) ScribeModel() Model {
	s, m := c.Scribe, c.Model
	if s.BaseURL == "" {
		s.BaseURL = m.BaseURL
	}
	s.APIKey = c.sideKey(s.BaseURL, s.APIKey)
	if s.Name == "" {
		s.Name = m.Name
	}
	// The main model's window is the scribe's only when the scribe is the
	// main model; another model's is asked of its endpoint (0 here).
	if s.ContextWindow == 0 && s.BaseURL == m.BaseURL && s.Name == m.Name {
		s.ContextWindow = m.ContextWindow
	}
	if s.MaxReplyTokens == 0 {
		s.MaxReplyTokens = 4096
	}
	if s.Temperature == 0 {
		s.Temperature = 0.3
	}
	if s.Timeout == 0 {
		s.Timeout = 3 * m.Timeout
	}
	if s.MaxRetries == 0 {
		s.MaxRetries = m.MaxRetries
	}
	return s
}
