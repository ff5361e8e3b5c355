package plugin

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// reportPercentiles adds p50 and p90 in microseconds to a benchmark.
func reportPercentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*9/10].Microseconds()), "p90-µs")
}

// BenchmarkCallOverhead compares running /bin/true directly with running it
// through the host → exec plugin → child path (the exec plugin's process
// group, environment, output capture and descendant scan included), and the
// round trip of a handler that does no work. The target: the plugin path
// adds under 1 ms at p50 to a call; compare exec-true-plugin with
// exec-true-direct.
func BenchmarkCallOverhead(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	m, err := Start(context.Background(), []Spec{testSpec("opair-plugin-exec"), testSpec("opair-plugin-test")}, Options{ProjectRoot: os.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()

	b.Run("exec-true-direct", func(b *testing.B) {
		d := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		reportPercentiles(b, d)
	})
	b.Run("exec-true-plugin", func(b *testing.B) {
		req := &pluginv1.InvokeRequest{
			ToolName: "true", HandlerType: "exec", HandlerJson: []byte(`{"type":"exec","bin":"true"}`), ArgumentsJson: []byte(`{}`),
			Command: &pluginv1.ExecCommand{Argv: []string{truePath}, Env: []string{"PATH=/usr/bin:/bin"}, ModelArgsStart: 1},
		}
		d := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			res, err := m.Invoke(context.Background(), req, nil)
			if err != nil || res.IsError {
				b.Fatalf("%v %v", res, err)
			}
			d = append(d, time.Since(start))
		}
		reportPercentiles(b, d)
	})
	b.Run("echo-round-trip", func(b *testing.B) {
		req := call("echo", "x")
		d := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if _, err := m.Invoke(context.Background(), req, nil); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		reportPercentiles(b, d)
	})
}
