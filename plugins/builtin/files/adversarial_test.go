package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// adversarialProject is a project with traps around it: a secret outside,
// links to /etc, to the parent and to the outside, a .git with hooks, a dot
// file, an ignored file, a FIFO, a hard link to an outside file, a dangling
// link.
func adversarialProject(t *testing.T) (root, outside string) {
	t.Helper()
	outside = newProject(t, tree{"secret.txt": "TOPSECRET\n", "dir/s.txt": "TOPSECRET\n"})
	root = newProject(t, tree{
		"ok.txt":                "fine\n",
		"src/main.go":           "package main\n",
		".env":                  "TOPSECRET=1\n",
		".gitignore":            "*.log\nbuild/\n",
		"debug.log":             "TOPSECRET log\n",
		".git/config":           "[core]\n",
		".git/hooks/pre-commit": "#!/bin/sh\n",
		"etc":                   "->/etc",
		"up":                    "->..",
		"out":                   "->" + outside,
		"outfile":               "->" + outside + "/secret.txt",
		"notes.txt":             "->.env",
		"dangle":                "->missing.txt",
		"hooks":                 "->.git/hooks",
	})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func TestAdversarial(t *testing.T) {
	root, outside := adversarialProject(t)
	type tc struct {
		name  string
		typ   string
		scope string
		args  map[string]any
		want  string
	}
	long := strings.Repeat("a/", 3000) + "x"
	var cases []tc
	// Every reader and writer on every trap path.
	traps := []struct{ path, want string }{
		{"../" + filepath.Base(outside) + "/secret.txt", "outside the project"},
		{"../../../../../../etc/passwd", "outside the project"},
		{"/etc/passwd", "outside the project"},
		{outside + "/secret.txt", "outside the project"},
		{"/proc/self/root" + outside + "/secret.txt", "outside the project"},
		{"/proc/self/cwd/../../etc/passwd", "outside the project"},
		{"etc/passwd", "outside the project"},
		{"up/" + filepath.Base(outside) + "/secret.txt", "outside the project"},
		{"out/secret.txt", "outside the project"},
		{"outfile", "outside the project"},
		{".env", "dot path"},
		{"notes.txt", "dot path"},
		{"debug.log", "git ignores"},
		{".git/config", "dot path"},
		{"hooks/pre-commit", "dot path"},
		{"ok.txt\x00/../.env", "NUL"},
		{long, ""},
	}
	for _, p := range traps {
		for _, typ := range []string{"readFile", "readFileLines", "readFileBytes", "editFile", "deleteFile", "chmodFile"} {
			cases = append(cases, tc{typ + " " + p.path, typ, "project", map[string]any{"path": p.path, "oldString": "x", "newString": "y", "mode": "0777", "start": 1, "end": 2, "offset": 0, "length": 10}, p.want})
		}
		np := p.path
		if strings.Contains(np, "/") {
			np += "-new" // a new file through the trap
		}
		cases = append(cases, tc{"createFile " + p.path, "createFile", "project", map[string]any{"path": np, "content": "pwned"}, ""})
	}
	cases = append(cases,
		// Protected paths, even with a scope that grants dot paths.
		tc{"hook create", "createFile", "project-dot", map[string]any{"path": ".git/hooks/post-checkout", "content": "#!/bin/sh\nrm -rf ~\n"}, "protected"},
		tc{"hook edit", "editFile", "project-dot", map[string]any{"path": ".git/hooks/pre-commit", "oldString": "#!/bin/sh", "newString": "#!/bin/sh\ncurl evil"}, "protected"},
		tc{"hook via link", "editFile", "project-dot", map[string]any{"path": "hooks/pre-commit", "oldString": "#!/bin/sh", "newString": "x"}, "protected"},
		tc{"hook chmod", "chmodFile", "project-dot", map[string]any{"path": ".git/hooks/pre-commit", "mode": "0755"}, "protected"},
		tc{"hook delete", "deleteFile", "project-dot", map[string]any{"path": ".git/hooks/pre-commit"}, "protected"},
		tc{"git config", "editFile", "project-dot", map[string]any{"path": ".git/config", "oldString": "[core]", "newString": "[core]\nfsmonitor=evil"}, "protected"},
		tc{"GIT upper case", "createFile", "project-dot", map[string]any{"path": ".GIT/hooks/x", "content": "x"}, "protected"},
		tc{"opair dir", "createFile", "project-dot", map[string]any{"path": ".opair/config.json", "content": "{}"}, "protected"},
		tc{"npmrc", "createFile", "project-dot", map[string]any{"path": ".npmrc", "content": "x"}, "protected"},
		tc{"gitmodules", "createFile", "project-dot", map[string]any{"path": ".gitmodules", "content": "x"}, "protected"},
		tc{"bashrc", "createFile", "project-dot", map[string]any{"path": ".bashrc", "content": "x"}, "protected"},
		// Setuid, setgid, sticky.
		tc{"setuid", "chmodFile", "project", map[string]any{"path": "ok.txt", "mode": "4755"}, "setuid"},
		tc{"setgid", "chmodFile", "project", map[string]any{"path": "ok.txt", "mode": "2755"}, "setuid"},
		// Dot and ignored paths under project scope.
		tc{"dot create", "createFile", "project", map[string]any{"path": ".envrc", "content": "x"}, "dot path"},
		tc{"dot dir create", "createFile", "project", map[string]any{"path": "src/.cache/x", "content": "x"}, "dot path"},
		tc{"ignored create", "createFile", "project", map[string]any{"path": "build/x.go", "content": "x"}, "git ignores"},
		tc{"ignored edit", "editFile", "project", map[string]any{"path": "debug.log", "oldString": "log", "newString": "x"}, "git ignores"},
		// Specials: FIFO, hard link to outside, dangling link.
		tc{"fifo read", "readFile", "project", map[string]any{"path": "fifo"}, "FIFO"},
		tc{"fifo lines", "readFileLines", "project", map[string]any{"path": "fifo", "start": 1, "end": 1}, "FIFO"},
		tc{"fifo edit", "editFile", "project", map[string]any{"path": "fifo", "oldString": "a", "newString": "b"}, "FIFO"},
		tc{"hard link read", "readFile", "project", map[string]any{"path": "hard.txt"}, "hard links"},
		tc{"hard link bytes", "readFileBytes", "project", map[string]any{"path": "hard.txt", "offset": 0, "length": 5}, "hard links"},
		tc{"hard link edit", "editFile", "project", map[string]any{"path": "hard.txt", "oldString": "TOP", "newString": "x"}, "hard links"},
		tc{"hard link chmod", "chmodFile", "project", map[string]any{"path": "hard.txt", "mode": "0777"}, "hard links"},
		tc{"hard link delete", "deleteFile", "project", map[string]any{"path": "hard.txt"}, "hard links"},
		tc{"dangling create", "createFile", "project", map[string]any{"path": "dangle", "content": "x"}, "does not exist"},
		tc{"dangling read", "readFile", "project", map[string]any{"path": "dangle"}, "does not exist"},
		// External scope cannot reach inside.
		tc{"external reads project", "readFile", "external", map[string]any{"path": root + "/ok.txt"}, "project"},
		tc{"external through link", "readFile", "external", map[string]any{"path": outside + "/../" + filepath.Base(root) + "/.env"}, "project"},
		// The project root itself.
		tc{"delete root", "deleteFile", "project", map[string]any{"path": "."}, ""},
		tc{"create root", "createFile", "project", map[string]any{"path": ".", "content": "x"}, ""},
	)
	beforeIn, beforeOut := treeHash(t, root), treeHash(t, outside)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done := make(chan struct{})
			var res string
			var isErr bool
			var err error
			go func() {
				defer close(done)
				r, e := invoke(t, root, c.typ, c.scope, c.args)
				err = e
				if r != nil {
					res, isErr = text(r), r.IsError
				}
			}()
			select {
			case <-done:
			case <-ctx.Done():
				t.Fatal("the call hung")
			}
			if err != nil {
				t.Fatalf("Go error %v, want a refusal", err)
			}
			if !isErr {
				t.Fatalf("not refused: %s", res)
			}
			if strings.Contains(res, "TOPSECRET") {
				t.Fatalf("secret leaked: %s", res)
			}
			if !strings.Contains(res, c.want) {
				t.Errorf("refusal %q lacks %q", res, c.want)
			}
		})
	}
	if treeHash(t, root) != beforeIn {
		t.Error("the project changed")
	}
	if treeHash(t, outside) != beforeOut {
		t.Error("the outside changed")
	}
	// Searches and replacements do not follow links out or into dot paths.
	got, _ := mustOK(t, root, "findInProject", "", map[string]any{"pattern": "TOPSECRET"})
	if strings.Contains(got, "TOPSECRET") {
		t.Errorf("find leaked: %s", got)
	}
	got, _ = mustOK(t, root, "findInProject", "", map[string]any{"pattern": "TOPSECRET"}, opts{includeHidden: true, includeIgnored: true})
	if strings.Contains(got, "secret.txt") || strings.Contains(got, ".git/") || strings.Contains(got, "hard.txt") {
		t.Errorf("find with includes leaked: %s", got)
	}
	if !strings.Contains(got, ".env:1:") || !strings.Contains(got, "debug.log:1:") {
		t.Errorf("includes not honoured: %s", got)
	}
	mustRefuse(t, root, "replaceInProject", "project", map[string]any{"pattern": "TOPSECRET", "replacement": "x"}, "No matches")
	if treeHash(t, root) != beforeIn || treeHash(t, outside) != beforeOut {
		t.Error("the tree changed")
	}
}

