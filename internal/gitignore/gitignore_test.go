package gitignore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fixture is a small repository: files maps a slash path to its content
// ("dir/" for an empty directory); ".gitignore" files are written as given.
type fixture struct {
	files   map[string]string
	exclude string // .git/info/exclude
	global  string // passed as Options.GlobalExcludes (and -c core.excludesFile to git)
}

func (f fixture) build(t *testing.T) (root string, opts Options) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "repo")
	for p, content := range f.files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			mustMkdir(t, full)
			continue
		}
		mustMkdir(t, filepath.Dir(full))
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustMkdir(t, filepath.Join(root, ".git", "info"))
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte(f.exclude), 0o644); err != nil {
		t.Fatal(err)
	}
	opts = Options{GlobalExcludes: "-", Home: filepath.Join(base, "home"), XDGConfigHome: filepath.Join(base, "xdg")}
	if f.global != "" {
		opts.GlobalExcludes = filepath.Join(base, "global")
		if err := os.WriteFile(opts.GlobalExcludes, []byte(f.global), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, opts
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func isDirOnDisk(t *testing.T, root, rel string) bool {
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return fi.IsDir()
}

// gitSays asks git check-ignore about paths in root (nil if git is missing).
func gitSays(t *testing.T, root string, opts Options, paths []string) map[string]bool {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	if _, err := os.Stat(filepath.Join(root, ".git", "HEAD")); err != nil {
		cmd := exec.Command(gitBin, "init", "-q", "--template=", root)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	args := []string{"-C", root}
	if opts.GlobalExcludes != "-" && opts.GlobalExcludes != "" {
		args = append(args, "-c", "core.excludesFile="+opts.GlobalExcludes)
	}
	args = append(args, "check-ignore", "--no-index", "-z", "--stdin")
	cmd := exec.Command(gitBin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("git check-ignore: %v %s", err, out)
		}
	}
	got := map[string]bool{}
	for _, p := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if p != "" {
			got[p] = true
		}
	}
	return got
}

func TestFeatures(t *testing.T) {
	cases := []struct {
		name string
		fx   fixture
		want map[string]bool
	}{
		{
			name: "basename at any depth, comments and blank lines",
			fx: fixture{files: map[string]string{
				".gitignore": "# a comment\n\n*.o\nbuild\n",
				"a.o":        "", "src/b.o": "", "src/b.c": "", "build/x": "", "src/build/y": "", "#c": "",
			}},
			want: map[string]bool{"a.o": true, "src/b.o": true, "src/b.c": false, "build": true, "build/x": true, "src/build": true, "src/build/y": true, "#c": false},
		},
		{
			name: "negation re-includes a file",
			fx: fixture{files: map[string]string{
				".gitignore": "*.log\n!keep.log\n",
				"a.log":      "", "keep.log": "", "d/keep.log": "",
			}},
			want: map[string]bool{"a.log": true, "keep.log": false, "d/keep.log": false},
		},
		{
			name: "the last matching line wins",
			fx: fixture{files: map[string]string{
				".gitignore": "!x.txt\n*.txt\n",
				"x.txt":      "",
			}},
			want: map[string]bool{"x.txt": true},
		},
		{
			name: "directory-only patterns",
			fx: fixture{files: map[string]string{
				".gitignore": "out/\n",
				"out/a":      "", "sub/out": "", "sub/out2/": "",
			}},
			want: map[string]bool{"out": true, "out/a": true, "sub/out": false},
		},
		{
			name: "anchored patterns: leading and middle slash",
			fx: fixture{files: map[string]string{
				".gitignore": "/top.txt\ndoc/*.md\n",
				"top.txt":    "", "sub/top.txt": "", "doc/a.md": "", "doc/deep/b.md": "", "x/doc/a.md": "",
			}},
			want: map[string]bool{"top.txt": true, "sub/top.txt": false, "doc/a.md": true, "doc/deep/b.md": false, "x/doc/a.md": false},
		},
		{
			name: "leading, trailing and middle **",
			fx: fixture{files: map[string]string{
				".gitignore": "**/logs\nvendor/**\na/**/z\n",
				"logs":       "", "p/q/logs": "", "vendor/m/n": "", "a/z": "", "a/b/c/z": "", "b/a/z": "",
			}},
			want: map[string]bool{"logs": true, "p/q/logs": true, "vendor": false, "vendor/m": true, "vendor/m/n": true, "a/z": true, "a/b/c/z": true, "b/a/z": false},
		},
		{
			name: "** glued to other characters is a plain *",
			fx: fixture{files: map[string]string{
				".gitignore": "x/a**z\n",
				"x/abz":      "", "x/a/z": "",
			}},
			want: map[string]bool{"x/abz": true, "x/a/z": false, "x/a": false},
		},
		{
			name: "? and bracket expressions",
			fx: fixture{files: map[string]string{
				".gitignore": "f?o\n[ab]x\n[!c]y\n[0-9]n\n[[:upper:]]u\nq[/]r\n",
				"foo":        "", "fo": "", "ax": "", "cx": "", "by": "", "cy": "", "5n": "", "Uu": "", "uu": "", "q/r": "",
			}},
			want: map[string]bool{"foo": true, "fo": false, "ax": true, "cx": false, "by": true, "cy": false, "5n": true, "Uu": true, "uu": false, "q/r": false, "q": false},
		},
		{
			name: "escapes: \\#, \\!, escaped and trimmed trailing spaces",
			fx: fixture{files: map[string]string{
				".gitignore": "\\#hash\n\\!bang\ntrail   \nkeep\\ \n",
				"#hash":      "", "!bang": "", "trail": "", "keep ": "", "keep": "",
			}},
			want: map[string]bool{"#hash": true, "!bang": true, "trail": true, "keep ": true, "keep": false},
		},
		{
			name: "nested .gitignore is relative to its directory and wins",
			fx: fixture{files: map[string]string{
				".gitignore":     "*.gen\n",
				"sub/.gitignore": "/only.txt\n!keep.gen\n",
				"only.txt":       "", "sub/only.txt": "", "sub/deeper/only.txt": "", "sub/keep.gen": "", "sub/x.gen": "", "keep.gen": "",
			}},
			want: map[string]bool{"only.txt": false, "sub/only.txt": true, "sub/deeper/only.txt": false, "sub/keep.gen": false, "sub/x.gen": true, "keep.gen": true},
		},
		{
			name: "nothing inside an excluded directory can be re-included",
			fx: fixture{files: map[string]string{
				".gitignore":        "secret/\n!secret/ok.txt\n",
				"secret/ok.txt":     "",
				"secret/sub/a":      "",
				"secret/.gitignore": "!*\n",
			}},
			want: map[string]bool{"secret": true, "secret/ok.txt": true, "secret/sub": true, "secret/sub/a": true},
		},
		{
			name: "excluding a directory's contents allows re-inclusion",
			fx: fixture{files: map[string]string{
				".gitignore": "cache/*\n!cache/keep\n",
				"cache/keep": "", "cache/drop": "",
			}},
			want: map[string]bool{"cache": false, "cache/keep": false, "cache/drop": true},
		},
		{
			name: "info/exclude and the global file rank below .gitignore",
			fx: fixture{
				files: map[string]string{
					".gitignore": "!a.tmp\n",
					"a.tmp":      "", "b.tmp": "", "c.glob": "", "d.glob": "",
				},
				exclude: "*.tmp\n!d.glob\n",
				global:  "*.glob\n",
			},
			want: map[string]bool{"a.tmp": false, "b.tmp": true, "c.glob": true, "d.glob": false},
		},
		{
			name: "case-sensitive",
			fx: fixture{files: map[string]string{
				".gitignore": "readme\n",
				"readme":     "", "README": "",
			}},
			want: map[string]bool{"readme": true, "README": false},
		},
		{
			name: "CRLF line ends and a byte order mark",
			fx: fixture{files: map[string]string{
				".gitignore": "\xef\xbb\xbfone\r\ntwo \r\n",
				"one":        "", "two": "",
			}},
			want: map[string]bool{"one": true, "two": true},
		},
		{
			name: "the .git directory is never ignored",
			fx: fixture{files: map[string]string{
				".gitignore": "*\n!.gitignore\n",
				"x":          "",
			}},
			want: map[string]bool{".git": false, ".git/HEAD": false, "x": true, ".gitignore": false},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, opts := tc.fx.build(t)
			m := New(root, opts)
			defer m.Close()
			var paths []string
			for p := range tc.want {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				isDir := strings.HasPrefix(p, ".git/") || isDirOnDisk(t, root, p)
				if got := m.Ignored(p, isDir); got != tc.want[p] {
					src, line, pat, _ := m.Explain(p, isDir)
					t.Errorf("Ignored(%q) = %v, want %v (decided by %s:%d %q)", p, got, tc.want[p], src, line, pat)
				}
			}
			// The expectations are git's own: check them with git too.
			var nonGit []string
			for _, p := range paths {
				if p != ".git" && !strings.HasPrefix(p, ".git/") {
					nonGit = append(nonGit, p)
				}
			}
			if git := gitSays(t, root, opts, nonGit); git != nil {
				for _, p := range nonGit {
					if git[p] != tc.want[p] {
						t.Errorf("git check-ignore says %q ignored=%v; the table says %v", p, git[p], tc.want[p])
					}
				}
			}
		})
	}
}

