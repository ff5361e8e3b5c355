package files

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkFindInProject searches the Go distribution's own source, the
// tree the ripgrep comparison uses (go test -bench FindInProject -run ^$).
func BenchmarkFindInProject(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command")
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	if _, err := os.Stat(root); err != nil {
		b.Skip("no GOROOT/src")
	}
	t := &testing.T{}
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"literal", map[string]any{"pattern": "func main", "literal": true}},
		{"regexp", map[string]any{"pattern": `func \w+\(ctx context\.Context`}},
		{"caseInsensitive", map[string]any{"pattern": "deadline exceeded", "caseInsensitive": true}},
		{"glob", map[string]any{"glob": "**/*_test.go"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := invoke(t, root, "findInProject", "", bc.args)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
