package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"troupe/bot"
)

// peakRSS returns the process's peak resident set in MiB, from VmHWM in
// /proc/self/status, or else the memory the Go runtime obtained from the
// system.
func peakRSS() (float64, string) {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
			if !ok {
				continue
			}
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb / 1024, "VmHWM"
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.Sys) / (1 << 20), "runtime.MemStats.Sys"
}

// startProfiles starts a CPU profile and block and mutex sampling when dir
// is set; the returned function writes the profiles to dir, each file's
// name after prefix ("" for the turns, "drain-" for the jobs' drain).
func startProfiles(dir, prefix string) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	cpu, err := os.Create(filepath.Join(dir, prefix+"cpu.pprof"))
	if err != nil {
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, fmt.Errorf("bench: profile: %w", err)
	}
	runtime.SetBlockProfileRate(int(time.Microsecond))
	runtime.SetMutexProfileFraction(5)
	return func() error {
		pprof.StopCPUProfile()
		errs := []error{cpu.Close()}
		for _, name := range []string{"block", "mutex", "heap"} {
			f, err := os.Create(filepath.Join(dir, prefix+name+".pprof"))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, pprof.Lookup(name).WriteTo(f, 0), f.Close())
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("bench: profile: %w", err)
		}
		return nil
	}, nil
}

// processCPU returns the user and system time the process has used, from
// /proc/self/stat (in clock ticks of 10 ms), or 0 where that is not there.
func processCPU() time.Duration {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it start at
	// field 3 (state), so utime and stime (fields 14 and 15) are 11 and 12.
	i := strings.LastIndexByte(string(data), ')')
	fields := strings.Fields(string(data[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// writeBench prints the results as a table, and as JSON to jsonPath when
// set. With --json - the JSON goes to stdout and the table to stderr.
func (c *cli) writeBench(res *benchResult, jsonPath string) error {
	table := c.stdout
	if jsonPath == "-" {
		table = c.stderr
	}
	if err := printBench(table, res); err != nil {
		return err
	}
	if jsonPath == "" {
		return nil
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if jsonPath == "-" {
		_, err = c.stdout.Write(data)
		return err
	}
	if err := os.WriteFile(jsonPath, data, 0o644); err != nil {
		return fmt.Errorf("bench: write results: %w", err)
	}
	return nil
}

func printBench(w io.Writer, r *benchResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "troupe bench\t%d channels × %d turns, model latency %s", r.Channels, r.TurnsPerChannel, time.Duration(r.ModelLatencyMS*float64(time.Millisecond)))
	if r.ScribeLatencyMS > 0 {
		fmt.Fprintf(tw, ", memory jobs' calls %s", time.Duration(r.ScribeLatencyMS*float64(time.Millisecond)))
	}
	fmt.Fprintln(tw)
	redis := "redis"
	if r.Redis == "embedded" {
		redis = "embedded redis"
	}
	fmt.Fprintf(tw, "backends\t%s + %s\n", r.Database, redis)
	fmt.Fprintf(tw, "card\t%s\n", r.Card)
	fmt.Fprintf(tw, "turns\t%d (%d answered, %d failed)\n", r.Turns, r.Replies, r.FailedTurns)
	if r.FirstFailure != "" {
		fmt.Fprintf(tw, "first failure\t%s\n", r.FirstFailure)
	}
	fmt.Fprintf(tw, "wall time\t%.2f s\n", r.WallSeconds)
	fmt.Fprintf(tw, "turns per second\t%.1f\n", r.TurnsPerSecond)
	fmt.Fprintf(tw, "pipeline p50 / p99 / max\t%.2f / %.2f / %.2f ms (model time excluded)\n", r.PipelineP50MS, r.PipelineP99MS, r.PipelineMaxMS)
	if r.TurnsPerChannel > 1 {
		fmt.Fprintf(tw, "after the openings\t%.1f turns/s; pipeline %.2f / %.2f / %.2f ms\n", r.SteadyTurnsPerSecond, r.SteadyP50MS, r.SteadyP99MS, r.SteadyMaxMS)
	}
	fmt.Fprintf(tw, "waiting for a turn slot\tp50 / p99 %.2f / %.2f ms (%.2f / %.2f after the openings; %d slots)\n", r.QueueP50MS, r.QueueP99MS, r.SteadyQueueP50, r.SteadyQueueP99, r.ConcurrentTurns)
	fmt.Fprintf(tw, "process CPU per turn\t%.2f ms (fake model included)\n", r.CPUMSPerTurn)
	fmt.Fprintf(tw, "prompt tokens per turn\t%.0f at the start, %.0f at the end\n", r.PromptTokensFirst, r.PromptTokensLast)
	fmt.Fprintf(tw, "prompt prefix reuse\tmedian %.3f turn to turn (%d pairs)\n", r.PrefixReuseMedian, r.PrefixReusePairs)
	fmt.Fprintf(tw, "messages stored\t%d (summaries %d)\n", r.MessagesStored, r.SummariesStored)
	fmt.Fprintf(tw, "model requests\t%d chat, %d scribe (jobs drained in %.2f s)\n", r.ChatRequests, r.ScribeRequests, r.JobsDrainSeconds)
	fmt.Fprintf(tw, "side-model calls\tsummary %d, recap %d, consolidate %d, record %d, reflect %d, belief check %d\n",
		r.SideRequests["summary"], r.SideRequests["recap"], r.SideRequests["consolidate"], r.SideRequests["record"], r.SideRequests["reflect"], r.SideRequests["belief_check"])
	if len(r.Recalls) > 0 {
		fmt.Fprintf(tw, "recall\tfull %d; under load: fewer candidates %d, cached ranking %d, late %d; failed %d\n",
			r.Recalls[bot.RecallFull], r.Recalls[bot.RecallFewer], r.Recalls[bot.RecallCached], r.Recalls[bot.RecallLate], r.Recalls[bot.RecallFailed])
	}
	fmt.Fprintf(tw, "turns per second, drain included\t%.1f\n", r.TurnsPerSecondDrained)
	fmt.Fprintf(tw, "statements per turn\t%.1f in the turn, %.1f in memory jobs (round trips on PostgreSQL: %.1f and %.1f)\n",
		r.StatementsPerTurn, r.JobStatementsPerTurn, r.RoundTripsPerTurn, r.JobRoundTripsPerTurn)
	fmt.Fprintf(tw, "peak RSS\t%.1f MiB (%s)\n", r.PeakRSSMiB, r.PeakRSSSource)
	if r.SQLitePath != "" {
		fmt.Fprintf(tw, "database kept\t%s\n", r.SQLitePath)
	}
	return tw.Flush()
}
