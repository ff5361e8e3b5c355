// Package pathclass resolves and classifies the paths builtin tools touch
// (SPEC §3.1, §7.5, §7.7): project, project-dot, project-ignore or external,
// judged by the resolved target (a link named notes.txt that points at .env
// is a dot path; a link that leaves the root is external), plus the facts a
// handler needs to refuse what it must: protected paths no builtin may write
// (.git/, .opair/, the tools directory, the config file, .npmrc, shell
// start-up files, …), dangling links, special files, and hard links that may
// lead outside.
//
// # Contract for handlers
//
// Resolve is for classification and for messages: it walks the path one
// component at a time with Lstat and Readlink (through the os.Root for
// everything inside the project), but the file system can change between
// Resolve and the handler's own open. So:
//
//   - Open project paths only through Root() with Resolved.Rel, never by
//     absolute path. os.Root refuses to leave the root at open time even if
//     a component was swapped for a link after Resolve.
//   - Open External paths with os.Open(Abs) (or os.OpenFile) only after
//     Resolve said External and the scope grants it, and then re-check.
//   - After opening, re-check: compare the opened file's Stat with
//     Resolved.Info (os.SameFile) and its mode (regular file, not a FIFO or
//     device: open with O_NONBLOCK so a FIFO swapped in cannot block), and
//     refuse on any difference: a swap happened.
//   - Writes: refuse when Protected is non-empty, whatever the scope; refuse
//     when Dangling (a write would create the link's target); write to a
//     temporary file in the same directory and rename it over Rel, which
//     replaces a hard link's entry instead of writing through it.
//   - Reads: refuse Special targets and MayLeadOutside regular files.
//
// The package imports neither the host nor the plugins; both use it.
package pathclass

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/opair-dev/opair/internal/gitignore"
)

// Limits on paths handed to Resolve.
const (
	MaxPathBytes      = 4096 // PATH_MAX on Linux
	MaxComponentBytes = 255  // NAME_MAX
	maxLinkHops       = 40   // Linux's MAXSYMLINKS
)

// Options configures a Resolver.
type Options struct {
	// Ignore classifies ignored paths; nil means New builds one for the
	// root with default options (and Close closes it).
	Ignore *gitignore.Matcher
	// Protected are extra absolute paths no builtin may write, such as the
	// tools directory and the config file; everything below a protected
	// directory is protected too. Links in them are resolved in New.
	Protected []string
}

// Resolver resolves paths against one project root. It is safe for
// concurrent use.
type Resolver struct {
	rootPath  string
	rootComps []string
	root      *os.Root
	ignore    *gitignore.Matcher
	ownIgnore bool
	protected []protectedPath
}

type protectedPath struct {
	comps  []string // folded components of the absolute path
	reason string
}

// Resolved describes one path after resolution.
type Resolved struct {
	Input string // the path as given
	// Rel is, for project classes, the resolved path relative to the root,
	// slash-separated ("." for the root itself); "" for External.
	Rel string
	// Abs is the absolute resolved path. For External, links are resolved
	// as far as the path exists; the rest is appended as given.
	Abs   string
	Class Class
	// Exists reports whether the resolved target exists.
	Exists bool
	// Info is the Lstat of the resolved target (never a link), nil when it
	// does not exist.
	Info fs.FileInfo
	// Protected, when non-empty, says why no builtin may write this path.
	Protected string
	// Dangling is set when a symbolic link on the way points at something
	// that does not exist: a write would create the link's target, so
	// handlers refuse it.
	Dangling bool
	// Special is set when the target is neither a regular file, a directory
	// nor a link: a FIFO, socket or device. Handlers refuse those.
	Special bool
	// MayLeadOutside is set when the target is a regular file with more than
	// one hard link: another name for it may lie outside the project, so
	// handlers refuse to read it (SPEC §7.7). Writes replace the entry by
	// rename and are harmless.
	MayLeadOutside bool
}

