package files

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rgFlags give ripgrep findInProject's semantics: no config file; dot
// paths, symbolic links and binary files (a NUL byte; no UTF-16
// transcoding) skipped; .gitignore files at every level honoured, in a git
// repository or not, but no .ignore/.rgignore files and nothing above the
// root. bench/findinproject.sh uses the same.
var rgFlags = []string{"--no-config", "--no-heading", "--line-number", "--color", "never",
	"--no-require-git", "--no-ignore-parent", "--no-ignore-dot", "--encoding", "none"}

// TestFindInProjectMatchesRipgrep compares findInProject's matches
// (path:line) with ripgrep's on generated trees, for literal,
// case-insensitive and regular-expression patterns that take each of the
// matcher's paths (plain text, folded text, a regexp prefiltered by its
// required text, with and without a first-byte set, and a regexp without
// one). Skipped when rg is not installed (Debian: apt-get install
// ripgrep).
func TestFindInProjectMatchesRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep (rg) is not installed")
	}
	t.Setenv("RIPGREP_CONFIG_PATH", "")
	// No global excludes file of the machine's user: both tools would read
	// it, but keep the comparison to the generated rules.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	// Each query: findInProject's arguments and rg's pattern flags. Go's
	// \w is ASCII, rg's Unicode: (?-u:\w) for rg.
	queries := []struct {
		args map[string]any
		rg   []string
	}{
		{map[string]any{"pattern": "func", "literal": true}, []string{"-F", "-e", "func"}},
		{map[string]any{"pattern": "return nil", "literal": true}, []string{"-F", "-e", "return nil"}},
		{map[string]any{"pattern": "a.b(", "literal": true}, []string{"-F", "-e", "a.b("}},
		{map[string]any{"pattern": "Deadline Exceeded", "literal": true, "caseInsensitive": true}, []string{"-F", "-i", "-e", "Deadline Exceeded"}},
		{map[string]any{"pattern": "kelvin", "literal": true, "caseInsensitive": true}, []string{"-F", "-i", "-e", "kelvin"}},
		{map[string]any{"pattern": "été", "literal": true, "caseInsensitive": true}, []string{"-F", "-i", "-e", "été"}},
		{map[string]any{"pattern": `func \w+\(`}, []string{"-e", `func (?-u:\w)+\(`}},
		{map[string]any{"pattern": `[A-Z][a-z]+Error`}, []string{"-e", `[A-Z][a-z]+Error`}},
		{map[string]any{"pattern": `^import \(`}, []string{"-e", `^import \(`}},
		{map[string]any{"pattern": `nil$`}, []string{"-e", `nil$`}},
		{map[string]any{"pattern": `\bword\b`}, []string{"-e", `(?-u:\b)word(?-u:\b)`}},
		{map[string]any{"pattern": `x[0-9]+y`}, []string{"-e", `x[0-9]+y`}},
		{map[string]any{"pattern": `error|panic`}, []string{"-e", `error|panic`}},
		{map[string]any{"pattern": `(?i)fatal error`}, []string{"-e", `(?i)fatal error`}},
		{map[string]any{"pattern": `r[eé]sum[eé]`}, []string{"-e", `r[eé]sum[eé]`}},
		{map[string]any{"pattern": `\s+$`}, []string{"-e", `\s+$`}},
	}
	for seed := int64(1); seed <= 3; seed++ {
		root := rgTree(t, seed)
		for _, q := range queries {
			args := map[string]any{"maxResults": maxMaxResults}
			for k, v := range q.args {
				args[k] = v
			}
			got, res := mustOK(t, root, "findInProject", "", args)
			if d := details(t, res); d["truncated"] != false {
				t.Fatalf("%v: truncated: %v", q.args, d)
			}
			cmd := exec.Command(rg, append(append(slices.Clone(rgFlags), "-j2"), q.rg...)...)
			cmd.Dir = root
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0) {
				t.Fatalf("rg %v: %v: %s", q.rg, err, stderr.Bytes())
			}
			want := pathLines(string(out))
			have := pathLines(got)
			if !slices.Equal(have, want) {
				t.Errorf("seed %d, %v: findInProject and rg differ:\n%s", seed, q.args, setDiff(have, want))
			}
			if seed == 1 && len(want) == 0 {
				t.Errorf("%v: no match in the tree: a useless query", q.args)
			}
		}
	}
}

