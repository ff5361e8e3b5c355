// Package search walks a project's files under the path-class rules and
// searches or rewrites their contents in parallel, in a deterministic order.
//
// The parts are separate so that each can be optimised alone:
//   - walk.go: Walker lists the files the rules grant, in walk order, with
//     an open handle on each file's directory (nothing the rules exclude is
//     opened or read);
//   - match.go: Matcher finds the matching lines of one file's content;
//   - scan.go: Scan reads the walked files on a worker pool, runs a
//     function over each content, and hands the results back in walk order.
package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sys/unix"

	"github.com/opair-dev/opair/internal/gitignore"
)

// DefaultMaxEntries bounds the directory entries one walk looks at.
const DefaultMaxEntries = 2_000_000

// maxDepth bounds the nesting of directories a walk descends into.
const maxDepth = 256

// Walker lists the regular files under a project root that the path-class
// rules grant: never anything inside a .git directory; no dot paths unless
// IncludeHidden; no paths git ignores unless IncludeIgnored. Symbolic links
// are never followed (a link is not a file of the walk), and devices, FIFOs
// and sockets are left out. Only directories are opened; files are opened
// by the caller through Entry.Open.
//
// Order: depth first, the entries of each directory sorted by name (byte
// order), so "a/b" comes before "a-c". The order is the same on every run.
type Walker struct {
	Root           *os.Root           // the project root
	Ignore         *gitignore.Matcher // nil: nothing is ignored
	IncludeHidden  bool
	IncludeIgnored bool
	// Glob, when set, is a doublestar pattern over the slash-separated path
	// relative to the root; files that do not match are not yielded
	// (directories are still descended into).
	Glob string
	// Exclude are doublestar patterns over the same paths: a matching file
	// is not yielded and a matching directory is not entered (the host's
	// deny rules on paths).
	Exclude    []string
	MaxEntries int // 0: DefaultMaxEntries
}

// excluded reports whether a path matches one of the exclusions.
func (w *Walker) excluded(rel string) bool {
	for _, ex := range w.Exclude {
		if ok, _ := doublestar.Match(ex, rel); ok {
			return true
		}
	}
	return false
}

// WalkStats counts what a walk left out.
type WalkStats struct {
	Dirs       int  // directories listed
	Files      int  // files yielded
	Unreadable int  // directories that could not be opened or listed
	Truncated  bool // MaxEntries or the depth limit was reached
}

// Entry is one file of the walk. Open opens it relative to its directory
// without following a symbolic link; Done must be called once the entry is
// no longer needed (it releases the directory handle).
type Entry struct {
	Rel  string // slash-separated path relative to the root
	dir  *dirHandle
	name string
}

// dirHandle is an open directory shared by the entries it holds.
type dirHandle struct {
	fd   int
	refs atomic.Int32
}

func (d *dirHandle) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

// Open opens the file for reading. It refuses a symbolic link (one swapped
// in since the directory was listed), and does not block on a FIFO.
func (e *Entry) Open() (*os.File, error) {
	if e.dir == nil {
		return nil, errors.New("entry already released")
	}
	fd, err := e.openFd()
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), e.Rel), nil
}

// openFd is Open's raw descriptor, for the scan's reads.
func (e *Entry) openFd() (int, error) {
	for {
		fd, err := unix.Openat(e.dir.fd, e.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: e.Rel, Err: err}
		}
		return fd, nil
	}
}

// Done releases the entry's hold on its directory.
func (e *Entry) Done() {
	if e.dir != nil {
		e.dir.release()
		e.dir = nil
	}
}

// ValidateGlob reports whether a glob is a valid doublestar pattern.
func ValidateGlob(glob string) error {
	if !doublestar.ValidatePattern(glob) {
		return fmt.Errorf("invalid glob %q", glob)
	}
	return nil
}

