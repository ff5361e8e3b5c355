package files

import (
	"fmt"
	"strings"
	"testing"
)

func TestReadFileLines(t *testing.T) {
	var five strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&five, "line %d\n", i)
	}
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "l%d\n", i)
	}
	long := strings.Repeat("é", 3000)
	root := newProject(t, tree{
		"five.txt":  five.String(),
		"nonl.txt":  "a\nb",
		"crlf.txt":  "a\r\nb\r\n",
		"many.txt":  many.String(),
		"long.txt":  "short\n" + long + "\nafter\n",
		"huge.txt":  strings.Repeat("z", 100000) + "\n",
		"empty.txt": "",
		"nul.bin":   "a\x00b\n",
	})
	tests := []struct {
		name       string
		args       map[string]any
		want       []string
		never      []string
		start, end float64
	}{
		{"all", map[string]any{"path": "five.txt", "start": 1, "end": 5}, []string{"     1\tline 1\n", "     5\tline 5\n", "end of file"}, nil, 1, 5},
		{"middle", map[string]any{"path": "five.txt", "start": 2, "end": 3}, []string{"     2\tline 2\n     3\tline 3\n", "of 5", "start=4"}, []string{"line 1", "line 4"}, 2, 3},
		{"one line", map[string]any{"path": "five.txt", "start": 4, "end": 4}, []string{"     4\tline 4\n"}, []string{"line 5"}, 4, 4},
		{"end past eof", map[string]any{"path": "five.txt", "start": 4, "end": 100}, []string{"line 5", "end of file"}, nil, 4, 5},
		{"defaults", map[string]any{"path": "five.txt"}, []string{"line 1", "line 5"}, nil, 1, 5},
		{"no final newline", map[string]any{"path": "nonl.txt", "start": 1, "end": 2}, []string{"     2\tb\n", "of 2"}, nil, 1, 2},
		{"crlf", map[string]any{"path": "crlf.txt", "start": 1, "end": 2}, []string{"     1\ta\n     2\tb\n"}, []string{"\r"}, 1, 2},
		{"default cap 2000", map[string]any{"path": "many.txt", "start": 1}, []string{"  2000\tl2000\n", "of 2500", "start=2001"}, []string{"l2001\n"}, 1, 2000},
		{"range capped", map[string]any{"path": "many.txt", "start": 400, "end": 2500}, []string{"  2399\tl2399\n", "start=2400"}, []string{"l2400\n"}, 400, 2399},
		{"long line cut", map[string]any{"path": "long.txt", "start": 2, "end": 2}, []string{"[line cut after 2000 characters]", strings.Repeat("é", 2000) + " …"}, []string{strings.Repeat("é", 2001)}, 2, 2},
		{"huge line cut", map[string]any{"path": "huge.txt"}, []string{"[line cut after 2000 characters]", "of 1 "}, nil, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, res := mustOK(t, root, "readFileLines", "project", tt.args)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%.500s", w, got)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(got, n) {
					t.Errorf("unexpected %q in\n%.500s", n, got)
				}
			}
			d := details(t, res)
			if d["start"] != tt.start || d["end"] != tt.end {
				t.Errorf("details %v", d)
			}
		})
	}
	got, res := mustOK(t, root, "readFileLines", "project", map[string]any{"path": "empty.txt", "start": 1, "end": 10})
	if !strings.Contains(got, "empty") || res.Summary != "read 0 lines of empty.txt" {
		t.Errorf("empty: %q %q", got, res.Summary)
	}
	_, res = mustOK(t, root, "readFileLines", "project", map[string]any{"path": "many.txt", "start": 10, "end": 129})
	if res.Summary != "read 120 lines of many.txt" || details(t, res)["totalLines"] != 2500.0 {
		t.Errorf("summary %q details %v", res.Summary, details(t, res))
	}
	mustRefuse(t, root, "readFileLines", "project", map[string]any{"path": "five.txt", "start": 7, "end": 9}, "past the end", "5 lines")
	mustRefuse(t, root, "readFileLines", "project", map[string]any{"path": "five.txt", "start": 3, "end": 2}, "less than start")
	mustRefuse(t, root, "readFileLines", "project", map[string]any{"path": "five.txt", "start": -1, "end": 2}, "1 or more")
	mustRefuse(t, root, "readFileLines", "project", map[string]any{"path": "nul.bin", "start": 1, "end": 2}, "binary", "readFileBytes")
}