func TestMatchAssumesParentsChecked(t *testing.T) {
	root, opts := fixture{files: map[string]string{
		".gitignore": "dir/\n!dir/f\n", "dir/f": "", "dir/g": "",
	}}.build(t)
	m := New(root, opts)
	defer m.Close()
	if !m.Ignored("dir/f", false) {
		t.Error("Ignored(dir/f) = false; the excluded parent should win")
	}
	if m.Match("dir/f", false) {
		t.Error("Match(dir/f) = true; it only looks at the last component's rules, where !dir/f re-includes")
	}
	if !m.Match("dir", true) {
		t.Error("Match(dir) = false")
	}
}

func TestSymlinkedGitignoreIsSkipped(t *testing.T) {
	root, opts := fixture{files: map[string]string{
		"real-rules": "*.txt\n", "a.txt": "", "sub/b.txt": "", "sub/rules": "*.txt\n",
	}}.build(t)
	if err := os.Symlink("real-rules", filepath.Join(root, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("rules", filepath.Join(root, "sub", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	m := New(root, opts)
	defer m.Close()
	for _, p := range []string{"a.txt", "sub/b.txt"} {
		if m.Ignored(p, false) {
			t.Errorf("Ignored(%q) = true through a symlinked .gitignore", p)
		}
	}
	if git := gitSays(t, root, opts, []string{"a.txt", "sub/b.txt"}); git != nil && (git["a.txt"] || git["sub/b.txt"]) {
		t.Errorf("git honours a symlinked .gitignore here: %v", git)
	}
}

func TestGitignoreFIFOAndDirectoryAreSkipped(t *testing.T) {
	root, opts := fixture{files: map[string]string{"a/.gitignore/x": "", "a/f": "", "b/f": ""}}.build(t)
	if err := syscall.Mkfifo(filepath.Join(root, "b", ".gitignore"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	m := New(root, opts)
	defer m.Close()
	if m.Ignored("a/f", false) || m.Ignored("b/f", false) {
		t.Error("a directory or FIFO named .gitignore gave rules")
	}
	if errs := m.Errors(); len(errs) != 0 {
		t.Errorf("Errors() = %v", errs)
	}
}

func TestGlobalExcludesDiscovery(t *testing.T) {
	type files map[string]string // relative to the fake home
	cases := []struct {
		name  string
		xdg   bool // set Options.XDGConfigHome to home/xdg
		files files
		want  string // the global file, relative to home; "" none
	}{
		{"default ~/.config/git/ignore", false, files{".config/git/ignore": "*.g\n"}, ".config/git/ignore"},
		{"XDG_CONFIG_HOME/git/ignore", true, files{"xdg/git/ignore": "*.g\n"}, "xdg/git/ignore"},
		{"~/.gitconfig core.excludesFile with ~", false, files{".gitconfig": "[core]\n\texcludesFile = ~/my ignore\n", "my ignore": ""}, "my ignore"},
		{"quoted, escaped and commented value", false, files{".gitconfig": "[CORE]\n  ExcludesFile = \"~/a\\\"b\" ; why\n"}, "a\"b"},
		{"~/.gitconfig wins over the XDG config", true, files{"xdg/git/config": "[core]\nexcludesfile=/from/xdg\n", ".gitconfig": "[core]\nexcludesfile=~/from-home\n"}, "from-home"},
		{"XDG config alone", true, files{"xdg/git/config": "[core]\nexcludesfile=~/from-xdg\n"}, "from-xdg"},
		{"subsection does not count", false, files{".gitconfig": "[core \"x\"]\nexcludesfile=/nope\n[core.y]\nexcludesfile=/nope\n"}, ".config/git/ignore"},
		{"set to nothing means none", false, files{".gitconfig": "[core]\nexcludesfile =\n"}, ""},
		{"continuation line", false, files{".gitconfig": "[core]\nexcludesfile = ~/con\\\ntinued\n"}, "continued"},
		{"section and key on one line", false, files{".gitconfig": "[core] excludesfile = ~/one-line\n"}, "one-line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for p, c := range tc.files {
				full := filepath.Join(home, p)
				mustMkdir(t, filepath.Dir(full))
				if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			opts := Options{Home: home, XDGConfigHome: filepath.Join(home, "no-xdg")}
			if tc.xdg {
				opts.XDGConfigHome = filepath.Join(home, "xdg")
			}
			if !tc.xdg {
				// Also the default location when XDG is unset.
				t.Setenv("XDG_CONFIG_HOME", "")
				opts.XDGConfigHome = ""
			}
			m := &Matcher{root: t.TempDir(), opts: opts}
			got, err := m.globalExcludesPath()
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tc.want != "" {
				want = filepath.Join(home, tc.want)
			}
			if got != want {
				t.Errorf("global excludes = %q, want %q", got, want)
			}
		})
	}
}

func TestGlobalExcludesOptions(t *testing.T) {
	root, opts := fixture{files: map[string]string{"x.g": ""}}.build(t)
	home := opts.Home
	mustMkdir(t, filepath.Join(home, ".config", "git"))
	if err := os.WriteFile(filepath.Join(home, ".config", "git", "ignore"), []byte("*.g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.XDGConfigHome = ""
	t.Setenv("XDG_CONFIG_HOME", "")
	opts.GlobalExcludes = "-"
	if New(root, opts).Ignored("x.g", false) {
		t.Error(`GlobalExcludes "-" still read the default file`)
	}
	opts.GlobalExcludes = ""
	if !New(root, opts).Ignored("x.g", false) {
		t.Error(`GlobalExcludes "" did not find ~/.config/git/ignore`)
	}
	opts.GlobalExcludes = "~/.config/git/ignore"
	if !New(root, opts).Ignored("x.g", false) {
		t.Error("GlobalExcludes with ~ was not expanded")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []string{
		"[core]\nexcludesfile\n",         // boolean: git dies
		"[core\nexcludesfile = x\n",      // bad header
		"[core]\nexcludesfile = \"x\n",   // unterminated quote
		"[core]\nexcludesfile = a\\qb\n", // unknown escape
	} {
		if _, _, err := configValue([]byte(cfg), "core.excludesfile"); err == nil {
			t.Errorf("configValue(%q) gave no error", cfg)
		}
	}
}

func TestLinkedWorktreeInfoExclude(t *testing.T) {
	base := t.TempDir()
	common := filepath.Join(base, "main.git")
	gitdir := filepath.Join(common, "worktrees", "wt")
	mustMkdir(t, gitdir)
	mustMkdir(t, filepath.Join(common, "info"))
	if err := os.WriteFile(filepath.Join(common, "info", "exclude"), []byte("*.x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "wt")
	mustMkdir(t, root)
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, com, ok := GitDir(root)
	if !ok || dir != gitdir || com != common {
		t.Fatalf("GitDir = %q, %q, %v; want %q, %q", dir, com, ok, gitdir, common)
	}
	m := New(root, Options{GlobalExcludes: "-"})
	defer m.Close()
	if !m.Ignored("a.x", false) {
		t.Error("info/exclude of the common git dir not applied")
	}
}

func TestReloadAndErrors(t *testing.T) {
	root, opts := fixture{files: map[string]string{".gitignore": "a\n", "a": "", "b": ""}}.build(t)
	m := New(root, opts)
	defer m.Close()
	if !m.Ignored("a", false) || m.Ignored("b", false) {
		t.Fatal("initial rules wrong")
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !m.Ignored("a", false) {
		t.Error("rules changed before Reload; they should be cached")
	}
	m.Reload()
	if m.Ignored("a", false) || !m.Ignored("b", false) {
		t.Error("Reload did not pick up the edit")
	}
	if os.Getuid() != 0 {
		if err := os.WriteFile(filepath.Join(root, "sub", ".gitignore"), nil, 0o644); err == nil {
			t.Fatal("expected no sub dir")
		}
		mustMkdir(t, filepath.Join(root, "sub"))
		if err := os.WriteFile(filepath.Join(root, "sub", ".gitignore"), []byte("x\n"), 0o000); err != nil {
			t.Fatal(err)
		}
		m.Ignored("sub/x", false)
		if errs := m.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "permission denied") {
			t.Errorf("Errors() = %v, want one permission error", errs)
		}
	}
}

func TestPathsNeverIgnored(t *testing.T) {
	root, opts := fixture{files: map[string]string{".gitignore": "*\n"}}.build(t)
	m := New(root, opts)
	defer m.Close()
	for _, p := range []string{"", ".", "..", "../x", "/abs", ".git", ".git/config", "a/.git", "a/.git/x"} {
		if m.Ignored(p, false) {
			t.Errorf("Ignored(%q) = true", p)
		}
	}
	if !m.Ignored("./a//b/", false) {
		t.Error("an unclean path was not cleaned")
	}
}

func TestConcurrentUse(t *testing.T) {
	files := map[string]string{".gitignore": "*.o\n"}
	for i := range 20 {
		files[fmt.Sprintf("d%d/.gitignore", i)] = fmt.Sprintf("f%d\n", i)
		files[fmt.Sprintf("d%d/f%d", i, i)] = ""
	}
	root, opts := fixture{files: files}.build(t)
	m := New(root, opts)
	defer m.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				p := fmt.Sprintf("d%d/f%d", (i+g)%20, (i+g)%20)
				if !m.Ignored(p, false) || !m.Match(p, false) || m.Ignored(p+"x", false) {
					t.Errorf("wrong answer for %s", p)
				}
				if g == 0 && i == 10 {
					m.Reload()
				}
			}
		}()
	}
	wg.Wait()
}

func TestParseTrailingSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"a":        "a",
		"a  ":      "a",
		"a\\ ":     "a\\ ",
		"a\\  ":    "a\\ ",
		"a \\ ":    "a \\ ",
		"a \\":     "a \\",
		"a\t":      "a\t",
		"   ":      "",
		"a\\\\  ":  "a\\\\",
		"\\ \\ \\": "\\ \\ \\",
	} {
		if got := trimTrailingSpaces(in); got != want {
			t.Errorf("trimTrailingSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFileLines(t *testing.T) {
	l := parseFile([]byte("\xef\xbb\xbf# c\n\n!a/\r\nb\x00c\n\\#d"), "sub", "sub/.gitignore")
	var got []string
	for _, r := range l.rules {
		got = append(got, fmt.Sprintf("%d:%s", r.line, r.String()))
	}
	if want := []string{"3:!a/", "4:b", "5:\\#d"}; !bytes.Equal([]byte(strings.Join(got, ",")), []byte(strings.Join(want, ","))) {
		t.Errorf("rules = %v, want %v", got, want)
	}
}
