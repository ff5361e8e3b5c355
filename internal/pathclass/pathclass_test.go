package pathclass

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opair-dev/opair/internal/gitignore"
)

// project builds a project tree in a fresh directory and returns its
// resolved root and the directory that holds it (outside the project).
func project(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "proj")
	files := map[string]string{
		"main.go":               "package main\n",
		"sub/file.txt":          "hello\n",
		".env":                  "SECRET=1\n",
		".gitignore":            "*.log\nbuild/\n.cache/\n",
		"debug.log":             "",
		"build/out.bin":         "",
		"sub/deep/x.log":        "",
		".cache/data":           "",
		".git/config":           "[core]\n",
		".git/hooks/pre-commit": "#!/bin/sh\n",
		".opair/config.json":    "{}\n",
		"sub/.npmrc":            "",
		".bashrc":               "",
		"tools/t.json":          "{}\n",
	}
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside = filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func newResolver(t *testing.T, root string, protected ...string) *Resolver {
	t.Helper()
	r, err := New(root, Options{
		Ignore:    gitignore.New(root, gitignore.Options{GlobalExcludes: "-", Home: t.TempDir()}),
		Protected: protected,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

type want struct {
	class          Class
	rel            string // "-" to skip
	abs            string // "" to skip
	exists         bool
	protected      bool
	dangling       bool
	special        bool
	mayLeadOutside bool
}

func check(t *testing.T, r *Resolver, path string, w want) *Resolved {
	t.Helper()
	res, err := r.Resolve(path)
	if err != nil {
		t.Errorf("Resolve(%q): %v", path, err)
		return nil
	}
	if res.Class != w.class {
		t.Errorf("Resolve(%q).Class = %v, want %v (Rel %q, Abs %q)", path, res.Class, w.class, res.Rel, res.Abs)
	}
	if w.rel != "-" && res.Rel != w.rel {
		t.Errorf("Resolve(%q).Rel = %q, want %q", path, res.Rel, w.rel)
	}
	if w.abs != "" && res.Abs != w.abs {
		t.Errorf("Resolve(%q).Abs = %q, want %q", path, res.Abs, w.abs)
	}
	if res.Exists != w.exists || (res.Info != nil) != w.exists {
		t.Errorf("Resolve(%q): Exists = %v, Info = %v; want exists %v", path, res.Exists, res.Info, w.exists)
	}
	if res.Info != nil && res.Info.Mode()&fs.ModeSymlink != 0 {
		t.Errorf("Resolve(%q).Info is a link", path)
	}
	if (res.Protected != "") != w.protected {
		t.Errorf("Resolve(%q).Protected = %q, want protected %v", path, res.Protected, w.protected)
	}
	if res.Dangling != w.dangling {
		t.Errorf("Resolve(%q).Dangling = %v, want %v", path, res.Dangling, w.dangling)
	}
	if res.Special != w.special {
		t.Errorf("Resolve(%q).Special = %v, want %v", path, res.Special, w.special)
	}
	if res.MayLeadOutside != w.mayLeadOutside {
		t.Errorf("Resolve(%q).MayLeadOutside = %v, want %v", path, res.MayLeadOutside, w.mayLeadOutside)
	}
	return res
}

func TestClassesOfPlainPaths(t *testing.T) {
	root, _ := project(t)
	r := newResolver(t, root)
	check(t, r, ".", want{class: Project, rel: ".", abs: root, exists: true})
	check(t, r, "main.go", want{class: Project, rel: "main.go", abs: root + "/main.go", exists: true})
	check(t, r, "./sub//file.txt", want{class: Project, rel: "sub/file.txt", exists: true})
	check(t, r, "sub/new.txt", want{class: Project, rel: "sub/new.txt", exists: false})
	check(t, r, "newdir/new.txt", want{class: Project, rel: "newdir/new.txt", exists: false})
	check(t, r, ".env", want{class: ProjectDot, rel: ".env", exists: true})
	check(t, r, "debug.log", want{class: ProjectIgnore, rel: "debug.log", exists: true})
	check(t, r, "sub/deep/x.log", want{class: ProjectIgnore, rel: "sub/deep/x.log", exists: true})
	check(t, r, "build/out.bin", want{class: ProjectIgnore, rel: "build/out.bin", exists: true})
	check(t, r, "build", want{class: ProjectIgnore, rel: "build", exists: true})
	check(t, r, "new.log", want{class: ProjectIgnore, rel: "new.log", exists: false})
	// Dot and ignored: dot wins.
	check(t, r, ".cache/data", want{class: ProjectDot, rel: ".cache/data", exists: true})
}

func TestTraversal(t *testing.T) {
	root, outside := project(t)
	r := newResolver(t, root)
	parent := filepath.Dir(root)
	check(t, r, "../outside/secret.txt", want{class: External, rel: "", abs: outside + "/secret.txt", exists: true})
	check(t, r, "sub/../../outside/secret.txt", want{class: External, abs: outside + "/secret.txt", exists: true})
	check(t, r, "..", want{class: External, abs: parent, exists: true})
	check(t, r, "../../../../../../../..", want{class: External, abs: "/", exists: true})
	check(t, r, "sub/../main.go", want{class: Project, rel: "main.go", exists: true})
	// Climbing out and back in lands inside again: classified by the target.
	check(t, r, "../proj/.env", want{class: ProjectDot, rel: ".env", exists: true})
	check(t, r, "../proj-evil/x", want{class: External, abs: parent + "/proj-evil/x", exists: false})
}

func TestAbsolutePaths(t *testing.T) {
	root, outside := project(t)
	r := newResolver(t, root)
	check(t, r, root+"/sub/file.txt", want{class: Project, rel: "sub/file.txt", exists: true})
	check(t, r, root, want{class: Project, rel: ".", exists: true})
	check(t, r, root+"/", want{class: Project, rel: ".", exists: true})
	check(t, r, outside+"/secret.txt", want{class: External, rel: "", abs: outside + "/secret.txt", exists: true})
	// A sibling whose name starts with the root's is outside (no string-prefix bug).
	check(t, r, root+"-evil/x", want{class: External, abs: root + "-evil/x", exists: false})
	if _, err := os.Stat("/etc/passwd"); err == nil {
		check(t, r, "/etc/passwd", want{class: External, abs: "/etc/passwd", exists: true})
	}
}

func TestProcSelfRoot(t *testing.T) {
	if _, err := os.Stat("/proc/self/root/etc/passwd"); err != nil {
		t.Skip("no /proc/self/root/etc/passwd")
	}
	root, _ := project(t)
	r := newResolver(t, root)
	check(t, r, "/proc/self/root/etc/passwd", want{class: External, abs: "/etc/passwd", exists: true})
	// Through /proc back into the project: still the project's dot file,
	// not an external path an external-scope tool could read.
	check(t, r, "/proc/self/root"+root+"/.env", want{class: ProjectDot, rel: ".env", exists: true})
	check(t, r, "/proc/self/cwd/../../../../../../../../../../etc/passwd", want{class: External, abs: "/etc/passwd", exists: true})
}

func TestSymlinks(t *testing.T) {
	root, outside := project(t)
	symlink(t, "/etc", filepath.Join(root, "etclink"))
	symlink(t, "..", filepath.Join(root, "up"))
	symlink(t, ".env", filepath.Join(root, "notes.txt"))
	symlink(t, "chain2", filepath.Join(root, "chain1"))
	symlink(t, "sub/chain3", filepath.Join(root, "chain2"))
	symlink(t, "file.txt", filepath.Join(root, "sub", "chain3"))
	symlink(t, root+"/.env", filepath.Join(root, "abs-inside"))
	symlink(t, outside, filepath.Join(root, "out"))
	symlink(t, "../../sub", filepath.Join(root, "sub", "deep", "back"))
	r := newResolver(t, root)

	check(t, r, "etclink", want{class: External, rel: "", abs: "/etc", exists: true})
	if _, err := os.Stat("/etc/passwd"); err == nil {
		check(t, r, "etclink/passwd", want{class: External, abs: "/etc/passwd", exists: true})
	}
	check(t, r, "up", want{class: External, abs: filepath.Dir(root), exists: true})
	check(t, r, "up/outside/secret.txt", want{class: External, abs: outside + "/secret.txt", exists: true})
	check(t, r, "up/proj/main.go", want{class: Project, rel: "main.go", exists: true})
	check(t, r, "notes.txt", want{class: ProjectDot, rel: ".env", exists: true})
	check(t, r, "chain1", want{class: Project, rel: "sub/file.txt", exists: true})
	check(t, r, "abs-inside", want{class: ProjectDot, rel: ".env", exists: true})
	check(t, r, "out/secret.txt", want{class: External, abs: outside + "/secret.txt", exists: true})
	check(t, r, "out/new.txt", want{class: External, abs: outside + "/new.txt", exists: false})
	check(t, r, "sub/deep/back/file.txt", want{class: Project, rel: "sub/file.txt", exists: true})
	// ".." applies to the resolved directory, as the kernel does.
	check(t, r, "etclink/..", want{class: External, abs: "/", exists: true})
}

func TestDanglingLinks(t *testing.T) {
	root, _ := project(t)
	symlink(t, "nothere", filepath.Join(root, "dang"))
	symlink(t, "dang", filepath.Join(root, "dang-chain"))
	symlink(t, "/nonexistent-opair-test/x", filepath.Join(root, "dang-out"))
	symlink(t, "missing-dir", filepath.Join(root, "dang-dir"))
	r := newResolver(t, root)
	check(t, r, "dang", want{class: Project, rel: "nothere", exists: false, dangling: true})
	check(t, r, "dang-chain", want{class: Project, rel: "nothere", exists: false, dangling: true})
	check(t, r, "dang-out", want{class: External, abs: "/nonexistent-opair-test/x", exists: false, dangling: true})
	check(t, r, "dang-dir/new.txt", want{class: Project, rel: "missing-dir/new.txt", exists: false, dangling: true})
	// A plain missing file is not dangling.
	check(t, r, "sub/new.txt", want{class: Project, rel: "sub/new.txt", exists: false})
}

func TestLinkLoopsFail(t *testing.T) {
	root, _ := project(t)
	symlink(t, "loop2", filepath.Join(root, "loop1"))
	symlink(t, "loop1", filepath.Join(root, "loop2"))
	symlink(t, "self", filepath.Join(root, "self"))
	symlink(t, "grow/grow", filepath.Join(root, "grow"))
	r := newResolver(t, root)
	for _, p := range []string{"loop1", "loop2/x", "self", "grow"} {
		done := make(chan error, 1)
		go func() {
			_, err := r.Resolve(p)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "link loop") || !strings.Contains(err.Error(), p) {
				t.Errorf("Resolve(%q) = %v, want a link-loop error naming the path", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Resolve(%q) hangs", p)
		}
	}
}

func TestRefusedInputs(t *testing.T) {
	root, _ := project(t)
	r := newResolver(t, root)
	long := strings.Repeat("a/", MaxPathBytes/2+1)
	cases := []struct{ path, wantErr string }{
		{"", "empty path"},
		{"main.go\x00.txt", "NUL"},
		{"sub/\x00", "NUL"},
		{"bad\xffname", "UTF-8"},
		{long, "over the limit"},
		{strings.Repeat("n", MaxComponentBytes+1), "over the limit"},
		{"sub/" + strings.Repeat("n", MaxComponentBytes+1) + "/x", "over the limit"},
		{"main.go/x", "not a directory"},
		{"main.go/", "not a directory"},
		{"main.go/..", "not a directory"},
		{"nothere/../main.go", "does not exist"},
	}
	for _, c := range cases {
		_, err := r.Resolve(c.path)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("Resolve(%.50q) = %v, want an error containing %q", c.path, err, c.wantErr)
		}
	}
	// The longest allowed component is fine.
	check(t, r, strings.Repeat("n", MaxComponentBytes), want{class: Project, rel: strings.Repeat("n", MaxComponentBytes)})
}

func TestSpecialFiles(t *testing.T) {
	root, _ := project(t)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	symlink(t, "fifo", filepath.Join(root, "to-fifo"))
	r := newResolver(t, root)
	check(t, r, "fifo", want{class: Project, rel: "fifo", exists: true, special: true})
	check(t, r, "to-fifo", want{class: Project, rel: "fifo", exists: true, special: true})
	if _, err := os.Stat("/dev/null"); err == nil {
		check(t, r, "/dev/null", want{class: External, abs: "/dev/null", exists: true, special: true})
	}
	check(t, r, "sub", want{class: Project, rel: "sub", exists: true})
}

func TestHardLinks(t *testing.T) {
	root, outside := project(t)
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "innocent.txt")); err != nil {
		t.Skip("hard links unsupported:", err)
	}
	r := newResolver(t, root)
	check(t, r, "innocent.txt", want{class: Project, rel: "innocent.txt", exists: true, mayLeadOutside: true})
	check(t, r, "main.go", want{class: Project, rel: "main.go", exists: true})
}

func TestProtected(t *testing.T) {
	root, outside := project(t)
	symlink(t, ".git/config", filepath.Join(root, "ok.txt"))
	symlink(t, ".git", filepath.Join(root, "gitlink"))
	symlink(t, "tools", filepath.Join(root, "tl"))
	configFile := filepath.Join(outside, "opair.json")
	if err := os.WriteFile(configFile, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, configFile, filepath.Join(root, "cfg"))
	for _, p := range []string{".GIT/config", ".Git/hooks", ".g\u200cit/config", "GIT~1/config", ".git. /config", ".NPMRC", ".gitmodules", ".zshrc", ".envrc", ".profile"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := newResolver(t, root, filepath.Join(root, "tools"), configFile)

	protected := []string{
		".git", ".git/hooks/pre-commit", ".git/hooks/new-hook", ".git/config",
		".GIT/config", ".Git/hooks", ".g\u200cit/config", "GIT~1/config", ".git. /config",
		".opair/config.json", ".opair/new.json", "ok.txt", "gitlink/config",
		".bashrc", ".zshrc", ".profile", ".envrc", "sub/.npmrc", ".NPMRC", ".gitmodules",
		"tools/t.json", "tools/new.json", "tl/t.json", "cfg", configFile,
		root + "/.git/config", "sub/../.git/config",
	}
	for _, p := range protected {
		res, err := r.Resolve(p)
		if err != nil {
			t.Errorf("Resolve(%q): %v", p, err)
			continue
		}
		if res.Protected == "" {
			t.Errorf("Resolve(%q).Protected is empty (Rel %q, Abs %q)", p, res.Rel, res.Abs)
		}
	}
	for _, p := range []string{"main.go", "sub/file.txt", ".env", "git", "sub/npmrc", "tools-not", ".gitignore", "mygit/config"} {
		res, err := r.Resolve(p)
		if err != nil {
			t.Errorf("Resolve(%q): %v", p, err)
			continue
		}
		if res.Protected != "" {
			t.Errorf("Resolve(%q).Protected = %q, want none", p, res.Protected)
		}
	}
	res, _ := r.Resolve("ok.txt")
	if res.Rel != ".git/config" || !strings.Contains(res.Protected, ".git") {
		t.Errorf("ok.txt → %q protected by %q", res.Rel, res.Protected)
	}
}

func TestGitDirElsewhereIsProtected(t *testing.T) {
	root, outside := project(t)
	if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	gitdir := filepath.Join(outside, "real.git")
	if err := os.MkdirAll(filepath.Join(gitdir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newResolver(t, root)
	res, err := r.Resolve(gitdir + "/hooks/pre-commit")
	if err != nil {
		t.Fatal(err)
	}
	if res.Class != External || res.Protected == "" {
		t.Errorf("the real git dir: class %v, protected %q", res.Class, res.Protected)
	}
}

func TestRootIsResolved(t *testing.T) {
	root, outside := project(t)
	link := filepath.Join(outside, "link-to-proj")
	symlink(t, root, link)
	r, err := New(link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.RootPath() != root {
		t.Errorf("RootPath() = %q, want %q", r.RootPath(), root)
	}
	check(t, r, link+"/main.go", want{class: Project, rel: "main.go", exists: true})
	if _, err := New("relative/root", Options{}); err == nil {
		t.Error("New accepted a relative root")
	}
	if _, err := New(filepath.Join(root, "main.go"), Options{}); err == nil {
		t.Error("New accepted a file as root")
	}
	if _, err := New(root, Options{Protected: []string{"rel"}}); err == nil {
		t.Error("New accepted a relative protected path")
	}
}

// The contract: Resolve classifies; opening goes through Root() with Rel,
// which refuses to follow a component swapped for a link after Resolve.
func TestSwapAfterResolveIsCaughtAtOpen(t *testing.T) {
	root, outside := project(t)
	if err := os.WriteFile(filepath.Join(outside, "file.txt"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newResolver(t, root)
	res := check(t, r, "sub/file.txt", want{class: Project, rel: "sub/file.txt", exists: true})
	if res == nil {
		return
	}
	// Swap: sub becomes a link to the outside directory.
	if err := os.RemoveAll(filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(root, "sub"))
	f, err := r.Root().Open(res.Rel)
	if err == nil {
		f.Close()
		t.Fatal("opening Rel through Root() followed a link out of the project")
	}
	// And the final component swapped for an in-project file is caught by
	// comparing identities.
	res = check(t, r, "main.go", want{class: Project, rel: "main.go", exists: true})
	if err := os.Rename(filepath.Join(root, "main.go"), filepath.Join(root, "main.old")); err != nil {
		t.Fatal(err)
	}
	symlink(t, ".env", filepath.Join(root, "main.go"))
	f, err = r.Root().Open(res.Rel)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(st, res.Info) {
		t.Error("a swapped file looks the same as the one Resolve saw")
	}
}

func TestGrants(t *testing.T) {
	classes := []Class{Project, ProjectDot, ProjectIgnore, External}
	allowed := map[Class][]Class{
		Project:       {Project},
		ProjectDot:    {Project, ProjectDot},
		ProjectIgnore: {Project, ProjectIgnore},
		External:      {External},
	}
	for _, scope := range classes {
		for _, c := range classes {
			want := false
			for _, a := range allowed[scope] {
				want = want || a == c
			}
			if got := Grants(scope, c); got != want {
				t.Errorf("Grants(%v, %v) = %v, want %v", scope, c, got, want)
			}
		}
		if Grants(scope, 0) || Grants(0, scope) || Grants(Class(99), scope) {
			t.Errorf("an invalid class was granted with %v", scope)
		}
	}
}

func TestScopeNames(t *testing.T) {
	for c, name := range map[Class]string{Project: "project", ProjectDot: "project-dot", ProjectIgnore: "project-ignore", External: "external"} {
		if c.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(c), c.String(), name)
		}
		got, err := ParseScope(name)
		if err != nil || got != c {
			t.Errorf("ParseScope(%q) = %v, %v", name, got, err)
		}
	}
	for _, bad := range []string{"", "Project", "dot", "project-dots", " external"} {
		if _, err := ParseScope(bad); err == nil {
			t.Errorf("ParseScope(%q) accepted", bad)
		}
	}
	if Class(0).String() != "Class(0)" {
		t.Errorf("Class(0).String() = %q", Class(0).String())
	}
}

func TestProtectedName(t *testing.T) {
	for _, n := range []string{".git", ".GIT", ".gIt", ".git.", ".git ", ".g\u200dit", "\ufeff.git", "git~1", "GIT~1", ".BashRC", ".npmrc", ".ſsh"} {
		if ProtectedName(n) == "" {
			t.Errorf("ProtectedName(%q) = \"\"", n)
		}
	}
	for _, n := range []string{"git", ".gitignore", ".gitattributes", "npmrc", ".git2", "x.git", ".", ".."} {
		if r := ProtectedName(n); r != "" {
			t.Errorf("ProtectedName(%q) = %q", n, r)
		}
	}
	if protectedComponents("home/u/.config/git/config") == "" || protectedComponents("a/.config/gitx") != "" {
		t.Error("the .config/git pair is not matched exactly")
	}
}

func TestConcurrentResolve(t *testing.T) {
	root, _ := project(t)
	symlink(t, ".env", filepath.Join(root, "notes.txt"))
	r := newResolver(t, root)
	paths := map[string]Class{"main.go": Project, "notes.txt": ProjectDot, "debug.log": ProjectIgnore, "../outside": External}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				for p, c := range paths {
					res, err := r.Resolve(p)
					if err != nil || res.Class != c {
						t.Errorf("goroutine %d iteration %d: Resolve(%q) = %v, %v", g, i, p, res, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestErrorsNameThePath(t *testing.T) {
	root, _ := project(t)
	r := newResolver(t, root)
	_, err := r.Resolve("main.go/x")
	if err == nil || !strings.Contains(err.Error(), `"main.go/x"`) || !strings.Contains(err.Error(), `"main.go"`) {
		t.Errorf("error %v should name the input and the component at fault", err)
	}
	var pe *fs.PathError
	_ = errors.As(err, &pe)
	_ = fmt.Sprint(pe)
}

func TestOpen(t *testing.T) {
	root, outside := project(t)
	r := newResolver(t, root)
	for _, p := range []string{"sub/file.txt", "../outside/secret.txt", "sub"} {
		res, err := r.Resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := r.Open(res)
		if err != nil {
			t.Errorf("Open(%q): %v", p, err)
			continue
		}
		f.Close()
	}
	res, _ := r.Resolve("sub/new.txt")
	if _, err := r.Open(res); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing path: %v", err)
	}
	// Swapped after Resolve: the target replaced, a component made a link
	// out of the project, or an external file replaced by a link.
	// (The new file is made before the old one goes, so that its inode
	// cannot be reused.)
	res, _ = r.Resolve("main.go")
	os.WriteFile(filepath.Join(root, "main.new"), []byte("other"), 0o644)
	os.Rename(filepath.Join(root, "main.new"), filepath.Join(root, "main.go"))
	if _, err := r.Open(res); !errors.Is(err, ErrChanged) {
		t.Errorf("Open after the file was replaced: %v, want ErrChanged", err)
	}
	res, _ = r.Resolve("sub/file.txt")
	if err := os.Link(filepath.Join(root, "sub", "file.txt"), filepath.Join(outside, "hard.txt")); err == nil {
		if _, err := r.Open(res); !errors.Is(err, ErrChanged) {
			t.Errorf("Open after a hard link appeared: %v, want ErrChanged", err)
		}
	}
	res, _ = r.Resolve("sub/file.txt")
	os.WriteFile(filepath.Join(outside, "file.txt"), nil, 0o644)
	os.RemoveAll(filepath.Join(root, "sub"))
	symlink(t, outside, filepath.Join(root, "sub"))
	if f, err := r.Open(res); err == nil {
		f.Close()
		t.Error("Open followed a swapped link out of the project")
	}
	res, _ = r.Resolve(outside + "/secret.txt")
	os.Rename(filepath.Join(outside, "secret.txt"), filepath.Join(outside, "moved.txt"))
	symlink(t, "moved.txt", filepath.Join(outside, "secret.txt"))
	if f, err := r.Open(res); err == nil {
		f.Close()
		t.Error("Open of an external path followed a link swapped in")
	}
	// A FIFO swapped in does not block.
	res, _ = r.Resolve("debug.log")
	os.Remove(filepath.Join(root, "debug.log"))
	if err := syscall.Mkfifo(filepath.Join(root, "debug.log"), 0o644); err == nil {
		done := make(chan error, 1)
		go func() { _, err := r.Open(res); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrChanged) {
				t.Errorf("Open of a FIFO swapped in: %v, want ErrChanged", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Open blocked on a FIFO")
		}
	}
}
