package files

import (
	"strings"
	"testing"
)

func TestListDirectory(t *testing.T) {
	root := newProject(t, tree{
		"b.txt":        "hello",
		"a/x.go":       "package a\n",
		".env":         "SECRET=1",
		".gitignore":   "build/\n*.log\n",
		"build/out":    "bin",
		"debug.log":    "log",
		"link":         "->b.txt",
		"tolog":        "->debug.log",
		"etc":          "->/etc",
		"empty/":       "",
		"a/deep/z.txt": "z",
	})
	tests := []struct {
		name, path  string
		want, never []string
	}{
		{"root", ".", []string{"dir ", "a/", "file", "5  b.txt", "symlink", "link", "empty/", "hidden"}, []string{".env", "build", "debug.log", "tolog", "etc"}},
		{"empty path is the root", "", []string{"b.txt"}, nil},
		{"subdir", "a", []string{"deep/", "x.go"}, []string{"hidden"}},
		{"absolute inside", root + "/a", []string{"x.go"}, nil},
		{"empty dir", "empty", []string{"(no entries shown)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, res := mustOK(t, root, "listDirectory", "project", map[string]any{"path": tt.path})
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(got, n) {
					t.Errorf("%q shown in\n%s", n, got)
				}
			}
			if res.Summary == "" {
				t.Error("no summary")
			}
		})
	}
	// The root hides .env, .gitignore, build, debug.log, tolog, etc: 6.
	got, res := mustOK(t, root, "listDirectory", "project", map[string]any{"path": "."})
	if !strings.Contains(got, "6 entries hidden") || details(t, res)["hidden"].(float64) != 6 {
		t.Errorf("hidden count: %s", got)
	}
	// Sorted by name.
	if i, j := strings.Index(got, "a/"), strings.Index(got, "b.txt"); i < 0 || j < i {
		t.Errorf("not sorted:\n%s", got)
	}

	refusals := []struct{ name, path, want string }{
		{"dot dir", ".git", "dot path"},
		{"dot file", ".env", "dot path"},
		{"ignored", "build", "git ignores"},
		{"outside", "..", "outside the project"},
		{"link outside", "etc", "outside the project"},
		{"a file", "b.txt", "not a directory"},
		{"missing", "nope", "no such file"},
	}
	before := treeHash(t, root)
	for _, tt := range refusals {
		t.Run("refuse "+tt.name, func(t *testing.T) {
			mustRefuse(t, root, "listDirectory", "project", map[string]any{"path": tt.path}, tt.want)
		})
	}
	if treeHash(t, root) != before {
		t.Error("the tree changed")
	}
}

func TestListExternalDirectory(t *testing.T) {
	root := newProject(t, tree{"a.txt": "a"})
	outside := newProject(t, tree{"f.txt": "hello", "sub/": "", "in": "->" + root + "/a.txt"})
	got, _ := mustOK(t, root, "listDirectory", "external", map[string]any{"path": outside})
	if !strings.Contains(got, "f.txt") || !strings.Contains(got, "sub/") {
		t.Errorf("listing:\n%s", got)
	}
	// A link into the project is not external: hidden.
	if strings.Contains(got, " in\n") || !strings.Contains(got, "1 entry hidden") {
		t.Errorf("link into the project shown:\n%s", got)
	}
	// The project itself is not reachable with external scope.
	mustRefuse(t, root, "listDirectory", "external", map[string]any{"path": root}, "project")
	mustRefuse(t, root, "listDirectory", "external", map[string]any{"path": "."}, "project")
}
