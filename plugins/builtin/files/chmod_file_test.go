package files

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChmodFile(t *testing.T) {
	root := newProject(t, tree{"run.sh": "#!/bin/sh\n", "d/": "", ".git/hooks/pre-commit": "x", "link": "->run.sh"})
	p := filepath.Join(root, "run.sh")
	os.Chmod(p, 0o644)
	for _, tc := range []struct {
		mode string
		want fs.FileMode
	}{{"0755", 0o755}, {"600", 0o600}, {"0o640", 0o640}, {"0000", 0}, {"644", 0o644}} {
		_, res := mustOK(t, root, "chmodFile", "project", map[string]any{"path": "run.sh", "mode": tc.mode})
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != tc.want {
			t.Errorf("%s: mode %v", tc.mode, fi.Mode())
		}
		if !strings.HasPrefix(res.Summary, "chmod ") {
			t.Errorf("summary %q", res.Summary)
		}
	}
	got, res := mustOK(t, root, "chmodFile", "project", map[string]any{"path": "run.sh", "mode": "0755"}, opts{dryRun: true})
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Error("dry run changed the mode")
	}
	if !strings.Contains(got, "old mode 100644\nnew mode 100755") || details(t, res)["newMode"] != "0755" {
		t.Errorf("dry run: %s", got)
	}
	got, _ = mustOK(t, root, "chmodFile", "project", map[string]any{"path": "run.sh", "mode": "644"})
	if !strings.Contains(got, "already") {
		t.Errorf("no-op: %s", got)
	}
	// Through a link: the target's mode changes (the link is classified by
	// its target, like every path).
	mustOK(t, root, "chmodFile", "project", map[string]any{"path": "link", "mode": "0700"})
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o700 {
		t.Errorf("through link: %v", fi.Mode())
	}

	before := treeHash(t, root)
	for _, m := range []string{"4755", "2755", "1777", "7777", "04755"} {
		mustRefuse(t, root, "chmodFile", "project", map[string]any{"path": "run.sh", "mode": m}, "setuid")
	}
	for _, m := range []string{"", "abc", "0999", "rwx", "755 ", "-1", "77777"} {
		res, err := invoke(t, root, "chmodFile", "project", map[string]any{"path": "run.sh", "mode": m})
		if err != nil || !res.IsError {
			t.Errorf("mode %q accepted: %v %v", m, res, err)
		}
	}
	mustRefuse(t, root, "chmodFile", "project", map[string]any{"path": "d", "mode": "0755"}, "directory")
	mustRefuse(t, root, "chmodFile", "project-dot", map[string]any{"path": ".git/hooks/pre-commit", "mode": "0755"}, "protected")
	if treeHash(t, root) != before {
		t.Fatal("a refused chmod changed the tree")
	}
}
