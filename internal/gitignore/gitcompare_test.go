package gitignore

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The proof that Matcher is git: random trees with random ignore files at
// several levels, compared path by path with `git check-ignore` on the same
// tree. Reproduce a failure with -gitignore.seed and -gitignore.trees.

var (
	compareSeed  = flag.Uint64("gitignore.seed", 20260817, "seed for TestMatchesGitCheckIgnore")
	compareTrees = flag.Int("gitignore.trees", 300, "number of random trees for TestMatchesGitCheckIgnore")
)

// names used for files and directories; several need escaping in patterns.
var treeNames = []string{
	"a", "b", "c", "ab", "abc", "ba", "foo", "bar", "foo.txt", "bar.o", "x.log",
	"A", "Foo", "doc", "build", "a.b", "[x]", "#h", "!b", "sp ", "a b", "fooxbar",
	"foo-bar", "x*", "q?", "b\\s", "d1", "9", ".hidden", "é", "foo.o", "]z", "\\z",
}

type genTree struct {
	isDir   map[string]bool
	order   []string
	ignores map[string]string // directory ("" root) → .gitignore content
	exclude string            // .git/info/exclude
	global  string            // global excludes content
	mode    int               // how the global file is found (see globalModes)
}

var globalModes = []string{"-c core.excludesFile", "~/.gitconfig core.excludesFile", "$XDG_CONFIG_HOME/git/ignore", "none"}

func (g *genTree) add(p string, dir bool) {
	comps := strings.Split(p, "/")
	for i := 1; i < len(comps); i++ {
		if d, ok := g.isDir[strings.Join(comps[:i], "/")]; ok && !d {
			return
		}
	}
	if _, ok := g.isDir[p]; ok {
		return
	}
	for i := 1; i < len(comps); i++ {
		d := strings.Join(comps[:i], "/")
		if _, ok := g.isDir[d]; !ok {
			g.isDir[d] = true
			g.order = append(g.order, d)
		}
	}
	g.isDir[p] = dir
	g.order = append(g.order, p)
}

