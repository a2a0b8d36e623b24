// Package ops is troupe's operations endpoint: /healthz, /readyz (database
// and Redis reachable) and /metrics in the Prometheus format, with the
// metrics the pipeline and the job workers report.
package ops

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"troupe/bot"
	"troupe/jobs"
	"troupe/memory"
)

// Metrics holds troupe's Prometheus metrics.
type Metrics struct {
	reg          *prometheus.Registry
	turns        *prometheus.CounterVec
	pipelineTime *prometheus.HistogramVec
	queueTime    *prometheus.HistogramVec
	modelTime    *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	promptTokens prometheus.Histogram
	recalls      *prometheus.CounterVec
	promptMsgs   prometheus.Histogram
	jobRuns      *prometheus.CounterVec
	forgets      *prometheus.CounterVec
	sendErrors   *prometheus.CounterVec
	panics       *prometheus.CounterVec
}

var _ bot.Observer = (*Metrics)(nil)
var _ jobs.Observer = (*Metrics)(nil)

// Depth reports the job queue's depth and the age of its oldest waiting job.
type Depth interface {
	Depth(ctx context.Context) (int, time.Duration, error)
}

// Failing counts the keys whose last memory job failed, by kind: work that
// stays owed and is tried again with backoff.
type Failing interface {
	FailingJobCounts(ctx context.Context) (map[string]int, error)
}

// NewMetrics registers troupe's metrics (and the Go runtime's) on a new
// registry; depth and failing, when not nil, are read at each scrape.
func NewMetrics(depth Depth, failing Failing) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	ms := []float64{.001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	m.turns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troupe_turns_total", Help: "Turns by platform and outcome."}, []string{"platform", "outcome"})
	m.pipelineTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "troupe_turn_pipeline_seconds", Help: "The pipeline's own time per turn, model time excluded.", Buckets: ms}, []string{"platform"})
	m.queueTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "troupe_turn_queue_seconds", Help: "Time a turn waited for a pipeline slot (limits.concurrent_turns) before its pipeline work began.", Buckets: ms}, []string{"platform"})
	m.modelTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "troupe_turn_model_seconds", Help: "Time spent waiting for the model per turn.", Buckets: ms}, []string{"platform"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troupe_model_tokens_total", Help: "Tokens the model API reported, by kind (prompt, completion)."}, []string{"kind"})
	m.promptTokens = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "troupe_prompt_tokens", Help: "Prompt size in tokens per turn.", Buckets: prometheus.ExponentialBuckets(256, 2, 10)})
	m.promptMsgs = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "troupe_prompt_messages", Help: "Prompt size in messages per turn.", Buckets: prometheus.LinearBuckets(2, 8, 12)})
	m.jobRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troupe_memory_jobs_total", Help: "Memory job runs by kind and outcome (written, skipped, rejected, failed)."}, []string{"kind", "outcome"})
	m.forgets = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troupe_forgets_total", Help: "Confirmed /forget operations."}, []string{"platform"})
	m.sendErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troupe_platform_send_errors_total", Help: "Replies a platform could not deliver."}, []string{"platform"})
	m.recalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troupe_recall_total", Help: "Answered turns' recall by how it went: full; under load fewer (half the candidates), cached (the chat's last ranking loaded again), late (no new block)."}, []string{"mode"})
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "troupe_panics_total", Help: "Panics recovered, by where (turn, command, an adapter's event, a job); the process went on."}, []string{"where"})
	m.reg.MustRegister(m.turns, m.pipelineTime, m.queueTime, m.modelTime, m.tokens, m.promptTokens, m.promptMsgs, m.jobRuns, m.forgets, m.sendErrors, m.recalls, m.panics,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if depth != nil {
		m.reg.MustRegister(&depthCollector{
			d:      depth,
			depth:  prometheus.NewDesc("troupe_queue_depth", "Memory jobs waiting, running or waiting to retry.", nil, nil),
			oldest: prometheus.NewDesc("troupe_queue_oldest_seconds", "Age of the oldest waiting memory job.", nil, nil),
		})
	}
	if failing != nil {
		m.reg.MustRegister(&failingCollector{
			f:    failing,
			desc: prometheus.NewDesc("troupe_memory_jobs_failing", "Keys (chats, card and space pairs) whose last memory job failed, by kind: work owed and retried with backoff.", []string{"kind"}, nil),
		})
	}
	return m
}