// TestSwapDuringRead flips a link between a harmless file and a secret (a
// dot file) while reading through it: every read returns the harmless file
// or is refused; the secret never comes back.
func TestSwapDuringRead(t *testing.T) {
	root, _ := adversarialProject(t)
	link := filepath.Join(root, "flip")
	os.Symlink("ok.txt", link)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		targets := []string{"ok.txt", ".env", "outfile", "fifo", "hard.txt"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(root, fmt.Sprintf("flip.tmp%d", i%2))
			os.Remove(tmp)
			os.Symlink(targets[i%len(targets)], tmp)
			os.Rename(tmp, link)
		}
	}()
	// A regular file swapped for a link to the secret, and back.
	file := filepath.Join(root, "swapfile")
	os.WriteFile(file, []byte("fine\n"), 0o644)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(root, fmt.Sprintf("swap.tmp%d", i%2))
			os.Remove(tmp)
			if i%2 == 0 {
				os.Symlink(".env", tmp)
			} else {
				os.WriteFile(tmp, []byte("fine\n"), 0o644)
			}
			os.Rename(tmp, file)
		}
	}()
	refused, served := 0, 0
	deadline := time.Now().Add(2 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		for _, p := range []string{"flip", "swapfile"} {
			for _, typ := range []string{"readFile", "readFileLines", "readFileBytes"} {
				res, err := invoke(t, root, typ, "project", map[string]any{"path": p, "start": 1, "end": 3, "offset": 0, "length": 100})
				if err != nil {
					t.Fatalf("%s %s: %v", typ, p, err)
				}
				if strings.Contains(text(res), "TOPSECRET") {
					close(stop)
					wg.Wait()
					t.Fatalf("%s %s leaked the secret: %s", typ, p, text(res))
				}
				if res.IsError {
					refused++
				} else {
					served++
				}
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d reads served, %d refused", served, refused)
	if served == 0 {
		t.Error("no read ever succeeded")
	}
}

// TestSwapDuringWrite flips a directory link between a project directory
// and .git/hooks while creating and editing files through it: nothing ever
// lands in .git.
func TestSwapDuringWrite(t *testing.T) {
	root, outside := adversarialProject(t)
	os.MkdirAll(filepath.Join(root, "real"), 0o755)
	os.WriteFile(filepath.Join(root, "real/pre-commit"), []byte("#!/bin/sh\n"), 0o644)
	link := filepath.Join(root, "d")
	os.Symlink("real", link)
	gitBefore := treeHash(t, filepath.Join(root, ".git"))
	outBefore := treeHash(t, outside)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		targets := []string{"real", ".git/hooks", outside}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(root, fmt.Sprintf("d.tmp%d", i%2))
			os.Remove(tmp)
			os.Symlink(targets[i%len(targets)], tmp)
			os.Rename(tmp, link)
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	wrote := 0
	for i := 0; time.Now().Before(deadline); i++ {
		calls := []struct {
			typ  string
			args map[string]any
		}{
			{"createFile", map[string]any{"path": fmt.Sprintf("d/new%d", i), "content": "#!/bin/sh\nevil\n"}},
			{"editFile", map[string]any{"path": "d/pre-commit", "oldString": "#!/bin/sh\n", "newString": "#!/bin/sh\n#\n"}},
			{"chmodFile", map[string]any{"path": "d/pre-commit", "mode": fmt.Sprintf("07%d%d", i%8, i%8)}},
		}
		for _, c := range calls {
			res, err := invoke(t, root, c.typ, "project-dot", c.args)
			if err != nil {
				t.Fatalf("%s: %v", c.typ, err)
			}
			if !res.IsError {
				wrote++
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d writes went through (into real/)", wrote)
	if treeHash(t, filepath.Join(root, ".git")) != gitBefore {
		t.Error(".git changed")
	}
	if treeHash(t, outside) != outBefore {
		t.Error("the outside changed")
	}
}