func (g *genTree) dirs() []string {
	out := []string{""}
	for _, p := range g.order {
		if g.isDir[p] {
			out = append(out, p)
		}
	}
	return out
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// escapeLiteral writes name as a pattern that matches exactly it.
func escapeLiteral(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '*' || c == '?' || c == '[' || c == '\\':
			b.WriteByte('\\')
		case i == 0 && (c == '#' || c == '!'):
			b.WriteByte('\\')
		case c == ' ' && i == len(name)-1:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// globComponent turns a name into a glob that usually still matches it.
func globComponent(r *rand.Rand, name string) string {
	lit := escapeLiteral(name)
	switch r.IntN(14) {
	case 0:
		return "*"
	case 1:
		return "?"
	case 2:
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			return "*" + escapeLiteral(name[i:])
		}
		return "*" + lit[len(lit)/2:]
	case 3:
		return lit[:len(lit)/2] + "*"
	case 4:
		if len(name) > 1 && isPlain(name[0]) {
			return "?" + escapeLiteral(name[1:])
		}
		return "?*"
	case 5:
		if isPlain(name[0]) {
			return "[" + string(name[0]) + "xy]" + escapeLiteral(name[1:])
		}
		return "[!a]*"
	case 6:
		return pick(r, []string{"[a-c]*", "[!a-c]*", "[^f]*", "[[:alpha:]]*", "[[:digit:]]", "[[:upper:]]*", "[[:punct:]]*", "[[:space:]]*", "*[[:space:]]", "[]x]*", "[a-]*", "[[:bogus:]]*", "[![:bogus:]]*", "[\\\\]*", "[\\]]*", "[ab", "*[", "[\\]]*", "[[:alpha:][:digit:]]*", "[[]*", "[[:]*"})
	case 7:
		return "*" + lit + "*"
	case 8:
		return lit + "**"
	case 9:
		return "**" + lit
	case 10:
		return "*o*"
	case 11, 12: // a range that starts or ends exactly at the first byte
		c := name[0]
		rest := escapeLiteral(name[1:])
		switch r.IntN(4) {
		case 0:
			return fmt.Sprintf("[%c-~]", c) + rest
		case 1:
			return fmt.Sprintf("[ -%c]", c) + rest
		case 2:
			return fmt.Sprintf("[!%c-~]", c) + rest
		}
		return fmt.Sprintf("[\\%c-\\%c]", c, c) + rest
	}
	return lit
}

func isPlain(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// genPattern draws one pattern for the ignore file of dir.
func genPattern(r *rand.Rand, g *genTree, dir string) string {
	// Paths below dir, relative to it.
	var below []string
	for _, p := range g.order {
		if dir == "" {
			below = append(below, p)
		} else if strings.HasPrefix(p, dir+"/") {
			below = append(below, p[len(dir)+1:])
		}
	}
	name := pick(r, treeNames)
	if len(below) > 0 && r.IntN(4) > 0 {
		name = pick(r, below)
	}
	comps := strings.Split(name, "/")
	var p string
	switch r.IntN(14) {
	case 0, 1, 2: // one component, matched at any depth
		c := comps[len(comps)-1]
		if r.IntN(2) == 0 {
			p = escapeLiteral(c)
		} else {
			p = globComponent(r, c)
		}
	case 3, 4, 5: // a path, anchored
		parts := make([]string, len(comps))
		for i, c := range comps {
			switch r.IntN(6) {
			case 0:
				parts[i] = globComponent(r, c)
			case 1:
				parts[i] = "**"
			default:
				parts[i] = escapeLiteral(c)
			}
		}
		p = strings.Join(parts, "/")
		if r.IntN(4) == 0 {
			p = strings.ReplaceAll(p, "**/", "**\\/")
		}
		if r.IntN(3) == 0 {
			p = "/" + p
		}
	case 6: // leading, trailing or middle **
		c := escapeLiteral(comps[len(comps)-1])
		p = pick(r, []string{"**/" + c, c + "/**", escapeLiteral(comps[0]) + "/**/" + c, "**/" + escapeLiteral(comps[0]) + "/**", "/**/" + c, "**/*", "**", "*/" + c, "*/*", "/*", "*", escapeLiteral(comps[0]) + "/**\\/" + c, "**\\/" + c})
	case 7: // specials
		p = pick(r, []string{"\\#h", "#h", "\\!b", "!b", "sp\\ ", "sp ", "sp  \\ ", "a\\", "\\", "/", "//", "!", "**/", "foo**bar", "foo**/bar", "foo/**bar", "fo*/**/b*", "a/**/**/b", "a/*/", "*.o", "!*.o", "*.txt", "\\a", "a\\*", "[x]", "\\[x\\]", "a b", "a\\ b", ".hidden", "*~", "\xef\xbb\xbfa", "abc/", "a/b/", "/a/", "d1/**/", "**\\/b", "a/**\\/b", "foo \\", "sp \\", "a \\", "*\\", "\\z", "]z", "[]]z", "a\x00b", "fo\x00o", "\x00a"})
	case 8: // re-include something under a directory excluded elsewhere
		p = "!" + escapeLiteral(name)
	case 10, 11: // try to match a '/' with something other than '/' or a whole-component **
		if len(comps) < 2 {
			p = escapeLiteral(name) + "[/]*"
			break
		}
		lits := make([]string, len(comps))
		for i, c := range comps {
			lits[i] = escapeLiteral(c)
		}
		k := r.IntN(len(comps) - 1)
		glue := pick(r, []string{"?", "[!x]", "[^.]", "*", "[/]", "[[:punct:]]", "**", "?**", "**?", "[!x]**", "*/**", "/**/", "/**\\/"})
		p = strings.Join(lits[:k+1], "/") + glue + strings.Join(lits[k+1:], "/")
	case 12: // a ** glued to other characters, after a literal prefix git strips first
		c0 := escapeLiteral(comps[0])
		cut := c0[:r.IntN(len(c0)+1)]
		last := escapeLiteral(comps[len(comps)-1])
		p = pick(r, []string{cut + "**/" + last, cut + "**", "/" + cut + "**/" + last, cut + "**" + last, "?" + cut + "**/" + last, "*" + cut + "**/" + last, cut + "*/**/" + last})
	case 13: // a glob before a glued ** (no literal prefix to strip)
		c := comps[0]
		rest := ""
		if len(c) > 1 {
			rest = escapeLiteral(c[1:])
		}
		p = pick(r, []string{"?", "*", "[!/]", "[a-z]", "[[:alnum:]]"}) + rest + "**"
		if len(comps) > 1 {
			p += "/" + escapeLiteral(comps[len(comps)-1])
		}
	default:
		p = escapeLiteral(name)
		if r.IntN(2) == 0 {
			p = "*/" + p
		}
	}
	if r.IntN(4) == 0 && !strings.HasPrefix(p, "!") {
		p = "!" + p
	}
	if r.IntN(5) == 0 && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	if r.IntN(15) == 0 {
		p += pick(r, []string{" ", "  ", "\t", "\\ ", " \\ "})
	}
	return p
}

func genIgnoreFile(r *rand.Rand, g *genTree, dir string, n int) string {
	var lines []string
	for range n {
		switch r.IntN(12) {
		case 0:
			lines = append(lines, "# comment "+pick(r, treeNames))
		case 1:
			lines = append(lines, "")
		case 2:
			// Exclude a directory, then try to re-include a path below it.
			var dirs []string
			for _, d := range g.dirs() {
				if d != "" && (dir == "" || strings.HasPrefix(d, dir+"/")) {
					dirs = append(dirs, d)
				}
			}
			if len(dirs) == 0 {
				continue
			}
			d := pick(r, dirs)
			rel := d
			if dir != "" {
				rel = d[len(dir)+1:]
			}
			lines = append(lines, escapeLiteral(rel)+pick(r, []string{"", "/", "/*", "/**"}))
			for _, p := range g.order {
				if strings.HasPrefix(p, d+"/") && r.IntN(2) == 0 {
					lines = append(lines, "!"+escapeLiteral(p[len(d)+1:]))
					if r.IntN(2) == 0 {
						lines = append(lines, "!/"+escapeLiteral(p[len(dir):][1:]))
					}
					break
				}
			}
		default:
			lines = append(lines, genPattern(r, g, dir))
		}
	}
	sep := "\n"
	if r.IntN(8) == 0 {
		sep = "\r\n"
	}
	s := strings.Join(lines, sep)
	if r.IntN(2) == 0 {
		s += sep
	}
	if r.IntN(20) == 0 {
		s = "\xef\xbb\xbf" + s
	}
	return s
}

func genRandomTree(r *rand.Rand) *genTree {
	g := &genTree{isDir: map[string]bool{}, ignores: map[string]string{}}
	target := 5 + r.IntN(36)
	for tries := 0; len(g.order) < target && tries < 200; tries++ {
		depth := 1 + r.IntN(4)
		comps := make([]string, depth)
		for i := range comps {
			comps[i] = pick(r, treeNames)
		}
		g.add(strings.Join(comps, "/"), r.IntN(6) == 0)
	}
	for _, d := range g.dirs() {
		if (d == "" && r.IntN(5) > 0) || r.IntN(3) == 0 {
			g.ignores[d] = genIgnoreFile(r, g, d, 1+r.IntN(8))
		}
	}
	if r.IntN(2) == 0 {
		g.exclude = genIgnoreFile(r, g, "", 1+r.IntN(4))
	}
	g.mode = r.IntN(len(globalModes))
	if g.mode != 3 {
		g.global = genIgnoreFile(r, g, "", 1+r.IntN(4))
	}
	return g
}

func (g *genTree) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tree:\n")
	paths := append([]string(nil), g.order...)
	sort.Strings(paths)
	for _, p := range paths {
		kind := "file"
		if g.isDir[p] {
			kind = "dir "
		}
		fmt.Fprintf(&b, "  %s %q\n", kind, p)
	}
	dirs := make([]string, 0, len(g.ignores))
	for d := range g.ignores {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		fmt.Fprintf(&b, "%s:\n", filepath.Join(d, ".gitignore"))
		for _, l := range strings.SplitAfter(g.ignores[d], "\n") {
			fmt.Fprintf(&b, "  %q\n", l)
		}
	}
	fmt.Fprintf(&b, ".git/info/exclude:\n")
	for _, l := range strings.SplitAfter(g.exclude, "\n") {
		fmt.Fprintf(&b, "  %q\n", l)
	}
	fmt.Fprintf(&b, "global excludes (%s):\n", globalModes[g.mode])
	for _, l := range strings.SplitAfter(g.global, "\n") {
		fmt.Fprintf(&b, "  %q\n", l)
	}
	return b.String()
}

type gitAnswer struct {
	line    int
	pattern string
}

func (a gitAnswer) ignored() bool { return a.pattern != "" && a.pattern[0] != '!' }

// materialise writes the tree, runs git and returns git's answer per path
// and the Options that describe the same global excludes set-up.
func (g *genTree) materialise(gitBin, base string) (map[string]gitAnswer, string, Options, error) {
	repo := filepath.Join(base, "repo")
	home := filepath.Join(base, "home")
	xdg := filepath.Join(base, "xdg")
	for _, d := range []string{repo, home, xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, "", Options{}, err
		}
	}
	for _, p := range g.order {
		full := filepath.Join(repo, filepath.FromSlash(p))
		var err error
		if g.isDir[p] {
			err = os.MkdirAll(full, 0o755)
		} else {
			err = os.WriteFile(full, []byte("x"), 0o644)
		}
		if err != nil {
			return nil, "", Options{}, err
		}
	}
	for d, content := range g.ignores {
		if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(d), ".gitignore"), []byte(content), 0o644); err != nil {
			return nil, "", Options{}, err
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + xdg,
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
	}
	cmd := exec.Command(gitBin, "init", "-q", "--template=", repo)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, "", Options{}, fmt.Errorf("git init: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git", "info"), 0o755); err != nil {
		return nil, "", Options{}, err
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte(g.exclude), 0o644); err != nil {
		return nil, "", Options{}, err
	}
	opts := Options{Home: home, XDGConfigHome: xdg}
	args := []string{"-C", repo}
	globalFile := filepath.Join(home, "global ignore")
	switch g.mode {
	case 0:
		args = append(args, "-c", "core.excludesFile="+globalFile)
		opts.GlobalExcludes = globalFile
	case 1:
		cfg := "[user]\n\tname = x ; comment\n[Core]\n  excludesFile = \"~/global ignore\" # the file\n[core \"sub\"]\n\texcludesfile = /nowhere\n"
		if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
			return nil, "", Options{}, err
		}
	case 2:
		globalFile = filepath.Join(xdg, "git", "ignore")
		if err := os.MkdirAll(filepath.Dir(globalFile), 0o755); err != nil {
			return nil, "", Options{}, err
		}
	}
	if g.mode != 3 {
		if err := os.WriteFile(globalFile, []byte(g.global), 0o644); err != nil {
			return nil, "", Options{}, err
		}
	}
	args = append(args, "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
	var in bytes.Buffer
	paths := append(append([]string(nil), g.order...), gitignorePaths(g)...)
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	cmd = exec.Command(gitBin, args...)
	cmd.Env = env
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, "", Options{}, fmt.Errorf("git check-ignore: %v\n%s\n%s", err, stderr.Bytes(), g.describe())
		}
	}
	fields := strings.Split(string(out), "\x00")
	if len(fields) != 4*len(paths)+1 {
		return nil, "", Options{}, fmt.Errorf("git check-ignore printed %d fields for %d paths:\n%q\n%s", len(fields), len(paths), out, stderr.Bytes())
	}
	answers := map[string]gitAnswer{}
	for i := range paths {
		f := fields[4*i : 4*i+4]
		line, _ := strconv.Atoi(f[1])
		answers[f[3]] = gitAnswer{line: line, pattern: f[2]}
	}
	return answers, repo, opts, nil
}