// TurnObserved implements bot.Observer.
func (m *Metrics) TurnObserved(t bot.TurnStats) {
	m.turns.WithLabelValues(t.Platform, t.Outcome).Inc()
	m.pipelineTime.WithLabelValues(t.Platform).Observe(t.Pipeline.Seconds())
	m.queueTime.WithLabelValues(t.Platform).Observe(t.Queued.Seconds())
	if t.Model > 0 {
		m.modelTime.WithLabelValues(t.Platform).Observe(t.Model.Seconds())
	}
	if t.PromptTokens > 0 {
		m.tokens.WithLabelValues("prompt").Add(float64(t.PromptTokens))
		m.promptTokens.Observe(float64(t.PromptTokens))
	}
	if t.CompletionTokens > 0 {
		m.tokens.WithLabelValues("completion").Add(float64(t.CompletionTokens))
	}
	if t.PromptMessages > 0 {
		m.promptMsgs.Observe(float64(t.PromptMessages))
	}
	if t.Recall != "" {
		m.recalls.WithLabelValues(t.Recall).Inc()
	}
}

// Forgotten implements bot.Observer.
func (m *Metrics) Forgotten(platform string) { m.forgets.WithLabelValues(platform).Inc() }

// SendFailed implements bot.Observer.
func (m *Metrics) SendFailed(platform string) { m.sendErrors.WithLabelValues(platform).Inc() }

// Panicked implements bot.Observer and jobs.Observer.
func (m *Metrics) Panicked(where string) { m.panics.WithLabelValues(where).Inc() }

// JobObserved implements jobs.Observer.
func (m *Metrics) JobObserved(kind, outcome string) { m.jobRuns.WithLabelValues(kind, outcome).Inc() }

type depthCollector struct {
	d             Depth
	depth, oldest *prometheus.Desc
}

func (c *depthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.depth; ch <- c.oldest }

func (c *depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, age, err := c.d.Depth(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age.Seconds())
}

type failingCollector struct {
	f    Failing
	desc *prometheus.Desc
}

func (c *failingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect reports every kind, 0 included, so that an alert on the gauge
// sees it fall back.
func (c *failingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.f.FailingJobCounts(ctx)
	if err != nil {
		return
	}
	for _, kind := range []string{memory.KindCompact, memory.KindRecap, memory.KindConsolidate} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[kind]), kind)
	}
}

// Check is a readiness probe: nil when the dependency answers.
type Check func(ctx context.Context) error

// Server serves the operations endpoint.
type Server struct {
	srv    *http.Server
	log    *slog.Logger
	checks map[string]Check
}

// NewServer returns the endpoint on addr; checks are run by /readyz.
func NewServer(addr string, m *Metrics, checks map[string]Check, log *slog.Logger) *Server {
	s := &Server{log: log.With("component", "ops"), checks: checks}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.ready)
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	s.srv = &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return s
}

// Handler returns the endpoint's handler (tests).
func (s *Server) Handler() http.Handler { return s.srv.Handler }

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	status := http.StatusOK
	var body []byte
	for name, check := range s.checks {
		if err := check(ctx); err != nil {
			status = http.StatusServiceUnavailable
			body = append(body, name+": unavailable\n"...)
			s.log.Warn("readiness check failed", "check", name, "err", err)
			continue
		}
		body = append(body, name+": ok\n"...)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Run serves until ctx is done, then shuts down within a few seconds.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.srv.Addr)
	if err != nil {
		return err
	}
	s.log.Info("operations endpoint", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
