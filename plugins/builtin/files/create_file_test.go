package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateFile(t *testing.T) {
	root := newProject(t, tree{"exists.txt": "old", ".gitignore": "build/\n", "f": "file"})
	got, res := mustOK(t, root, "createFile", "project", map[string]any{"path": "a/b/new.go", "content": "package b\n"})
	if readFileT(t, filepath.Join(root, "a/b/new.go")) != "package b\n" {
		t.Error("content")
	}
	if !strings.Contains(got, "Created a/b/new.go") || res.Summary != "created a/b/new.go (1 line)" {
		t.Errorf("text %q summary %q", got, res.Summary)
	}
	d := details(t, res)
	files := d["files"].([]any)
	fc := files[0].(map[string]any)
	if fc["path"] != "a/b/new.go" || fc["before_sha256"] != "" || fc["after_sha256"] != sha([]byte("package b\n")) {
		t.Errorf("details %v", d)
	}
	if !strings.Contains(d["diff"].(string), "--- /dev/null\n+++ b/a/b/new.go\n@@ -0,0 +1 @@\n+package b\n") {
		t.Errorf("diff %q", d["diff"])
	}
	// No temporary files left behind.
	ents, _ := os.ReadDir(filepath.Join(root, "a/b"))
	if len(ents) != 1 {
		t.Errorf("entries %v", ents)
	}
	// Mode follows the umask like any new file.
	fi, _ := os.Stat(filepath.Join(root, "a/b/new.go"))
	if fi.Mode().Perm()&0o600 != 0o600 || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("mode %v", fi.Mode())
	}
	// Empty content is a valid new file.
	mustOK(t, root, "createFile", "project", map[string]any{"path": "empty", "content": ""})

	before := treeHash(t, root)
	mustRefuse(t, root, "createFile", "project", map[string]any{"path": "exists.txt", "content": "x"}, "already exists", "editFile")
	mustRefuse(t, root, "createFile", "project", map[string]any{"path": ".env", "content": "x"}, "dot path")
	mustRefuse(t, root, "createFile", "project", map[string]any{"path": "build/x", "content": "x"}, "git ignores")
	mustRefuse(t, root, "createFile", "project", map[string]any{"path": "f/x", "content": "x"}, "not a directory")
	mustRefuse(t, root, "createFile", "project-dot", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}, "protected")
	mustRefuse(t, root, "createFile", "project", map[string]any{"path": "../escape", "content": "x"}, "outside the project")
	if treeHash(t, root) != before {
		t.Error("the tree changed")
	}

	// Dry run: a diff, nothing written, no parents made.
	got, res = mustOK(t, root, "createFile", "project", map[string]any{"path": "p/q.txt", "content": "a\nb\n"}, opts{dryRun: true})
	if !strings.Contains(got, "Dry run") || !strings.Contains(got, "+a\n+b\n") || details(t, res)["dryRun"] != true {
		t.Errorf("dry run: %s", got)
	}
	if treeHash(t, root) != before {
		t.Error("dry run changed the tree")
	}
	// project-dot scope creates dot files; project-ignore ignored ones.
	mustOK(t, root, "createFile", "project-dot", map[string]any{"path": ".config/x", "content": "x"})
	mustOK(t, root, "createFile", "project-ignore", map[string]any{"path": "build/out", "content": "x"})
}

func TestCreateFileExpect(t *testing.T) {
	root := newProject(t, tree{})
	// The approved diff was computed with no file there: fine.
	mustOK(t, root, "createFile", "project", map[string]any{"path": "n.txt", "content": "x", "expectSha256": map[string]string{"n.txt": ""}})
	// An expectation that does not hold refuses.
	mustRefuse(t, root, "createFile", "project", map[string]any{"path": "m.txt", "content": "x", "expectSha256": map[string]string{"m.txt": "abc"}}, "changed since the diff was approved")
	if _, err := os.Stat(filepath.Join(root, "m.txt")); err == nil {
		t.Error("m.txt written")
	}
}
