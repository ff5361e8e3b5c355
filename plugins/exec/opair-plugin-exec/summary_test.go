package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opair-dev/opair/plugins/exec/run"
)

// gitOut runs git in dir and returns its output, failing the test on error.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null/none")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSummariesOfRealGitOutput feeds the summaries the output of real git
// commands on a real repository.
func TestSummariesOfRealGitOutput(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	gitOut(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "a.txt", "one\ntwo\n")
	write(t, dir, "b.txt", "bee\n")
	gitOut(t, dir, "add", ".")
	gitOut(t, dir, "commit", "-qm", "first")
	write(t, dir, "a.txt", "one\n2\nthree\n")
	gitOut(t, dir, "commit", "-qam", "second")
	write(t, dir, "a.txt", "uno\n2\nthree\n")
	write(t, dir, "c.txt", "new\n")
	gitOut(t, dir, "add", "c.txt")
	write(t, dir, "d.txt", "untracked\n")
	os.Remove(filepath.Join(dir, "b.txt"))

	sum := func(kind, out string) string {
		return summarize(kind, []string{"/usr/bin/git", "x"}, run.Result{Output: []byte(out)}, time.Minute)
	}
	cases := []struct{ kind, out, want string }{
		{"gitStatus", gitOut(t, dir, "status"), "1 modified, 1 new, 1 deleted, 1 untracked"},
		{"gitStatus", gitOut(t, dir, "status", "--short"), "1 modified, 1 new, 1 deleted, 1 untracked"},
		{"gitDiff", gitOut(t, dir, "diff"), "2 files changed, +1 −2"},
		{"gitDiff", gitOut(t, dir, "diff", "--stat"), "2 files changed, 1 insertion(+), 2 deletions(-)"},
		{"gitLog", gitOut(t, dir, "log"), "2 commits"},
		{"gitLog", gitOut(t, dir, "log", "--oneline"), "2 commits"},
		{"grep", gitOut(t, dir, "grep", "-n", "e"), "2 matches in 2 files"},
	}
	for _, c := range cases {
		if got := sum(c.kind, c.out); got != c.want {
			t.Errorf("%s of\n%s\n= %q, want %q", c.kind, c.out, got, c.want)
		}
	}
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-qm", "third")
	if got := sum("gitStatus", gitOut(t, dir, "status")); got != "clean" {
		t.Errorf("clean tree: %q", got)
	}
	if got := sum("gitDiff", gitOut(t, dir, "diff")); got != "no changes" {
		t.Errorf("empty diff: %q", got)
	}
}

func TestSummaryKinds(t *testing.T) {
	res := func(out string, code int) run.Result { return run.Result{Output: []byte(out), ExitCode: code} }
	cases := []struct {
		kind string
		argv []string
		res  run.Result
		want string
	}{
		{"commandEcho", []string{"/usr/local/go/bin/go", "test", "-run", "Test X", "./..."}, res("ok\n", 0), "$ go test -run 'Test X' ./..."},
		{"commandEcho", []string{"/usr/bin/go", "vet"}, res("", 1), "$ go vet (exit 1)"},
		{"lineCount:file", nil, res("a.go\nb.go\n\n", 0), "2 files"},
		{"lineCount:file", nil, res("a.go\n", 0), "1 file"},
		{"lineCount:match", nil, res("x\ny\nz\n", 0), "3 matches"},
		{"lineCount:entry", nil, res("", 0), "0 entries"},
		{"", nil, res("building…\nok  \texample.com/m\t0.01s\n", 0), "ok   example.com/m 0.01s"},
		{"", nil, res("", 0), "(no output)"},
		{"grep", nil, res("", 1), "no matches (exit 1)"},
		{"", nil, run.Result{TimedOut: true, ExitCode: -1, Signal: "killed"}, "(no output) (timed out after 1m0s)"},
	}
	for _, c := range cases {
		if got := summarize(c.kind, c.argv, c.res, time.Minute); got != c.want {
			t.Errorf("summarize(%q, %v) = %q, want %q", c.kind, c.argv, got, c.want)
		}
	}
	long := strings.Repeat("x", 500)
	if got := summarize("", nil, res(long, 0), time.Minute); len(got) > 210 {
		t.Errorf("long line not cut: %d bytes", len(got))
	}
}
