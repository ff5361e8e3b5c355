package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeleteFile(t *testing.T) {
	root := newProject(t, tree{"a.txt": "a\nb\n", "d/x": "x", "link": "->a.txt", ".env": "S=1", ".gitmodules": "x"})
	got, res := mustOK(t, root, "deleteFile", "project", map[string]any{"path": "a.txt"}, opts{dryRun: true})
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err != nil {
		t.Fatal("dry run deleted")
	}
	if !strings.Contains(got, "--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n") {
		t.Errorf("dry run diff:\n%s", got)
	}
	fc := details(t, res)["files"].([]any)[0].(map[string]any)
	if fc["before_sha256"] != sha([]byte("a\nb\n")) || fc["after_sha256"] != "" {
		t.Errorf("hashes %v", fc)
	}
	before := treeHash(t, root)
	mustRefuse(t, root, "deleteFile", "project", map[string]any{"path": "d"}, "directory")
	mustRefuse(t, root, "deleteFile", "project", map[string]any{"path": "link"}, "symbolic link")
	mustRefuse(t, root, "deleteFile", "project", map[string]any{"path": "nope"}, "no such file")
	mustRefuse(t, root, "deleteFile", "project", map[string]any{"path": ".env"}, "dot path")
	mustRefuse(t, root, "deleteFile", "project-dot", map[string]any{"path": ".gitmodules"}, "protected")
	mustRefuse(t, root, "deleteFile", "project", map[string]any{"path": "a.txt", "expectSha256": map[string]string{"a.txt": sha([]byte("other"))}}, "changed since")
	if treeHash(t, root) != before {
		t.Fatal("a refused delete changed the tree")
	}
	_, res = mustOK(t, root, "deleteFile", "project", map[string]any{"path": "a.txt", "expectSha256": map[string]string{"a.txt": sha([]byte("a\nb\n"))}})
	if _, err := os.Lstat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
		t.Error("not deleted")
	}
	if res.Summary != "deleted a.txt" {
		t.Errorf("summary %q", res.Summary)
	}
	mustOK(t, root, "deleteFile", "project-dot", map[string]any{"path": ".env"})
}