func gitignorePaths(g *genTree) []string {
	var out []string
	for d := range g.ignores {
		if d == "" {
			out = append(out, ".gitignore")
		} else {
			out = append(out, d+"/.gitignore")
		}
	}
	sort.Strings(out)
	return out
}

func TestMatchesGitCheckIgnore(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	n := *compareTrees
	if testing.Short() {
		n = min(n, 60)
	}
	base := t.TempDir()
	var (
		mu         sync.Mutex
		failures   []string
		checked    int
		ignoredCnt int
	)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r := rand.New(rand.NewPCG(*compareSeed, uint64(i)))
				g := genRandomTree(r)
				answers, repo, opts, err := g.materialise(gitBin, filepath.Join(base, strconv.Itoa(i)))
				if err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("tree %d: %v", i, err))
					mu.Unlock()
					continue
				}
				m := New(repo, opts)
				var local []string
				nIgnored := 0
				for p, want := range answers {
					isDir := g.isDir[p]
					got := m.Ignored(p, isDir)
					if want.ignored() {
						nIgnored++
					}
					_, line, pat, ok := m.Explain(p, isDir)
					if got != want.ignored() || (ok && (pat != want.pattern || line != want.line)) || (!ok && want.pattern != "") {
						local = append(local, fmt.Sprintf("tree %d (seed %d): path %q (dir=%v): git says ignored=%v by %q (line %d); Matcher says ignored=%v by %q (line %d)\n%s",
							i, *compareSeed, p, isDir, want.ignored(), want.pattern, want.line, got, pat, line, g.describe()))
					}
					// Match must agree wherever no parent is ignored.
					parentIgnored := false
					for d := p; strings.Contains(d, "/"); {
						d = d[:strings.LastIndexByte(d, '/')]
						if m.Ignored(d, true) {
							parentIgnored = true
						}
					}
					if !parentIgnored && m.Match(p, isDir) != got {
						local = append(local, fmt.Sprintf("tree %d: Match(%q) = %v but Ignored = %v with no parent ignored\n%s", i, p, !got, got, g.describe()))
					}
				}
				if errs := m.Errors(); len(errs) > 0 {
					local = append(local, fmt.Sprintf("tree %d: Errors() = %v", i, errs))
				}
				m.Close()
				os.RemoveAll(filepath.Join(base, strconv.Itoa(i)))
				mu.Lock()
				failures = append(failures, local...)
				checked += len(answers)
				ignoredCnt += nIgnored
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i, f := range failures {
		if i == 5 {
			t.Errorf("… and %d more mismatches", len(failures)-5)
			break
		}
		t.Error(f)
	}
	t.Logf("%d trees, %d paths compared with git check-ignore (%d ignored), %d mismatches", n, checked, ignoredCnt, len(failures))
	if ignoredCnt == 0 || ignoredCnt == checked {
		t.Errorf("degenerate sample: %d of %d paths ignored", ignoredCnt, checked)
	}
}
