package run

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// reportP50 adds the median duration, in microseconds, to a benchmark.
func reportP50(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*9/10].Microseconds()), "p90-µs")
}

// BenchmarkRunTrue measures Run(/bin/true): its own session, stdin
// /dev/null, output pipe, and the cleanup after the exit. Compare with
// BenchmarkExecTrue: the difference is the runner's own overhead.
func BenchmarkRunTrue(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	dir := b.TempDir()
	d := make([]time.Duration, 0, b.N)
	fastCount.Lock()
	cleanups, sweeps := fastCount.cleanups, fastCount.sweeps
	fastCount.Unlock()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := Run(context.Background(), Spec{Path: truePath, Dir: dir, Env: testEnv, Timeout: time.Minute})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	reportP50(b, d)
	// How many of the cleanups and sweeps the fast path proved empty
	// without a scan of /proc (1 each when nothing else on the machine
	// started a process or thread meanwhile).
	fastCount.Lock()
	b.ReportMetric(float64(fastCount.cleanups-cleanups)/float64(b.N), "fast-cleanups/op")
	b.ReportMetric(float64(fastCount.sweeps-sweeps)/float64(b.N), "fast-sweeps/op")
	fastCount.Unlock()
}

// BenchmarkExecTrue measures exec.Command(/bin/true).Run(), the baseline
// for BenchmarkRunTrue.
func BenchmarkExecTrue(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	dir := b.TempDir()
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		cmd := exec.Command(truePath)
		cmd.Dir, cmd.Env = dir, testEnv
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	reportP50(b, d)
}
