package udiff

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedGolden(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"equal", "a\n", "a\n", ""},
		{"create", "", "a\nb\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"delete all", "a\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n"},
		{"change middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n",
			"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n"},
		{"no newline", "a\nb", "a\nc", "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"add newline", "a", "a\n", "--- a\n+++ b\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"insert at top", "b\nc\n", "a\nb\nc\n", "--- a\n+++ b\n@@ -1,2 +1,3 @@\n+a\n b\n c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unified("a", "b", tt.old, tt.new, 3)
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if got != "" {
				checkApplies(t, tt.old, tt.new, got)
			}
		})
	}
}

// apply applies a unified diff produced by Unified to old.
func apply(old, diff string) (string, error) {
	a := SplitLines(old)
	lines := SplitLines(diff)
	if len(lines) < 2 {
		return old, nil
	}
	lines = lines[2:]
	var out []string
	pos := 0
	for i := 0; i < len(lines); {
		h := lines[i]
		// "@@ -S[,L] +S[,L] @@"
		f := strings.Fields(h)
		if len(f) < 4 || f[0] != "@@" {
			return "", fmt.Errorf("bad hunk header %q", h)
		}
		st, _, _ := strings.Cut(strings.TrimPrefix(f[1], "-"), ",")
		ln := "1"
		if _, l, ok := strings.Cut(f[1], ","); ok {
			ln = l
		}
		start, _ := strconv.Atoi(st)
		n, _ := strconv.Atoi(ln)
		if n > 0 {
			start--
		}
		for pos < start {
			out = append(out, a[pos])
			pos++
		}
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			body := l[1:]
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\ No newline") {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ':
				if a[pos] != body {
					return "", fmt.Errorf("context mismatch at %d: %q vs %q", pos, a[pos], body)
				}
				out = append(out, body)
				pos++
			case '-':
				if a[pos] != body {
					return "", fmt.Errorf("delete mismatch at %d: %q vs %q", pos, a[pos], body)
				}
				pos++
			case '+':
				out = append(out, body)
			}
			i++
		}
	}
	out = append(out, a[pos:]...)
	return strings.Join(out, ""), nil
}

func checkApplies(t *testing.T, old, new, diff string) {
	t.Helper()
	got, err := apply(old, diff)
	if err != nil {
		t.Fatalf("applying:\n%s\n%v", diff, err)
	}
	if got != new {
		t.Fatalf("applied diff gives %q, want %q\n%s", got, new, diff)
	}
}

func randText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(string(rune('a' + r.Intn(4))))
		sb.WriteByte('\n')
	}
	if r.Intn(4) == 0 {
		sb.WriteString("tail")
	}
	return sb.String()
}

func mutate(r *rand.Rand, s string) string {
	lines := SplitLines(s)
	for k := r.Intn(6); k >= 0; k-- {
		switch op := r.Intn(3); {
		case op == 0 && len(lines) > 0:
			i := r.Intn(len(lines))
			lines = append(lines[:i], lines[i+1:]...)
		case op == 1:
			i := r.Intn(len(lines) + 1)
			lines = append(lines[:i], append([]string{"new" + strconv.Itoa(r.Intn(9)) + "\n"}, lines[i:]...)...)
		case len(lines) > 0:
			lines[r.Intn(len(lines))] = "chg\n"
		}
	}
	return strings.Join(lines, "")
}

// TestRandomApply checks that every diff applies, is minimal-ish (GNU diff
// finds the same number of changed lines), and that patch(1) accepts it.
func TestRandomApply(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	_, diffErr := exec.LookPath("diff")
	_, patchErr := exec.LookPath("patch")
	dir := t.TempDir()
	for i := 0; i < 300; i++ {
		old := randText(r, r.Intn(30))
		new := mutate(r, old)
		d := Unified("a/f", "b/f", old, new, 3)
		if old == new {
			if d != "" {
				t.Fatalf("diff of equal texts: %q", d)
			}
			continue
		}
		checkApplies(t, old, new, d)
		if diffErr == nil {
			of, nf := filepath.Join(dir, "old"), filepath.Join(dir, "new")
			os.WriteFile(of, []byte(old), 0o644)
			os.WriteFile(nf, []byte(new), 0o644)
			out, _ := exec.Command("diff", "-u", of, nf).Output()
			if a, b := countChanges(string(out)), countChanges(d); a != b {
				t.Errorf("case %d: GNU diff changes %d lines, ours %d\nold %q\nnew %q\nours:\n%s\ngnu:\n%s", i, a, b, old, new, d, out)
			}
		}
		if patchErr == nil && i%10 == 0 {
			f := filepath.Join(dir, "p")
			os.WriteFile(f, []byte(old), 0o644)
			cmd := exec.Command("patch", "-s", "--posix", f)
			cmd.Stdin = strings.NewReader(d)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("patch(1) rejects:\n%s\n%s", d, out)
			}
			got, _ := os.ReadFile(f)
			if string(got) != new {
				t.Fatalf("patch(1) gives %q want %q", got, new)
			}
		}
	}
}

func countChanges(d string) int {
	n := 0
	for _, l := range SplitLines(d) {
		if (strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---")) || (strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++")) {
			n++
		}
	}
	return n
}

func TestLargeFallback(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 6000; i++ {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := Unified("a", "b", a.String(), b.String(), 3)
	checkApplies(t, a.String(), b.String(), d)
}
