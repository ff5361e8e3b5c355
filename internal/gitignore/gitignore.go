// Package gitignore answers "would git ignore this path?" for one repository
// root, with git's own semantics and without running git: .gitignore files at
// every level (a nested file's patterns are relative to its directory),
// $GIT_DIR/info/exclude and the user's global excludes file; negation,
// directory-only and anchored patterns, `**`, `?`, bracket expressions,
// escapes, comments and trailing-space rules; and the rule that nothing
// inside an excluded directory can be re-included. Matching is
// case-sensitive (core.ignoreCase=false).
//
// Precedence is git's: the deepest .gitignore first, up to the root's, then
// info/exclude, then the global file; within one file the last matching line
// wins.
//
// .gitignore files are read through an os.Root opened at the repository
// root, so a link can never lead the reader out of it, and a .gitignore that
// is itself a symbolic link (or anything but a regular file) is skipped, as
// git does. Each directory's file is read once, lazily, and cached: call
// Reload (or build a new Matcher) to pick up edits. The .git directory is
// never reported as ignored.
//
// The package is shared by the host and the builtin plugin and imports
// neither. It never runs git and never writes anything.
package gitignore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// maxFileSize is git's limit for a pattern file; larger files are skipped.
const maxFileSize = 100 << 20

// Options says where the files outside the work tree are.
type Options struct {
	// GlobalExcludes is the global excludes file: "" discovers it as git
	// does (core.excludesFile from $XDG_CONFIG_HOME/git/config, then
	// ~/.gitconfig, the later winning; otherwise
	// $XDG_CONFIG_HOME/git/ignore, by default ~/.config/git/ignore); "-"
	// means none; anything else is the file (a leading ~ is expanded,
	// a relative path is taken from the root).
	GlobalExcludes string
	// Home is the user's home directory: "" means os.UserHomeDir.
	Home string
	// XDGConfigHome overrides $XDG_CONFIG_HOME: "" means the environment
	// variable, and when that is empty too, Home/.config.
	XDGConfigHome string
}

// Matcher holds the ignore rules of one repository. It is safe for
// concurrent use.
type Matcher struct {
	root string
	opts Options
	fsys *os.Root // nil when the root could not be opened

	mu     sync.RWMutex
	dirs   map[string]*list // directory (relative, "" for the root) → its .gitignore (nil: none)
	repo   *list            // info/exclude
	global *list
	errs   []error
}

// New returns a Matcher for the repository whose work tree is root (an
// absolute path). It reads info/exclude and the global excludes file now and
// each .gitignore when first needed. Problems reading any of them (other
// than the file not existing) are kept for Errors; the file then counts as
// empty, as it does for git.
func New(root string, opts Options) *Matcher {
	m := &Matcher{root: root, opts: opts, dirs: map[string]*list{}}
	r, err := os.OpenRoot(root)
	if err != nil {
		m.errs = append(m.errs, fmt.Errorf("gitignore: opening the repository root: %w", err))
	} else {
		m.fsys = r
	}
	m.repo, m.global = m.loadStatic()
	return m
}

// Close releases the root directory handle.
func (m *Matcher) Close() error {
	if m.fsys == nil {
		return nil
	}
	return m.fsys.Close()
}

// Root returns the work tree the Matcher was built for.
func (m *Matcher) Root() string { return m.root }

// Reload forgets every cached .gitignore and reads info/exclude and the
// global excludes file again.
func (m *Matcher) Reload() {
	repo, global := m.loadStatic()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dirs = map[string]*list{}
	m.repo, m.global = repo, global
	m.errs = nil
}

// Errors returns the problems met so far reading ignore files (a file that
// does not exist is not a problem).
func (m *Matcher) Errors() []error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]error(nil), m.errs...)
}

// Ignored reports whether git ignores rel, a slash-separated path relative
// to the root ("a/b.txt"), checking every parent directory first: a path
// inside an ignored directory is ignored whatever later rules say. isDir
// says whether rel is a directory; pass what Lstat says (a symbolic link to
// a directory is not a directory to git). The root itself, paths that leave
// it, and .git and everything in it are never ignored.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	m2, ok := m.explain(rel, isDir, true)
	return ok && m2 != nil && m2.flags&flagNegative == 0
}

// Match is Ignored for walkers that descend only into directories they know
// are not ignored: it assumes no parent of rel is ignored and applies the
// rules of the ancestors' .gitignore files to rel alone.
func (m *Matcher) Match(rel string, isDir bool) bool {
	m2, ok := m.explain(rel, isDir, false)
	return ok && m2 != nil && m2.flags&flagNegative == 0
}

// Explain says which rule decides rel, as git check-ignore -v would:
// source file, line number and pattern (with its '!' and trailing '/').
// ok is false when no rule matches. A negated pattern (starting with '!')
// means the path is not ignored.
func (m *Matcher) Explain(rel string, isDir bool) (source string, line int, pattern string, ok bool) {
	r, _ := m.explain(rel, isDir, true)
	if r == nil {
		return "", 0, "", false
	}
	return r.src, r.line, r.String(), true
}

