package files

import (
	"fmt"
	"strings"
	"testing"
)

func TestFindInProject(t *testing.T) {
	root := newProject(t, tree{
		"main.go":      "package main\n\nfunc main() {\n\tFoo()\n}\n",
		"a/foo.go":     "package a\n\nfunc Foo() {}\nfunc foo() {}\n",
		"a-b/x.go":     "// Foo here\n",
		"b/readme.md":  "Foo bar\nfoo BAR\n",
		".hidden/h.go": "Foo\n",
		".env":         "Foo=1\n",
		".gitignore":   "gen/\n",
		"gen/g.go":     "Foo\n",
		".git/config":  "Foo\n",
		"bin.dat":      "Foo\x00\n",
		"link.go":      "->main.go",
		"crlf.txt":     "Foo\r\nbar\r\n",
		"regex.txt":    "a.c\nabc\n",
	})
	tests := []struct {
		name  string
		args  map[string]any
		o     opts
		want  []string
		never []string
	}{
		{"regex", map[string]any{"pattern": "Foo\\(\\)"}, opts{}, []string{"a/foo.go:3:func Foo() {}", "main.go:4:\tFoo()"}, []string{"foo()"}},
		{"literal", map[string]any{"pattern": "a.c", "literal": true}, opts{}, []string{"regex.txt:1:a.c"}, []string{"regex.txt:2"}},
		{"regex dot", map[string]any{"pattern": "a.c"}, opts{}, []string{"regex.txt:1:a.c", "regex.txt:2:abc"}, nil},
		{"case insensitive", map[string]any{"pattern": "foo bar", "caseInsensitive": true}, opts{}, []string{"b/readme.md:1:Foo bar", "b/readme.md:2:foo BAR"}, nil},
		{"case insensitive literal", map[string]any{"pattern": "FOO(", "literal": true, "caseInsensitive": true}, opts{}, []string{"a/foo.go:3:", "a/foo.go:4:", "main.go:4:"}, nil},
		{"glob", map[string]any{"pattern": "Foo", "glob": "a/**"}, opts{}, []string{"a/foo.go:3:"}, []string{"main.go", "readme"}},
		{"anchors", map[string]any{"pattern": "^func"}, opts{}, []string{"a/foo.go:3:", "a/foo.go:4:", "main.go:3:"}, nil},
		{"crlf line text", map[string]any{"pattern": "^Foo$", "glob": "*.txt"}, opts{}, nil, []string{"\r"}},
		{"default skips dot, ignored, .git, binary, links", map[string]any{"pattern": "Foo"}, opts{}, []string{"a-b/x.go", "a/foo.go", "b/readme.md", "crlf.txt", "main.go", "skipped 1 binary file"}, []string{".hidden", ".env", "gen/", ".git", "bin.dat", "link.go"}},
		{"include hidden", map[string]any{"pattern": "Foo"}, opts{includeHidden: true}, []string{".env:1:", ".hidden/h.go:1:"}, []string{".git/", "gen/"}},
		{"include ignored", map[string]any{"pattern": "Foo"}, opts{includeIgnored: true}, []string{"gen/g.go:1:"}, []string{".hidden", ".git/"}},
		{"files by glob", map[string]any{"glob": "**/*.go"}, opts{}, []string{"a-b/x.go\n", "a/foo.go\n", "main.go\n"}, []string{".hidden", "gen/", "link.go", ":"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := mustOK(t, root, "findInProject", "", tt.args, tt.o)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(got, n) {
					t.Errorf("unexpected %q in\n%s", n, got)
				}
			}
		})
	}
	// Order: walk order (each directory's entries by name, depth first, so
	// "a/…" before "a-b/…"), then line.
	got, res := mustOK(t, root, "findInProject", "", map[string]any{"pattern": "Foo"})
	want := "a/foo.go:3:func Foo() {}\na-b/x.go:1:// Foo here\nb/readme.md:1:Foo bar\ncrlf.txt:1:Foo\nmain.go:4:\tFoo()\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("order:\n%s\nwant\n%s", got, want)
	}
	if res.Summary != "5 matches in 5 files" {
		t.Errorf("summary %q", res.Summary)
	}
	mustRefuse(t, root, "findInProject", "", map[string]any{}, "pattern")
	mustRefuse(t, root, "findInProject", "", map[string]any{"pattern": "("}, "invalid pattern")
	mustRefuse(t, root, "findInProject", "", map[string]any{"glob": "[", "pattern": "x"}, "invalid glob")
	got, _ = mustOK(t, root, "findInProject", "", map[string]any{"glob": "*.md"})
	if !strings.Contains(got, "**/*.md") {
		t.Errorf("no glob hint: %s", got)
	}
}

