package files

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFindInProject searches the Go distribution's own source, the
// tree the ripgrep comparison (bench/findinproject.sh) uses, in process
// (go test -bench FindInProject -run ^$ ./plugins/builtin/files). It
// reports the CPU time per search too: on a loaded machine it is steadier
// than the wall time.
func BenchmarkFindInProject(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	if _, serr := os.Stat(root); err != nil || serr != nil {
		b.Skip("no $(go env GOROOT)/src")
	}
	t := &testing.T{}
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"literal", map[string]any{"pattern": "func main", "literal": true}},
		{"literalCommon", map[string]any{"pattern": "func", "literal": true, "maxResults": maxMaxResults}},
		{"literalRare", map[string]any{"pattern": "ErrUnexpectedEOF", "literal": true}},
		{"regexp", map[string]any{"pattern": `func \w+\(ctx context\.Context`}},
		{"regexpClass", map[string]any{"pattern": `[A-Z][a-z]+Error`, "maxResults": maxMaxResults}},
		{"regexpNoLiteral", map[string]any{"pattern": `\d{4}-\d{2}-\d{2}`}},
		{"caseInsensitive", map[string]any{"pattern": "deadline exceeded", "caseInsensitive": true}},
		{"glob", map[string]any{"glob": "**/*_test.go"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				res, err := invoke(t, root, "findInProject", "", bc.args)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
