package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Error is an invalid configuration value: the key and what is wrong.
type Error struct {
	Key     string
	Problem string
}

func (e *Error) Error() string { return "config: " + e.Key + ": " + e.Problem }

// Errors is several invalid values, in the order they were found; each is
// an *Error, so errors.As finds the first.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config: %d problems:", len(es))
	for _, e := range es {
		b.WriteString("\n  " + e.Key + ": " + e.Problem)
	}
	return b.String()
}

// Unwrap returns each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// join returns nil for no problem, the *Error for one and Errors for more.
func join(errs []*Error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return Errors(errs)
}

// Validate checks every key: an *Error for one bad value, Errors naming
// each when there are several.
func (c Config) Validate() error { return join(c.problems()) }

// problems lists every bad value of c.
func (c Config) problems() []*Error {
	checks := []struct {
		key string
		bad bool
		msg string
	}{
		{"model.base_url", !isHTTPURL(c.Model.BaseURL), "must be an http(s) URL such as https://api.openai.com/v1"},
		{"model.name", strings.TrimSpace(c.Model.Name) == "", "must name a model"},
		{"model.context_window", c.Model.ContextWindow < 1024, "must be at least 1024 tokens"},
		{"model.max_reply_tokens", c.Model.MaxReplyTokens < 16 || c.Model.MaxReplyTokens >= c.Model.ContextWindow/2, "must be at least 16 and below half of model.context_window"},
		{"model.temperature", !(c.Model.Temperature >= 0 && c.Model.Temperature <= 2), "must be between 0 and 2"},
		{"model.timeout", c.Model.Timeout <= 0, "must be a positive duration"},
		{"model.max_retries", c.Model.MaxRetries < 0 || c.Model.MaxRetries > 10, "must be between 0 and 10"},
		{"scribe.base_url", c.Scribe.BaseURL != "" && !isHTTPURL(c.Scribe.BaseURL), "must be an http(s) URL or empty (use the main model's)"},
		{"scribe.temperature", !(c.Scribe.Temperature >= 0 && c.Scribe.Temperature <= 2), "must be between 0 and 2"},
		{"scribe.timeout", c.Scribe.Timeout < 0, "must not be negative"},
		{"scribe.context_window", c.Scribe.ContextWindow != 0 && c.Scribe.ContextWindow < 1024, "must be 0 (the endpoint's, else 16384) or at least 1024 tokens"},
		{"database.dsn", !validDSN(string(c.Database.DSN)), "must be sqlite://FILE or postgres://…"},
		{"redis.url", c.Redis.URL != "" && !strings.HasPrefix(string(c.Redis.URL), "redis://") && !strings.HasPrefix(string(c.Redis.URL), "rediss://"), "must be redis://HOST:PORT/DB, or empty for the in-process Redis"},
		{"memory.keep", c.Memory.Keep < 1, "must be at least 1"},
		{"memory.period", c.Memory.Period < 0, "must be 0 (off) or more"},
		{"memory.min_cut_chars", c.Memory.MinCutChars < 0, "must not be negative"},
		{"memory.manual_min_cut_chars", c.Memory.ManualMinCutChars < 0, "must not be negative"},
		{"memory.resident_max_chars", c.Memory.ResidentMaxChars < 1, "must be positive"},
		{"memory.envelope_chars", c.Memory.EnvelopeChars < c.Memory.MinUsefulChars, "must be at least memory.min_useful_chars"},
		{"memory.min_useful_chars", c.Memory.MinUsefulChars < 0, "must not be negative"},
		{"memory.idle_recap", c.Memory.IdleRecap <= 0, "must be a positive duration"},
		{"memory.sweep_interval", c.Memory.SweepInterval <= 0, "must be a positive duration"},
		{"memory.recap_max_chars", c.Memory.RecapMaxChars < 1000, "must be at least 1000"},
		{"memory.batch_tokens", c.Memory.BatchTokens < 500, "must be at least 500"},
		{"memory.folded_fade", !(c.Memory.FoldedFade > 0 && c.Memory.FoldedFade <= 1), "must be above 0 and at most 1"},
		{"memory.handbook_max_chars", c.Memory.HandbookMaxChars < 0, "must be 0 (no budget) or more"},
		{"memory.beliefs_max", c.Memory.BeliefsMax < 0, "must be 0 (no budget) or more"},
		{"memory.reorganize_batches", c.Memory.ReorganizeBatches < 1, "must be at least 1"},
		{"memory.reorganize_tokens", c.Memory.ReorganizeTokens < 1, "must be at least 1"},
		{"memory.reorganize_at", c.Memory.ReorganizeAt != "" && !validClock(c.Memory.ReorganizeAt), "must be a time of day HH:MM, or empty (no nightly reorganize)"},
		{"memory.timezone", !validZone(c.Memory.Timezone), "must be an IANA time zone such as Europe/Berlin, or empty (UTC)"},
		{"recall.candidates", c.Recall.Candidates < 1 || c.Recall.Candidates > 1000, "must be 1 to 1000"},
		{"recall.max_items", c.Recall.MaxItems < 1 || c.Recall.MaxItems > c.Recall.Candidates, "must be at least 1 and at most recall.candidates"},
		{"recall.max_chars", c.Recall.MaxChars < 100, "must be at least 100"},
		{"recall.kept_chars", c.Recall.KeptChars < 0, "must not be negative (0 keeps no block)"},
		{"recall.timeout", c.Recall.Timeout <= 0, "must be a positive duration"},
		{"recall.busy_wait", c.Recall.BusyWait < 0 || c.Recall.BusyWait > c.Recall.Timeout, "must be between 0 and recall.timeout"},
		{"recall.weights", c.Recall.Weights.Importance < 0 || c.Recall.Weights.Relevance < 0 || c.Recall.Weights.Recency < 0 || c.Recall.Weights.Retention < 0 ||
			c.Recall.Weights.Importance+c.Recall.Weights.Relevance+c.Recall.Weights.Recency+c.Recall.Weights.Retention == 0, "must not be negative, and not all 0"},
		{"recall.embeddings.base_url", c.Recall.Embeddings.BaseURL != "" && !isHTTPURL(c.Recall.Embeddings.BaseURL), "must be an http(s) URL or empty (no embeddings)"},
		{"recall.embeddings.model", c.Recall.Embeddings.BaseURL != "" && strings.TrimSpace(c.Recall.Embeddings.Model) == "", "must name a model when recall.embeddings.base_url is set"},
		{"recall.embeddings.dimensions", c.Recall.Embeddings.Dimensions < 1 || c.Recall.Embeddings.Dimensions > 8192, "must be 1 to 8192"},
		{"recall.vector_cache_mb", c.Recall.VectorCacheMB < 1 || c.Recall.VectorCacheMB > 65536, "must be 1 to 65536 (MiB)"},
		{"recall.rerank.base_url", c.Recall.Rerank.BaseURL != "" && !isHTTPURL(c.Recall.Rerank.BaseURL), "must be an http(s) URL or empty (no rerank)"},
		{"recall.rerank.model", c.Recall.Rerank.BaseURL != "" && strings.TrimSpace(c.Recall.Rerank.Model) == "", "must name a model when recall.rerank.base_url is set"},
		{"recall.diagnostics_turns", c.Recall.DiagnosticsTurns < 1, "must be at least 1"},
		{"recorder.batch", c.Recorder.Batch < 1, "must be at least 1"},
		{"scene.max_cast", c.Scene.MaxCast < 1, "must be at least 1"},
		{"reflection.every_turns", c.Reflection.EveryTurns < 1, "must be at least 1"},
		{"reflection.min_turns", c.Reflection.MinTurns < 0, "must not be negative"},
		{"reflection.per_run", c.Reflection.PerRun < 1, "must be at least 1"},
		{"reflection.min_new", c.Reflection.MinNew < 1, "must be at least 1"},
		{"reflection.max_checks", c.Reflection.MaxChecks < 0, "must not be negative"},
		{"reflection.pivotal_importance", c.Reflection.PivotalImportance < 1 || c.Reflection.PivotalImportance > 10, "must be 1 to 10"},
		{"lore.budget_percent", c.Lore.BudgetPercent < 0 || c.Lore.BudgetPercent > 100, "must be between 0 and 100"},
		{"lore.budget_tokens", c.Lore.BudgetTokens < 0, "must be 0 (no cap) or more"},
		{"media.max_images", c.Media.MaxImages < 1, "must be at least 1"},
		{"media.max_image_bytes", c.Media.MaxImageBytes < 1, "must be a positive number of bytes"},
		{"media.max_audio_bytes", c.Media.MaxAudioBytes < 1, "must be a positive number of bytes"},
		{"media.max_text_chars", c.Media.MaxTextChars < 1, "must be a positive number of characters"},
		{"media.dir", c.Media.Keep && strings.TrimSpace(c.Media.Dir) == "", "must name a folder when media.keep is true"},
		{"media.timeout", c.Media.Timeout <= 0, "must be a positive duration"},
		{"media.caption_model", c.Media.CaptionModel != "" && !c.Model.Vision, "is used only with model.vision: true (pictures are captioned only then)"},
		{"stt.base_url", c.STT.BaseURL != "" && !isHTTPURL(c.STT.BaseURL), "must be an http(s) URL such as http://localhost:8000/v1, or empty (voice notes are not heard)"},
		{"stt.base_url", c.STT.BaseURL == "" && (c.STT.APIKey != "" || c.STT.Language != ""), "must be set when stt.api_key or stt.language is"},
		{"stt.model", c.STT.BaseURL != "" && strings.TrimSpace(c.STT.Model) == "", "must name a model when stt.base_url is set"},
		{"stt.language", c.STT.Language != "" && !isLanguageCode(c.STT.Language), "must be an ISO-639-1 code such as en or zh, or empty (the endpoint detects it)"},
		{"language", c.Language != "en" && c.Language != "zh", "must be en or zh"},
		{"discord.api_base_url", c.Discord.APIBaseURL != "" && !isHTTPURL(c.Discord.APIBaseURL), "must be an http(s) URL ending in /"},
		{"discord.cdn_base_url", !isHTTPURL(c.Discord.CDNBaseURL) || !strings.HasSuffix(c.Discord.CDNBaseURL, "/"), "must be an http(s) URL ending in /, such as " + DiscordCDNURL},
		{"discord.shard_count", c.Discord.ShardCount < 1, "must be at least 1"},
		{"discord.shard_id", c.Discord.ShardID < 0 || c.Discord.ShardID >= c.Discord.ShardCount, "must be between 0 and discord.shard_count-1"},
		{"telegram.api_endpoint", c.Telegram.APIEndpoint != "" && strings.Count(c.Telegram.APIEndpoint, "%s") != 2, "must contain two %s, like http://127.0.0.1:8081/bot%s/%s"},
		{"telegram.webhook_url", c.Telegram.WebhookURL != "" && !isHTTPSURL(c.Telegram.WebhookURL), "must be an https:// URL: Telegram posts updates over https only (terminate TLS in a proxy in front of telegram.webhook_listen)"},
		{"telegram.webhook_secret", c.Telegram.WebhookURL != "" && c.Telegram.WebhookSecret == "", "must be set when telegram.webhook_url is"},
		{"telegram.webhook_listen", c.Telegram.WebhookURL != "" && !isListenAddr(c.Telegram.WebhookListen), "must be host:port, like 127.0.0.1:8443 (or 0.0.0.0:8443 for every interface)"},
		{"limits.rate_per_minute", c.Limits.RatePerMinute < 0, "must be 0 (off) or more"},
		{"limits.max_message_chars", c.Limits.MaxMessageChars < 0, "must be 0 (no limit) or more"},
		{"limits.concurrent_turns", c.Limits.ConcurrentTurns < 0, "must be 0 (one per CPU) or more"},
		{"limits.concurrent_jobs", c.Limits.ConcurrentJobs < 0 || c.Limits.ConcurrentJobs > 256, "must be 0 (the default, 4) to 256"},
		{"limits.channel_tokens_per_minute", c.Limits.ChannelTokensPerMinute < 0, "must be 0 (off) or more"},
		{"limits.tokens_per_minute", c.Limits.TokensPerMinute < 0, "must be 0 (off) or more"},
		{"web.prompts", c.Web.Prompts < 0 || c.Web.Prompts > 1000, "must be 0 (keep no prompt) to 1000"},
		{"web.token", c.Web.Token != "" && len(c.Web.Token) < minWebToken, fmt.Sprintf("must be at least %d characters, or empty (the inspector is off)", minWebToken)},
		{"web.read_only_token", c.Web.ReadOnlyToken != "" && len(c.Web.ReadOnlyToken) < minWebToken, fmt.Sprintf("must be at least %d characters, or empty (no read-only login)", minWebToken)},
		{"web.read_only_token", c.Web.ReadOnlyToken != "" && len(c.Web.ReadOnlyToken) >= minWebToken && c.Web.ReadOnlyToken == c.Web.Token, "must differ from web.token"},
		{"log.level", !oneOf(c.Log.Level, "debug", "info", "warn", "error"), "must be debug, info, warn or error"},
		{"log.format", !oneOf(c.Log.Format, "text", "json"), "must be text or json"},
	}
	var errs []*Error
	for _, ch := range checks {
		if ch.bad {
			errs = append(errs, &Error{Key: ch.key, Problem: ch.msg})
		}
	}
	if !oneOf(c.Discord.Space, SpaceAudience, SpaceGuild, SpaceChannel) {
		errs = append(errs, &Error{Key: "discord.space", Problem: fmt.Sprintf("%q must be audience (a private channel or thread is its own space), guild (one space per guild) or channel (one space per channel)", c.Discord.Space)})
	}
	if isHTTPURL(c.Discord.APIBaseURL) && !strings.HasSuffix(c.Discord.APIBaseURL, "/") {
		errs = append(errs, &Error{Key: "discord.api_base_url", Problem: fmt.Sprintf("%q must end in /", c.Discord.APIBaseURL)})
	}
	errs = append(errs, c.outboundProblems()...)
	if problem := listenProblem(c.Ops.Listen); problem != "" {
		errs = append(errs, &Error{Key: "ops.listen", Problem: problem})
	}
	if c.Web.Listen == "" {
		errs = append(errs, &Error{Key: "web.listen", Problem: "must be HOST:PORT, such as 127.0.0.1:8080 (the inspector is off without web.token)"})
	} else if problem := listenProblem(c.Web.Listen); problem != "" {
		errs = append(errs, &Error{Key: "web.listen", Problem: problem})
	}
	return errs
}