func TestFindInProjectCap(t *testing.T) {
	files := tree{}
	for i := 0; i < 30; i++ {
		var sb strings.Builder
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&sb, "hit %d %d\n", i, j)
		}
		files[fmt.Sprintf("d%02d/f.txt", i)] = sb.String()
	}
	root := newProject(t, files)
	got, res := mustOK(t, root, "findInProject", "", map[string]any{"pattern": "hit"})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if n := len(lines); n != 201 || !strings.Contains(got, "400 more results") {
		t.Fatalf("%d lines; tail %q", n, lines[len(lines)-1])
	}
	if lines[0] != "d00/f.txt:1:hit 0 0" || lines[199] != "d09/f.txt:20:hit 9 19" {
		t.Errorf("first %q, 200th %q", lines[0], lines[199])
	}
	if d := details(t, res); d["matches"] != 600.0 || d["shown"] != 200.0 {
		t.Errorf("details %v", d)
	}
	// Deterministic across runs.
	for i := 0; i < 5; i++ {
		again, _ := mustOK(t, root, "findInProject", "", map[string]any{"pattern": "hit", "maxResults": 37})
		first, _ := mustOK(t, root, "findInProject", "", map[string]any{"pattern": "hit", "maxResults": 37})
		if again != first || !strings.Contains(first, "563 more results") {
			t.Fatalf("not stable or wrong count:\n%s", first)
		}
	}
	got, _ = mustOK(t, root, "findInProject", "", map[string]any{"glob": "**/f.txt", "maxResults": 3})
	if !strings.HasPrefix(got, "d00/f.txt\nd01/f.txt\nd02/f.txt\n(27 more files") {
		t.Errorf("glob cap:\n%s", got)
	}
}

func TestFindInProjectOutputBound(t *testing.T) {
	files := tree{}
	for i := 0; i < 10; i++ {
		files[fmt.Sprintf("f%d.txt", i)] = strings.Repeat("hit here\n", 10)
	}
	root := newProject(t, files)
	defer func(n int) { maxOutputBytes = n }(maxOutputBytes)
	maxOutputBytes = 1000 // "fN.txt:L:hit here\n" is 18 or 19 bytes
	got, res := mustOK(t, root, "findInProject", "", map[string]any{"pattern": "hit", "maxResults": 1000})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	d := details(t, res)
	shown := int(d["shown"].(float64))
	if len(got) > 1100 || shown != len(lines)-1 || d["matches"] != 100.0 || d["truncated"] != true {
		t.Fatalf("%d bytes, %d lines, details %v", len(got), len(lines), d)
	}
	if want := fmt.Sprintf("(%d more results not shown", 100-shown); !strings.Contains(got, want) {
		t.Errorf("no %q in %s", want, got)
	}
	for i, l := range lines[:shown] {
		if want := fmt.Sprintf("f%d.txt:%d:hit here", i/10, i%10+1); l != want {
			t.Fatalf("line %d %q, want %q", i, l, want)
		}
	}
	got, _ = mustOK(t, root, "findInProject", "", map[string]any{"glob": "*.txt", "maxResults": 1000})
	if !strings.HasPrefix(got, "f0.txt\nf1.txt\n") {
		t.Errorf("files: %s", got)
	}
	maxOutputBytes = 15
	got, _ = mustOK(t, root, "findInProject", "", map[string]any{"glob": "*.txt", "maxResults": 1000})
	if !strings.HasPrefix(got, "f0.txt\nf1.txt\n(8 more files not shown") {
		t.Errorf("files bounded: %s", got)
	}
}