func (m *Matcher) explain(rel string, isDir, parents bool) (*rule, bool) {
	rel, ok := cleanRel(rel)
	if !ok {
		return nil, false
	}
	m.mu.RLock()
	fixed := [2]*list{m.repo, m.global}
	m.mu.RUnlock()
	var stack [16]*list
	lists := append(stack[:0], m.dir(""))
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		d := rel[:i]
		if parents {
			if r := decide(lists, fixed, d, d[strings.LastIndexByte(d, '/')+1:], true); r != nil && r.flags&flagNegative == 0 {
				return r, true
			}
		}
		lists = append(lists, m.dir(d))
	}
	return decide(lists, fixed, rel, rel[strings.LastIndexByte(rel, '/')+1:], isDir), true
}

// decide returns the rule that decides path: the last matching rule of the
// deepest .gitignore that has one, then of info/exclude, then of the global
// file (fixed holds those two).
func decide(lists []*list, fixed [2]*list, p, basename string, isDir bool) *rule {
	for i := len(lists) - 1; i >= 0; i-- {
		if r := lists[i].last(p, basename, isDir); r != nil {
			return r
		}
	}
	for _, l := range fixed {
		if r := l.last(p, basename, isDir); r != nil {
			return r
		}
	}
	return nil
}

func (l *list) last(p, basename string, isDir bool) *rule {
	if l == nil {
		return nil
	}
	for i := len(l.rules) - 1; i >= 0; i-- {
		if l.rules[i].matches(p, basename, isDir) {
			return &l.rules[i]
		}
	}
	return nil
}

// cleanRel normalises rel and rejects what is never ignored: the root,
// paths leaving it, absolute paths, and .git with its contents.
func cleanRel(rel string) (string, bool) {
	rel = path.Clean(rel)
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
		return "", false
	}
	if rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.HasSuffix(rel, "/.git") || strings.Contains(rel, "/.git/") {
		return "", false
	}
	return rel, true
}

// dir returns the rules of dir's .gitignore (nil when it has none), reading
// the file the first time.
func (m *Matcher) dir(dir string) *list {
	m.mu.RLock()
	l, ok := m.dirs[dir]
	m.mu.RUnlock()
	if ok {
		return l
	}
	l, err := m.readGitignore(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.dirs[dir]; ok {
		return prev
	}
	m.dirs[dir] = l
	if err != nil {
		m.errs = append(m.errs, err)
	}
	return l
}

func (m *Matcher) readGitignore(dir string) (*list, error) {
	if m.fsys == nil {
		return nil, nil
	}
	name := ".gitignore"
	if dir != "" {
		name = dir + "/" + name
	}
	// Lstat first: a link (or a FIFO, a directory…) is not an ignore file.
	fi, err := m.fsys.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, quiet(err)
	}
	// O_NONBLOCK: should the file be swapped for a FIFO now, opening it
	// must not block. The check after opening catches any swap.
	f, err := m.fsys.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, quiet(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || !os.SameFile(fi, st) {
		return nil, nil
	}
	data, err := readCapped(f, filepath.Join(m.root, name))
	if err != nil {
		return nil, err
	}
	return parseFile(data, dir, name), nil
}

// quiet drops the errors git does not warn about: a missing file, or a
// missing or non-directory parent.
func quiet(err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	return fmt.Errorf("gitignore: %w", err)
}

func readCapped(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("gitignore: reading %s: %w", name, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("gitignore: %s is larger than %d bytes; ignoring it as git does", name, maxFileSize)
	}
	return data, nil
}

// loadStatic reads info/exclude and the global excludes file.
func (m *Matcher) loadStatic() (repo, global *list) {
	var errs []error
	if _, common, ok := GitDir(m.root); ok {
		name := filepath.Join(common, "info", "exclude")
		data, err := readPlain(name)
		if err != nil {
			errs = append(errs, err)
		}
		if data != nil {
			repo = parseFile(data, "", name)
		}
	}
	name, err := m.globalExcludesPath()
	if err != nil {
		errs = append(errs, err)
	}
	if name != "" {
		data, err := readPlain(name)
		if err != nil {
			errs = append(errs, err)
		}
		if data != nil {
			global = parseFile(data, "", name)
		}
	}
	if len(errs) > 0 {
		m.mu.Lock()
		m.errs = append(m.errs, errs...)
		m.mu.Unlock()
	}
	return repo, global
}

// readPlain reads a file outside the work tree (links followed, as git
// does). A missing file gives nil, nil.
func readPlain(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, quiet(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gitignore: %s is not a regular file", name)
	}
	return readCapped(f, name)
}

// GitDir finds the repository's git directory for the work tree root: root/.git
// when it is a directory, or the directory a ".git" file names
// ("gitdir: …", as in worktrees and submodules). common is where shared
// files such as info/exclude live (the "commondir" of a linked worktree,
// otherwise the git directory itself). ok is false when there is none.
func GitDir(root string) (dir, common string, ok bool) {
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err != nil:
		return "", "", false
	case fi.IsDir():
		dir = dotgit
	case fi.Mode().IsRegular() && fi.Size() < 64<<10:
		data, err := os.ReadFile(dotgit)
		if err != nil {
			return "", "", false
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, found := strings.CutPrefix(strings.TrimRight(line, "\r \t"), "gitdir: ")
		if !found || target == "" {
			return "", "", false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(root, target)
		}
		dir = filepath.Clean(target)
	default:
		return "", "", false
	}
	common = dir
	if data, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		c := strings.TrimRight(string(data), "\r\n")
		if c != "" {
			if !filepath.IsAbs(c) {
				c = filepath.Join(dir, c)
			}
			common = filepath.Clean(c)
		}
	}
	return dir, common, true
}
