package files

import (
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	big := strings.Repeat("x", maxReadFile+1)
	root := newProject(t, tree{
		"a.txt":       "one\ntwo\n",
		"empty.txt":   "",
		"big.txt":     big,
		"nul.bin":     "abc\x00def",
		"latin1.txt":  "caf\xe9\n",
		"utf8.txt":    "héllo wörld\n",
		".env":        "SECRET=1",
		"link-to-env": "->.env",
		"link-a":      "->a.txt",
		"dir/":        "",
		".gitignore":  "*.log\n",
		"x.log":       "log",
	})
	ok := []struct{ name, path, want string }{
		{"plain", "a.txt", "one\ntwo\n"},
		{"absolute", root + "/a.txt", "one\ntwo\n"},
		{"dot-dot inside", "dir/../a.txt", "one\ntwo\n"},
		{"link inside", "link-a", "one\ntwo\n"},
		{"utf8", "utf8.txt", "héllo wörld\n"},
		{"empty", "empty.txt", "(empty file)"},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			got, res := mustOK(t, root, "readFile", "project", map[string]any{"path": tt.path})
			if got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
			if d := details(t, res); d["sha256"] == "" {
				t.Errorf("no sha256 in details %v", d)
			}
		})
	}
	_, res := mustOK(t, root, "readFile", "project", map[string]any{"path": "a.txt"})
	if res.Summary != "read 2 lines of a.txt" {
		t.Errorf("summary %q", res.Summary)
	}

	before := treeHash(t, root)
	bad := []struct {
		name, path string
		want       []string
	}{
		{"oversized", "big.txt", []string{"over readFile's limit", "readProjectFileLines"}},
		{"nul", "nul.bin", []string{"NUL", "readProjectFileBytes"}},
		{"latin1", "latin1.txt", []string{"not valid UTF-8", "readProjectFileBytes"}},
		{"dot", ".env", []string{"dot path"}},
		{"link to dot", "link-to-env", []string{".env", "dot path", "link-to-env"}},
		{"ignored", "x.log", []string{"git ignores"}},
		{"directory", "dir", []string{"is a directory"}},
		{"missing", "nope.txt", []string{"no such file"}},
		{"empty path", "", []string{"path is required"}},
		{"traversal", "../../../etc/passwd", []string{"outside the project"}},
		{"absolute outside", "/etc/passwd", []string{"outside the project"}},
		{"proc root", "/proc/self/root/etc/passwd", []string{"outside the project"}},
		{"nul byte", "a.txt\x00.png", []string{"NUL"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			res, err := invoke(t, root, "readFile", "project", map[string]any{"path": tt.path}, opts{tool: "readProjectFile"})
			if err != nil || !res.IsError {
				t.Fatalf("want an error result, got %v %v", res, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(text(res), w) {
					t.Errorf("%q lacks %q", text(res), w)
				}
			}
		})
	}
	if treeHash(t, root) != before {
		t.Error("the tree changed")
	}
	// project-dot scope reads dot files, project-ignore reads ignored ones.
	if got, _ := mustOK(t, root, "readFile", "project-dot", map[string]any{"path": ".env"}); got != "SECRET=1" {
		t.Errorf("project-dot: %q", got)
	}
	if got, _ := mustOK(t, root, "readFile", "project-ignore", map[string]any{"path": "x.log"}); got != "log" {
		t.Errorf("project-ignore: %q", got)
	}
	mustRefuse(t, root, "readFile", "project-ignore", map[string]any{"path": ".env"}, "dot path")
}

func TestReadFileScopeMisconfigured(t *testing.T) {
	root := newProject(t, tree{"a": "a"})
	// A scope the type does not allow is a broken tool file: a Go error.
	if _, err := invoke(t, root, "createFile", "external", map[string]any{"path": "x", "content": ""}); err == nil {
		t.Error("createFile with external scope ran")
	}
	if _, err := invoke(t, root, "readFile", "", map[string]any{"path": "a"}); err == nil {
		t.Error("readFile without scope ran")
	}
	if _, err := invoke(t, root, "findInProject", "project", map[string]any{"pattern": "a"}); err == nil {
		t.Error("findInProject with a scope ran")
	}
}

func TestReadExternalFile(t *testing.T) {
	root := newProject(t, tree{"in.txt": "inside"})
	outside := newProject(t, tree{"o.txt": "outside\n", "toin": "->" + root + "/in.txt", ".hidden": "h"})
	got, res := mustOK(t, root, "readFile", "external", map[string]any{"path": outside + "/o.txt"})
	if got != "outside\n" || details(t, res)["path"] != outside+"/o.txt" {
		t.Errorf("got %q details %v", got, details(t, res))
	}
	// Outside, a dot file is just external.
	mustOK(t, root, "readFile", "external", map[string]any{"path": outside + "/.hidden"})
	mustRefuse(t, root, "readFile", "external", map[string]any{"path": "in.txt"}, "project")
	mustRefuse(t, root, "readFile", "external", map[string]any{"path": outside + "/toin"}, "project")
	got, _ = mustOK(t, root, "readFileLines", "external", map[string]any{"path": outside + "/o.txt", "start": 1, "end": 1})
	if !strings.Contains(got, "     1\toutside\n") {
		t.Errorf("lines %q", got)
	}
}