// pathLines returns the sorted "path:line" of the "path:line:text" lines
// of out; other lines (notes) are dropped.
func pathLines(out string) []string {
	var pl []string
	for _, l := range strings.Split(out, "\n") {
		p, rest, ok := strings.Cut(l, ":")
		n, _, ok2 := strings.Cut(rest, ":")
		if ok && ok2 && n != "" && strings.Trim(n, "0123456789") == "" {
			pl = append(pl, p+":"+n)
		}
	}
	slices.Sort(pl)
	return pl
}

func setDiff(have, want []string) string {
	var b strings.Builder
	for _, h := range have {
		if _, ok := slices.BinarySearch(want, h); !ok {
			fmt.Fprintf(&b, "  only findInProject: %s\n", h)
		}
	}
	for _, w := range want {
		if _, ok := slices.BinarySearch(have, w); !ok {
			fmt.Fprintf(&b, "  only rg: %s\n", w)
		}
	}
	return b.String()
}

// rgTree generates a project: nested directories of text files made of
// source-like lines (CRLF and LF, long lines, no final newline, non-ASCII
// and the Kelvin sign, empty files), binary files (a NUL byte within the
// first block, as both tools see it), dot files and directories,
// .gitignore files at several levels (negation, directory-only and
// anchored patterns), and symbolic links.
func rgTree(t *testing.T, seed int64) string {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	root := newProject(t, tree{})
	words := []string{"func", "return", "nil", "err", "Error", "SyntaxError", "error", "panic", "import", "(", ")",
		"word", "words", "sword", "x1y", "x12y", "xy", "a.b(", "fatal", "FATAL", "Fatal", "Error:", "deadline", "Deadline",
		"exceeded", "EXCEEDED", "kelvin", "\u212aelvin", "KELVIN", "été", "ÉTÉ", "résumé", "resume", "{", "}", "\t", "  ", "go"}
	line := func() string {
		var sb strings.Builder
		switch r.Intn(12) {
		case 0:
			return "import ("
		case 1:
			return ""
		case 2:
			fmt.Fprintf(&sb, "func F%d(x int) error {", r.Intn(100))
		}
		for n := r.Intn(12); n > 0; n-- {
			if sb.Len() > 0 && r.Intn(3) > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.Intn(len(words))])
		}
		if r.Intn(40) == 0 {
			sb.WriteString(strings.Repeat(" return nil, &ParseError{} func ", 40+r.Intn(200))) // long lines
		}
		return sb.String()
	}
	text := func() string {
		var sb strings.Builder
		eol := "\n"
		if r.Intn(5) == 0 {
			eol = "\r\n"
		}
		for n := r.Intn(60); n > 0; n-- {
			sb.WriteString(line())
			sb.WriteString(eol)
		}
		s := sb.String()
		if r.Intn(6) == 0 {
			s = strings.TrimSuffix(s, eol) // no final newline
		}
		return s
	}
	dirs := []string{""}
	for i := 0; i < 12; i++ {
		parent := dirs[r.Intn(len(dirs))]
		name := []string{"pkg", "cmd", "internal", "gen", "build", "vendor", "a", "b", "a-b", "testdata", ".cache", "node_modules"}[r.Intn(12)]
		d := filepath.Join(parent, fmt.Sprintf("%s%d", name, i))
		if r.Intn(4) == 0 {
			d = filepath.Join(parent, name) // plain names, for the ignore patterns
		}
		dirs = append(dirs, d)
	}
	files := tree{}
	for i := 0; i < 150; i++ {
		d := dirs[r.Intn(len(dirs))]
		ext := []string{".go", ".txt", ".md", ".log", ".c", ""}[r.Intn(6)]
		name := fmt.Sprintf("f%d%s", i, ext)
		switch r.Intn(15) {
		case 0:
			name = "." + name // dot file
		case 1:
			files[filepath.Join(d, name)] = "text\x00" + text() // binary
			continue
		case 2:
			files[filepath.Join(d, name)] = ""
			continue
		}
		files[filepath.Join(d, name)] = text()
	}
	files[".gitignore"] = "*.log\n/gen*/\nbuild/\n!keep.log\n"
	files[filepath.Join(dirs[r.Intn(len(dirs))], ".gitignore")] = "f1*\n!f12.go\n"
	files[filepath.Join(dirs[r.Intn(len(dirs))], "keep.log")] = "func kept\n"
	files[filepath.Join(dirs[r.Intn(len(dirs))], "link.go")] = "->" + "../f1.go"
	files["dirlink"] = "->" + dirs[len(dirs)-1]
	write(t, root, files)
	return root
}