// Walk calls fn for each file the rules grant, in walk order. fn owns the
// entry and must call its Done (possibly later, from another goroutine).
// A non-nil error from fn stops the walk and is returned.
func (w *Walker) Walk(ctx context.Context, fn func(*Entry) error) (WalkStats, error) {
	var st WalkStats
	if w.Glob != "" {
		if err := ValidateGlob(w.Glob); err != nil {
			return st, err
		}
	}
	top, err := w.Root.Open(".")
	if err != nil {
		return st, fmt.Errorf("opening the project root: %w", err)
	}
	fd, err := unix.FcntlInt(top.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	top.Close()
	if err != nil {
		return st, fmt.Errorf("opening the project root: %w", err)
	}
	d := &dirHandle{fd: fd}
	d.refs.Store(1)
	wk := walk{Walker: w, ctx: ctx, fn: fn, st: &st, max: w.MaxEntries, buf: make([]byte, 32<<10)}
	if wk.max <= 0 {
		wk.max = DefaultMaxEntries
	}
	err = wk.dir(d, "", 0)
	return st, err
}

// walk is the state of one Walk.
type walk struct {
	*Walker
	ctx  context.Context
	fn   func(*Entry) error
	st   *WalkStats
	seen int
	max  int
	buf  []byte     // getdents buffer
	lvls [][]dirent // the listing of each depth, reused
}

// dirent is one entry of a directory listing.
type dirent struct {
	name string
	typ  uint8 // unix.DT_*
}

func (wk *walk) dir(d *dirHandle, rel string, depth int) error {
	defer d.release()
	if err := wk.ctx.Err(); err != nil {
		return err
	}
	for len(wk.lvls) <= depth {
		wk.lvls = append(wk.lvls, nil)
	}
	entries, err := readDir(d.fd, wk.buf, wk.lvls[depth][:0])
	wk.lvls[depth] = entries
	if err != nil && len(entries) == 0 {
		wk.st.Unreadable++
		return nil
	}
	wk.st.Dirs++
	slices.SortFunc(entries, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	for i := range entries {
		wk.seen++
		if wk.seen > wk.max {
			wk.st.Truncated = true
			return nil
		}
		name := entries[i].name
		if strings.EqualFold(name, ".git") {
			continue // never, whatever the flags
		}
		if !wk.IncludeHidden && name[0] == '.' {
			continue
		}
		typ := entries[i].typ
		if typ == unix.DT_UNKNOWN {
			typ = statType(d.fd, name)
		}
		isDir := typ == unix.DT_DIR
		if !isDir && typ != unix.DT_REG {
			continue // symbolic links, devices, FIFOs, sockets
		}
		child := name
		if rel != "" {
			child = rel + "/" + name
		}
		// The walk never enters an ignored directory, so the entry's own
		// rules decide (Match assumes no parent is ignored).
		if !wk.IncludeIgnored && wk.Ignore != nil && wk.Ignore.Match(child, isDir) {
			continue
		}
		if isDir {
			if depth+1 >= maxDepth {
				wk.st.Truncated = true
				continue
			}
			if wk.excluded(child) {
				continue
			}
			sub, err := openDir(d.fd, name, child)
			if err != nil {
				wk.st.Unreadable++
				continue
			}
			if err := wk.dir(sub, child, depth+1); err != nil {
				return err
			}
			if wk.st.Truncated && wk.seen > wk.max {
				return nil
			}
			continue
		}
		if wk.Glob != "" {
			if ok, _ := doublestar.Match(wk.Glob, child); !ok {
				continue
			}
		}
		if wk.excluded(child) {
			continue
		}
		wk.st.Files++
		d.refs.Add(1)
		if err := wk.fn(&Entry{Rel: child, dir: d, name: name}); err != nil {
			return err
		}
	}
	return nil
}

// statType is the DT_* type of a name whose listing did not say.
func statType(dirfd int, name string) uint8 {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return unix.DT_UNKNOWN
		}
		break
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN
}

// openDir opens a subdirectory relative to its parent without following a
// symbolic link, so that a directory swapped for a link is not entered.
func openDir(parent int, name, rel string) (*dirHandle, error) {
	for {
		fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
		}
		d := &dirHandle{fd: fd}
		d.refs.Store(1)
		return d, nil
	}
}