// New opens a Resolver for the project root, an absolute path to a
// directory. Symbolic links in root are resolved here (filepath.EvalSymlinks),
// so RootPath may differ from the argument.
func New(root string, opts Options) (*Resolver, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("project root %q is not an absolute path", root)
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("project root %q: %w", root, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, fmt.Errorf("project root %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("project root %q is not a directory", root)
	}
	rt, err := os.OpenRoot(resolved)
	if err != nil {
		return nil, fmt.Errorf("project root %q: %w", root, err)
	}
	r := &Resolver{
		rootPath:  resolved,
		rootComps: splitAbs(resolved),
		root:      rt,
		ignore:    opts.Ignore,
	}
	if r.ignore == nil {
		r.ignore = gitignore.New(resolved, gitignore.Options{})
		r.ownIgnore = true
	}
	for _, p := range opts.Protected {
		if !filepath.IsAbs(p) {
			rt.Close()
			return nil, fmt.Errorf("protected path %q is not absolute", p)
		}
		r.addProtected(p, p+" is protected by Opair's configuration")
	}
	// The real git directory may live elsewhere (a ".git" file or link
	// names it): protect it wherever it is.
	if dir, common, ok := gitignore.GitDir(resolved); ok {
		r.addProtected(dir, "it is the repository's git directory")
		r.addProtected(common, "it is the repository's git directory")
	}
	return r, nil
}

// addProtected protects p both as given and with its links resolved.
func (r *Resolver) addProtected(p, reason string) {
	p = filepath.Clean(p)
	forms := []string{p}
	if res, err := resolvePartial(p); err == nil && res != p {
		forms = append(forms, res)
	}
	for _, f := range forms {
		comps := splitAbs(f)
		folded := make([]string, len(comps))
		for i, c := range comps {
			folded[i] = foldName(c)
		}
		r.protected = append(r.protected, protectedPath{comps: folded, reason: reason})
	}
}

// resolvePartial resolves links in the longest existing prefix of p.
func resolvePartial(p string) (string, error) {
	rest := ""
	for cur := p; ; {
		if res, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(res, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, errors.New("nothing exists")
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Root returns the os.Root at the project root; handlers open project paths
// through it with Resolved.Rel.
func (r *Resolver) Root() *os.Root { return r.root }

// RootPath returns the absolute project root, links resolved.
func (r *Resolver) RootPath() string { return r.rootPath }

// Ignore returns the gitignore matcher in use.
func (r *Resolver) Ignore() *gitignore.Matcher { return r.ignore }

// Close closes the root (and the matcher, if New built it).
func (r *Resolver) Close() error {
	err := r.root.Close()
	if r.ownIgnore {
		err = errors.Join(err, r.ignore.Close())
	}
	return err
}

// Resolve resolves path (relative to the root, or absolute) and classifies
// it. It fails for paths it will not consider at all (empty, a NUL byte,
// invalid UTF-8, longer than MaxPathBytes or with a component longer than
// MaxComponentBytes), for link loops, and when a component on the way is
// not a directory or cannot be examined. Leaving the root is not an error:
// the path is External, and the handler decides whether its scope allows
// that.
func (r *Resolver) Resolve(path string) (*Resolved, error) {
	if err := checkInput(path); err != nil {
		return nil, err
	}
	res := &Resolved{Input: path}

	var cur []string // resolved components from "/"
	if !filepath.IsAbs(path) {
		cur = slices.Clone(r.rootComps)
	}
	queue := splitRel(path)
	// The last userLeft entries of queue come from path itself; the ones
	// before them come from the targets of links being followed.
	userLeft := len(queue)
	hops := 0
	var info fs.FileInfo
	missing := false // a component on the way does not exist

	for len(queue) > 0 {
		n := len(queue)
		name := queue[0]
		queue = queue[1:]
		fromLink := n > userLeft
		if !fromLink {
			userLeft = n - 1
		}
		if !missing && info != nil && !info.IsDir() {
			return nil, fmt.Errorf("path %q: %s is not a directory", path, r.display(cur))
		}
		if name == ".." {
			if missing {
				return nil, fmt.Errorf("path %q: %s does not exist, so %q after it cannot be resolved", path, r.display(cur), "..")
			}
			if len(cur) > 0 {
				cur = cur[:len(cur)-1]
			}
			info = nil
			continue
		}
		if missing {
			cur = append(cur, name)
			continue
		}
		next := append(cur[:len(cur):len(cur)], name)
		fi, err := r.lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = true
			res.Dangling = fromLink
			cur = next
			info = nil
			continue
		case errors.Is(err, syscall.ENOTDIR):
			return nil, fmt.Errorf("path %q: %s is not a directory", path, r.display(cur))
		case err != nil:
			return nil, fmt.Errorf("path %q: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur, info = next, fi
			continue
		}
		hops++
		if hops > maxLinkHops {
			return nil, fmt.Errorf("path %q: more than %d symbolic links to follow (a link loop?)", path, maxLinkHops)
		}
		target, err := r.readlink(next)
		if err != nil {
			return nil, fmt.Errorf("path %q: reading link %s: %w", path, r.display(next), err)
		}
		if target == "" || strings.IndexByte(target, 0) >= 0 {
			return nil, fmt.Errorf("path %q: link %s has an invalid target", path, r.display(next))
		}
		if filepath.IsAbs(target) {
			cur = nil
		}
		queue = append(splitRel(target), queue...)
		info = nil
	}

	// The root itself, "/" or a path ending in "..": examine what we ended on.
	if !missing && info == nil {
		fi, err := r.lstat(cur)
		if err != nil {
			return nil, fmt.Errorf("path %q: %w", path, err)
		}
		info = fi
	}
	res.Exists = !missing
	if !missing {
		res.Info = info
		mode := info.Mode()
		res.Special = !mode.IsRegular() && !mode.IsDir() && mode&fs.ModeSymlink == 0
		res.MayLeadOutside = mode.IsRegular() && linkCount(info) > 1
		if strings.HasSuffix(path, "/") && !mode.IsDir() {
			return nil, fmt.Errorf("path %q: %s is not a directory", path, r.display(cur))
		}
	}

	res.Abs = "/" + strings.Join(cur, "/")
	if rel, ok := r.relOf(cur); ok {
		res.Rel = rel
		isDir := info != nil && info.IsDir()
		switch {
		case rel == ".":
			res.Class = Project
		case hasDotComponent(rel):
			res.Class = ProjectDot
		case r.ignore.Ignored(rel, isDir):
			res.Class = ProjectIgnore
		default:
			res.Class = Project
		}
		res.Protected = protectedComponents(rel)
	} else {
		res.Class = External
		res.Protected = protectedComponents(res.Abs)
	}
	if res.Protected == "" {
		res.Protected = r.protectedPath(cur)
	}
	if res.Protected == "" {
		// The most restrictive reading wins: the path as written counts too
		// (".git/x" is refused even when .git leads somewhere else).
		lexical := filepath.Clean(path)
		if !filepath.IsAbs(lexical) {
			lexical = filepath.Join(r.rootPath, lexical)
		}
		comps := splitAbs(lexical)
		if rel, ok := r.relOf(comps); ok {
			res.Protected = protectedComponents(rel)
		} else {
			res.Protected = protectedComponents(lexical)
		}
		if res.Protected == "" {
			res.Protected = r.protectedPath(comps)
		}
	}
	return res, nil
}

func checkInput(path string) error {
	switch {
	case path == "":
		return errors.New(`empty path: use "." for the project root`)
	case strings.IndexByte(path, 0) >= 0:
		return fmt.Errorf("path %q contains a NUL byte", path)
	case !utf8.ValidString(path):
		return fmt.Errorf("path %q is not valid UTF-8", path)
	case len(path) > MaxPathBytes:
		return fmt.Errorf("path %.60q… is %d bytes long, over the limit of %d", path, len(path), MaxPathBytes)
	}
	for _, c := range strings.Split(path, "/") {
		if len(c) > MaxComponentBytes {
			return fmt.Errorf("path %.60q…: component %.40q… is %d bytes long, over the limit of %d", path, c, len(c), MaxComponentBytes)
		}
	}
	return nil
}

// splitRel splits a path into components, dropping empty ones and ".".
func splitRel(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func splitAbs(p string) []string { return splitRel(filepath.ToSlash(p)) }

// relOf returns the path below the root for components that lie inside it.
func (r *Resolver) relOf(comps []string) (string, bool) {
	if len(comps) < len(r.rootComps) || !slices.Equal(comps[:len(r.rootComps)], r.rootComps) {
		return "", false
	}
	if len(comps) == len(r.rootComps) {
		return ".", true
	}
	return strings.Join(comps[len(r.rootComps):], "/"), true
}

// lstat examines one resolved path: through the os.Root inside the project,
// directly outside it.
func (r *Resolver) lstat(comps []string) (fs.FileInfo, error) {
	if rel, ok := r.relOf(comps); ok {
		return r.root.Lstat(rel)
	}
	return os.Lstat("/" + strings.Join(comps, "/"))
}

func (r *Resolver) readlink(comps []string) (string, error) {
	if rel, ok := r.relOf(comps); ok {
		return r.root.Readlink(rel)
	}
	return os.Readlink("/" + strings.Join(comps, "/"))
}

// display names a resolved location for error messages: relative inside the
// project, absolute outside.
func (r *Resolver) display(comps []string) string {
	if rel, ok := r.relOf(comps); ok {
		return fmt.Sprintf("%q", rel)
	}
	return fmt.Sprintf("%q", "/"+strings.Join(comps, "/"))
}

func (r *Resolver) protectedPath(comps []string) string {
	folded := make([]string, len(comps))
	for i, c := range comps {
		folded[i] = foldName(c)
	}
	for _, p := range r.protected {
		if len(folded) >= len(p.comps) && slices.Equal(folded[:len(p.comps)], p.comps) {
			return p.reason
		}
	}
	return ""
}

func hasDotComponent(rel string) bool {
	for _, c := range strings.Split(rel, "/") {
		if strings.HasPrefix(c, ".") {
			return true
		}
	}
	return false
}
