package run

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opair-dev/opair/internal/childenv"
)

// evilRepo is a git repository whose .git/config runs a program (which
// creates a file named after the setting in marks) through every setting
// that a read-only git command may obey.
type evilRepo struct {
	git, dir, marks string
}

func newEvilRepo(t *testing.T, withFilter bool) evilRepo {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	git, _ = filepath.Abs(git)
	r := evilRepo{git: git, dir: t.TempDir(), marks: t.TempDir()}
	bin := t.TempDir()
	hooks := filepath.Join(bin, "hooks")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	trap := func(path, name, rest string) string {
		body := "#!/bin/sh\ntouch '" + filepath.Join(r.marks, name) + "'\n" + rest
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, h := range []string{"post-index-change", "reference-transaction", "post-checkout", "pre-commit", "pre-auto-gc", "fsmonitor-watchman"} {
		trap(filepath.Join(hooks, h), "hook-"+h, "")
	}

	// A clean setup: no user or system configuration, nothing evil yet.
	setupEnv := childenv.Merge(childenv.Build(os.Environ()), []string{
		"HOME=" + bin, "GIT_CONFIG_NOSYSTEM=1", noGlobal(), noSystem(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	})
	gitc := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(git, append([]string{"-c", "gc.auto=0"}, args...)...)
		cmd.Dir, cmd.Env, cmd.Stdin = r.dir, setupEnv, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitc("", "init", "-q")
	attrs := "*.txt diff=evil\n"
	if withFilter {
		attrs = "*.txt diff=evil filter=evilf\n"
	}
	if err := os.WriteFile(filepath.Join(r.dir, ".gitattributes"), []byte(attrs), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"a.txt": "hello\n", "b.dat": "plain\n"} {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitc("", "add", ".")
	gitc("", "commit", "-q", "-m", "init")
	// A commit with a (fake) signature, so that log.showSignature has
	// something to verify.
	commit := gitc("", "cat-file", "commit", "HEAD")
	head, body, _ := strings.Cut(commit, "\n\n")
	signed := head + "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\n" + body + "\n"
	sha := gitc(signed, "hash-object", "-t", "commit", "-w", "--stdin")
	gitc("", "update-ref", "HEAD", sha)

	// Now the traps.
	set := func(key, value string) { gitc("", "config", key, value) }
	set("core.fsmonitor", trap(filepath.Join(bin, "fsmonitor"), "fsmonitor", ""))
	set("core.hooksPath", hooks)
	set("core.pager", trap(filepath.Join(bin, "pager"), "pager", "cat\n"))
	set("diff.external", trap(filepath.Join(bin, "extdiff"), "diff.external", ""))
	set("diff.evil.textconv", trap(filepath.Join(bin, "textconv"), "textconv", `cat "$1"`+"\n"))
	set("diff.evil.command", trap(filepath.Join(bin, "diffcmd"), "diff.command", ""))
	set("log.showSignature", "true")
	set("gpg.program", trap(filepath.Join(bin, "gpg"), "gpg.program", ""))
	set("core.askPass", trap(filepath.Join(bin, "askpass"), "askpass", ""))
	if withFilter {
		set("filter.evilf.clean", trap(filepath.Join(bin, "clean"), "filter.clean", "cat\n"))
		set("filter.evilf.smudge", trap(filepath.Join(bin, "smudge"), "filter.smudge", "cat\n"))
	}
	// Modified files, with new stat data, for status and diff: a.txt has
	// the evil diff driver (and filter), b.dat only the global settings.
	time.Sleep(10 * time.Millisecond)
	for name, content := range map[string]string{"a.txt": "hello\nmore\n", "b.dat": "plain\nchanged\n"} {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.assertNoMarks(t, "after setup")
	return r
}

func (r evilRepo) marksMade(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(r.marks)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func (r evilRepo) assertNoMarks(t *testing.T, when string) {
	t.Helper()
	if made := r.marksMade(t); len(made) > 0 {
		t.Fatalf("%s: repository programs ran: %v", when, made)
	}
}

func (r evilRepo) clearMarks(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(r.marks); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(r.marks, 0o755); err != nil {
		t.Fatal(err)
	}
}

// run runs git <subcommand> <safety args> <args> in the repository.
func (r evilRepo) run(t *testing.T, env []string, safe bool, subcommand string, args ...string) Result {
	t.Helper()
	argv := []string{subcommand}
	if safe {
		argv = append(argv, childenv.GitArgs(subcommand)...)
	}
	argv = append(argv, args...)
	res, err := Run(context.Background(), Spec{Path: r.git, Args: argv, Dir: r.dir, Env: env, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("git %q: %v", argv, err)
	}
	return res
}

// noGlobal and noSystem keep the user's and the system's git configuration
// out of the test, as the pins do.
func noGlobal() string {
	v, _ := childenv.Lookup(childenv.Pinned("git"), "GIT_CONFIG_GLOBAL")
	return "GIT_CONFIG_GLOBAL=" + v
}

func noSystem() string {
	v, _ := childenv.Lookup(childenv.Pinned("git"), "GIT_CONFIG_SYSTEM")
	return "GIT_CONFIG_SYSTEM=" + v
}

func pinnedGitEnv() []string {
	return childenv.Merge(childenv.Build(os.Environ()), childenv.Pinned("git"))
}

// The control: without the pins, the traps do fire, so the test below
// would notice if a pin stopped working.
func TestGitTrapsFireWithoutPins(t *testing.T) {
	r := newEvilRepo(t, false)
	env := childenv.Merge(childenv.Build(os.Environ()), []string{"GIT_CONFIG_NOSYSTEM=1", noGlobal(), noSystem()})
	r.run(t, env, false, "status")
	r.run(t, env, false, "diff")
	r.run(t, env, false, "log", "-p")
	made := r.marksMade(t)
	for _, want := range []string{"fsmonitor", "diff.external", "diff.command", "textconv", "gpg.program"} {
		if !slices.Contains(made, want) {
			t.Errorf("control: %s did not run (ran: %v); the trap is broken", want, made)
		}
	}
}

func TestGitPinsStopRepositoryPrograms(t *testing.T) {
	r := newEvilRepo(t, false)
	env := pinnedGitEnv()
	check := func(res Result, what string, wantOut ...string) {
		t.Helper()
		if res.ExitCode != 0 || res.TimedOut {
			t.Fatalf("git %s: %+v\n%s", what, res, res.Output)
		}
		for _, w := range wantOut {
			if !bytes.Contains(res.Output, []byte(w)) {
				t.Errorf("git %s: output lacks %q:\n%s", what, w, res.Output)
			}
		}
		r.assertNoMarks(t, "git "+what)
	}
	check(r.run(t, env, true, "status"), "status", "modified:", "a.txt")
	check(r.run(t, env, true, "diff"), "diff", "+more", "+changed")
	check(r.run(t, env, true, "log", "-p"), "log -p", "+hello")
	check(r.run(t, env, true, "log"), "log", "init")
	check(r.run(t, env, true, "show"), "show", "+hello")
	check(r.run(t, env, true, "whatchanged", "-p"), "whatchanged -p", "+hello")
	check(r.run(t, env, true, "blame", "a.txt"), "blame", "hello")

	// Without the safety arguments, a diff of b.dat fails closed
	// (diff.external is pinned empty) rather than running the repository's
	// program. (a.txt's diff.evil.command would run: only --no-ext-diff or
	// PinGitDrivers stops a driver's command; see TestPinGitDrivers.)
	res := r.run(t, env, false, "diff", "--", "b.dat")
	if res.ExitCode == 0 {
		t.Errorf("git diff without --no-ext-diff succeeded:\n%s", res.Output)
	}
	r.assertNoMarks(t, "git diff without safety args")

	// A model asking for signatures gets the real gpg (or an error), never
	// the repository's gpg.program.
	r.run(t, env, true, "log", "--show-signature")
	r.run(t, env, true, "log", "--format=%G?")
	r.assertNoMarks(t, "git log --show-signature")
}

// A model-run `git config --global` or `--system` writes nowhere. (With
// GIT_CONFIG_GLOBAL=/dev/null, git running as root replaces /dev/null with a
// regular file: it renames its lock file over the target.)
func TestGitConfigWritesFail(t *testing.T) {
	r := newEvilRepo(t, false)
	env := pinnedGitEnv()
	for _, name := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		v, _ := childenv.Lookup(env, name)
		if v == "" || v == os.DevNull || !strings.HasPrefix(v, os.DevNull+"/") {
			t.Fatalf("%s=%q: must be a path that cannot exist (and never /dev/null itself)", name, v)
		}
	}
	for _, scope := range []string{"--global", "--system"} {
		res := r.run(t, env, false, "config", scope, "core.pager", "touch /tmp/opair-pwned")
		if res.ExitCode == 0 {
			t.Errorf("git config %s succeeded:\n%s", scope, res.Output)
		}
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", os.DevNull, fi.Mode(), err)
	}
}

func TestPinGitDrivers(t *testing.T) {
	r := newEvilRepo(t, true)
	// Pinned alone cannot name the repository's filter driver: its clean
	// filter runs on diff. (If git ever stops running it, this control
	// tells.)
	r.run(t, pinnedGitEnv(), true, "diff")
	if made := r.marksMade(t); !slices.Equal(made, []string{"filter.clean"}) {
		t.Fatalf("control: with Pinned only, ran %v; want exactly the clean filter", made)
	}
	r.clearMarks(t)

	env, err := PinGitDrivers(context.Background(), r.git, r.dir, pinnedGitEnv())
	if err != nil {
		t.Fatal(err)
	}
	count, _ := childenv.Lookup(env, "GIT_CONFIG_COUNT")
	if base, _ := childenv.Lookup(childenv.Pinned("git"), "GIT_CONFIG_COUNT"); count == base {
		t.Fatalf("no driver pins added: %q", env)
	}
	for _, c := range [][]string{{"status"}, {"diff"}, {"log", "-p"}, {"show"}, {"blame", "a.txt"}} {
		res := r.run(t, env, true, c[0], c[1:]...)
		if res.ExitCode != 0 {
			t.Fatalf("git %q: %+v\n%s", c, res, res.Output)
		}
		r.assertNoMarks(t, "git "+strings.Join(c, " "))
	}
	// Without the safety arguments, diff fails closed: the driver's
	// command and diff.external are both pinned empty.
	if res := r.run(t, env, false, "diff"); res.ExitCode == 0 {
		t.Errorf("git diff without --no-ext-diff succeeded:\n%s", res.Output)
	}
	r.assertNoMarks(t, "git diff without safety args")

	// Even without --no-textconv, textconv is cat now.
	res := r.run(t, env, false, "blame", "a.txt")
	if res.ExitCode != 0 || !bytes.Contains(res.Output, []byte("more")) {
		t.Fatalf("git blame: %+v\n%s", res, res.Output)
	}
	r.assertNoMarks(t, "git blame without --no-textconv")

	// Pinning twice is harmless.
	again, err := PinGitDrivers(context.Background(), r.git, r.dir, env)
	if err != nil {
		t.Fatal(err)
	}
	if res := r.run(t, again, true, "diff"); res.ExitCode != 0 {
		t.Fatalf("git diff after pinning twice: %+v\n%s", res, res.Output)
	}
	r.assertNoMarks(t, "after pinning twice")
}

func TestPinGitDriversFailsClosed(t *testing.T) {
	r := newEvilRepo(t, true)
	// Without Pinned("git"), core.hooksPath is not /dev/null: refused.
	env := childenv.Merge(childenv.Build(os.Environ()), []string{"GIT_CONFIG_NOSYSTEM=1", noGlobal(), noSystem()})
	if _, err := PinGitDrivers(context.Background(), r.git, r.dir, env); err == nil {
		t.Fatal("PinGitDrivers accepted an environment without the git pins")
	}
	r.assertNoMarks(t, "PinGitDrivers")
}

func TestDriverPins(t *testing.T) {
	out := []byte("core.hookspath\n/x\x00filter.a.b.clean\nc\x00filter.lfs.required\x00diff.evil.textconv\nt\x00diff.other.xfuncname\nx\x00" +
		"diff.external\n\x00remote.origin.url\n/r\x00remote.origin.uploadpack\nu\x00core.hookspath\n/dev/null\x00")
	pins, hooks := driverPins(out)
	if hooks != "/dev/null" {
		t.Errorf("hooksPath %q", hooks)
	}
	want := [][2]string{
		{"filter.a.b.clean", ""}, {"filter.a.b.smudge", ""}, {"filter.a.b.process", ""}, {"filter.a.b.required", "false"},
		{"filter.lfs.clean", ""}, {"filter.lfs.smudge", ""}, {"filter.lfs.process", ""}, {"filter.lfs.required", "false"},
		{"diff.evil.textconv", "cat"}, {"diff.evil.command", ""},
		{"remote.origin.uploadpack", "git-upload-pack"}, {"remote.origin.receivepack", "git-receive-pack"},
	}
	if !slices.Equal(pins, want) {
		t.Fatalf("pins\n%q\nwant\n%q", pins, want)
	}
}

func TestGitArgsList(t *testing.T) {
	for _, sub := range []string{"diff", "log", "show", "whatchanged"} {
		if got := childenv.GitArgs(sub); !slices.Equal(got, []string{"--no-ext-diff", "--no-textconv"}) {
			t.Errorf("%s: %q", sub, got)
		}
	}
	for _, sub := range []string{"status", "branch", "rev-parse", ""} {
		if got := childenv.GitArgs(sub); got != nil {
			t.Errorf("%s: %q", sub, got)
		}
	}
}
