package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceInProject(t *testing.T) {
	files := tree{
		"a.go":         "package a\n\nvar oldName = 1\nvar x = oldName\n",
		"b/b.go":       "package b\n\n// oldName\n",
		"c.txt":        "oldName\n",
		".hidden/h.go": "oldName\n",
		".gitignore":   "gen/\n",
		"gen/g.go":     "oldName\n",
		"bin":          "oldName\x00",
		"link.go":      "->a.go",
		"none.go":      "nothing\n",
	}
	root := newProject(t, files)
	os.Chmod(filepath.Join(root, "a.go"), 0o600)
	before := treeHash(t, root)
	got, res := mustOK(t, root, "replaceInProject", "project", map[string]any{"pattern": "oldName", "replacement": "newName", "glob": "**/*.go"}, opts{dryRun: true})
	if treeHash(t, root) != before {
		t.Fatal("dry run wrote")
	}
	if !strings.Contains(got, "a.go: 2\n") || !strings.Contains(got, "b/b.go: 1\n") || strings.Contains(got, "c.txt") {
		t.Errorf("dry run counts:\n%s", got)
	}
	d := details(t, res)
	diff := d["diff"].(string)
	if !strings.Contains(diff, "--- a/a.go\n+++ b/a.go\n") || !strings.Contains(diff, "-var oldName = 1\n-var x = oldName\n+var newName = 1\n+var x = newName\n") || !strings.Contains(diff, "--- a/b/b.go") {
		t.Errorf("diff:\n%s", diff)
	}
	if strings.Contains(diff, "gen/") || strings.Contains(diff, ".hidden") || strings.Contains(diff, "link.go") {
		t.Errorf("diff touches excluded files:\n%s", diff)
	}
	approved := map[string]string{}
	for _, f := range d["files"].([]any) {
		fc := f.(map[string]any)
		approved[fc["path"].(string)] = fc["before_sha256"].(string)
	}

	// A file changed since approval: nothing is written.
	os.WriteFile(filepath.Join(root, "b/b.go"), []byte("package b\n\n// oldName changed\n"), 0o644)
	mid := treeHash(t, root)
	mustRefuse(t, root, "replaceInProject", "project", map[string]any{"pattern": "oldName", "replacement": "newName", "glob": "**/*.go", "expectSha256": approved}, "b/b.go", "changed since")
	if treeHash(t, root) != mid {
		t.Fatal("stale replace wrote")
	}
	os.WriteFile(filepath.Join(root, "b/b.go"), []byte("package b\n\n// oldName\n"), 0o644)

	got, res = mustOK(t, root, "replaceInProject", "project", map[string]any{"pattern": "oldName", "replacement": "newName", "glob": "**/*.go", "expectSha256": approved})
	if res.Summary != "replaced 3 matches in 2 files" {
		t.Errorf("summary %q", res.Summary)
	}
	if readFileT(t, filepath.Join(root, "a.go")) != "package a\n\nvar newName = 1\nvar x = newName\n" {
		t.Error("a.go")
	}
	if fi, _ := os.Stat(filepath.Join(root, "a.go")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	for _, p := range []string{".hidden/h.go", "gen/g.go", "c.txt"} {
		if readFileT(t, filepath.Join(root, p)) != "oldName\n" {
			t.Errorf("%s changed", p)
		}
	}
	if readFileT(t, filepath.Join(root, "bin")) != "oldName\x00" {
		t.Error("binary changed")
	}
	if !strings.Contains(got, "+var x = newName") {
		t.Errorf("no diff in text:\n%s", got)
	}
}

func TestReplaceInProjectRegexp(t *testing.T) {
	root := newProject(t, tree{"a.txt": "foo(1, 2)\nfoo(3, 4)\n", "b.txt": "price $5\n"})
	mustOK(t, root, "replaceInProject", "project", map[string]any{"pattern": `foo\((\d), (?P<second>\d)\)`, "replacement": "bar(${second}, $1)"})
	if got := readFileT(t, filepath.Join(root, "a.txt")); got != "bar(2, 1)\nbar(4, 3)\n" {
		t.Errorf("a.txt %q", got)
	}
	mustOK(t, root, "replaceInProject", "project", map[string]any{"pattern": "$5", "replacement": "$1 $$", "literal": true})
	if got := readFileT(t, filepath.Join(root, "b.txt")); got != "price $1 $$\n" {
		t.Errorf("literal %q", got)
	}
	mustOK(t, root, "replaceInProject", "project", map[string]any{"pattern": `^bar`, "replacement": "baz"})
	if got := readFileT(t, filepath.Join(root, "a.txt")); got != "baz(2, 1)\nbaz(4, 3)\n" {
		t.Errorf("anchors %q", got)
	}
	before := treeHash(t, root)
	mustRefuse(t, root, "replaceInProject", "project", map[string]any{"pattern": "nomatch", "replacement": "x"}, "No matches")
	mustRefuse(t, root, "replaceInProject", "project", map[string]any{"pattern": "(", "replacement": "x"}, "invalid pattern")
	mustRefuse(t, root, "replaceInProject", "project", map[string]any{"pattern": "", "replacement": "x"}, "empty")
	if treeHash(t, root) != before {
		t.Fatal("refused replace changed the tree")
	}
}

func TestReplaceInProjectFileCap(t *testing.T) {
	files := tree{}
	for i := 0; i <= maxReplaceFiles; i++ {
		files[fmt.Sprintf("d%d/f%04d.txt", i%10, i)] = "x\n"
	}
	root := newProject(t, files)
	before := treeHash(t, root)
	mustRefuse(t, root, "replaceInProject", "project", map[string]any{"pattern": "x", "replacement": "y"}, "more than 1000 files", "nothing was changed")
	if treeHash(t, root) != before {
		t.Fatal("over the cap, files changed")
	}
}