// minWebToken is the shortest inspector token accepted: a guessable one
// would open every chat's text.
const minWebToken = 16

// listenProblem says what is wrong with a listen address: HOST:PORT or
// :PORT, the port a number up to 65535; empty is fine (off).
func listenProblem(addr string) string {
	if addr == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not HOST:PORT, such as 127.0.0.1:9090 (empty turns the endpoint off)", addr)
	case perr != nil || n < 0 || n > 65535:
		return fmt.Sprintf("%q: the port must be a number up to 65535, such as 127.0.0.1:9090", addr)
	case strings.ContainsAny(host, " /"):
		return fmt.Sprintf("%q: %q is not a host name or address", addr, host)
	}
	return ""
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func isHTTPSURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

// isListenAddr reports whether s is a TCP address to listen on: host:port,
// the host possibly empty (every interface), the port a number.
func isListenAddr(s string) bool {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

func validDSN(s string) bool {
	switch {
	case strings.HasPrefix(s, "sqlite://"):
		return len(s) > len("sqlite://")
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		// A server on the same machine is often reached over its Unix
		// socket: postgres://troupe@/troupe?host=/var/run/postgresql, or
		// postgres:///troupe (the driver then finds the default socket).
		u, err := url.Parse(s)
		return err == nil && (u.Host != "" || u.Query().Get("host") != "" || strings.Trim(u.Path, "/") != "")
	}
	return false
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

// isLanguageCode reports whether s looks like an ISO-639-1 code: two
// lowercase letters.
func isLanguageCode(s string) bool {
	return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'
}

func validClock(s string) bool {
	_, err := time.Parse("15:04", s)
	return err == nil
}

func validZone(s string) bool {
	_, err := time.LoadLocation(s)
	return err == nil
}
