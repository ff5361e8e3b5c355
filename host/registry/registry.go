// Package registry holds the tools of a session: the validated tool files of
// the tools directory (or the embedded defaults when it does not exist), and
// for each whether it can be offered, after probing $PATH for its binary.
// During a session it follows the tools directory (Watch, SPEC §2.2): changed
// tool files are reloaded, deleted ones disappear, new ones wait for a restart.
//
// It never runs a tool and never decides a permission.
package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/opair-dev/opair/host/defaults"
	"github.com/opair-dev/opair/host/toolfile"
	"github.com/opair-dev/opair/internal/binpath"
)

// DefaultsSource is the Source of a registry loaded from the embedded defaults.
const DefaultsSource = "embedded defaults"

// ToolsDir returns the tools directory: $OPAIR_TOOLS_DIR, else
// <user config dir>/opair/tools. explicit reports whether the variable set it.
func ToolsDir() (dir string, explicit bool, err error) {
	if d := os.Getenv("OPAIR_TOOLS_DIR"); d != "" {
		abs, err := filepath.Abs(d)
		return abs, true, err
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return "", false, fmt.Errorf("finding the tools directory: %w (set OPAIR_TOOLS_DIR)", err)
	}
	return filepath.Join(cfg, "opair", "tools"), false, nil
}

// Entry is one tool and whether it can be offered. An Entry is immutable
// once the Registry has published it: a reload or MarkDegraded publishes a new
// *Entry, so a caller may keep and read the one it got without locking.
type Entry struct {
	*toolfile.Tool
	Available bool
	Reason    string // why not, when not available
	BinPath   string // the resolved absolute binary, when it has one
}

// Registry is the tools of a session. It is safe for concurrent use: Snapshot
// and Lookup may be called while Watch reloads tool files and MarkDegraded
// marks tools.
type Registry struct {
	Source string // the tools directory, or DefaultsSource

	mu       sync.RWMutex
	byName   map[string]*Entry
	list     []*Entry               // the same entries, sorted by name
	files    map[string]string      // base file name → tool name, for the files loaded from dir
	degraded map[string]degradation // by tool name

	// What Load used, for reloads.
	dir     string // the tools directory; "" for the embedded defaults
	cat     toolfile.Catalog
	pathEnv string
	status  func(server string) error

	watching atomic.Bool
}

// degradation is why a tool was marked degraded, and the binary it needed.
type degradation struct {
	bin, reason string
}

// Snapshot returns the current entries, sorted by name. The slice is the
// caller's; the entries are shared and must not be modified.
func (r *Registry) Snapshot() []*Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.list)
}

// Lookup returns the current entry of that tool name, or nil.
func (r *Registry) Lookup(name string) *Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// MarkDegraded marks a tool unavailable for the rest of the session, with the
// Reason "degraded: <reason>": for a binary that vanished mid-session. It
// publishes a copy of the entry; an unknown name is ignored. A later reload
// of the tool's file keeps it degraded unless the reload changes the binary
// it needs, which is then probed afresh.
func (r *Registry) MarkDegraded(name, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.byName[name]
	if e == nil {
		return
	}
	cp := *e
	cp.Available = false
	cp.Reason = "degraded: " + reason
	r.degraded[name] = degradation{bin: e.Bin(), reason: cp.Reason}
	r.publishLocked(&cp)
}

// AddExternal adds tools that come from no tool file (an MCP server's). A
// name already taken is not added; the clash is returned.
func (r *Registry) AddExternal(tools []*toolfile.Tool) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, t := range tools {
		if other, ok := r.byName[t.Name]; ok {
			errs = append(errs, fmt.Errorf("tool %s of %s is not added: %s already defines it", t.Name, t.Server, other.File))
			continue
		}
		r.publishLocked(&Entry{Tool: t, Available: true})
	}
	return errs
}

// publishLocked makes e the entry of its name. r.mu must be held.
func (r *Registry) publishLocked(e *Entry) {
	r.byName[e.Name] = e
	i, found := slices.BinarySearchFunc(r.list, e.Name, func(x *Entry, name string) int { return strings.Compare(x.Name, name) })
	if found {
		r.list[i] = e
		return
	}
	r.list = slices.Insert(r.list, i, e)
}

// removeLocked drops the entry of that name. r.mu must be held.
func (r *Registry) removeLocked(name string) {
	delete(r.byName, name)
	r.list = slices.DeleteFunc(r.list, func(e *Entry) bool { return e.Name == name })
}

// Options configure Load.
type Options struct {
	Dir      string           // the tools directory
	Explicit bool             // Dir was chosen by the user: a missing one is an error
	Catalog  toolfile.Catalog // what plugins serve; FirstParty when nil
	PathEnv  string           // $PATH to probe
	// Status says whether the server of a tool (a plugin name, or "host")
	// can take calls; nil treats every server as available.
	Status func(server string) error
}

// Load validates the tools of opts.Dir, or the embedded defaults when the
// directory does not exist and was not chosen explicitly, then probes $PATH.
// Any invalid file fails the whole load with toolfile.Errors. The Catalog,
// PathEnv and Status are kept for the reloads of Watch.
func Load(opts Options) (*Registry, error) {
	cat := opts.Catalog
	if cat == nil {
		cat = toolfile.FirstParty()
	}
	var set *toolfile.Set
	dir := ""
	fi, err := os.Stat(opts.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !opts.Explicit:
		set, err = LoadDefaults(cat)
		if err != nil {
			return nil, err
		}
		set.Dir = DefaultsSource
	case err != nil:
		return nil, fmt.Errorf("tools directory %s: %w (create it with `opair init`)", opts.Dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("tools directory %s is not a directory", opts.Dir)
	default:
		set, err = toolfile.LoadDir(opts.Dir, cat)
		if err != nil {
			return nil, err
		}
		dir = filepath.Clean(opts.Dir)
	}
	r := &Registry{
		Source:   set.Dir,
		byName:   map[string]*Entry{},
		files:    map[string]string{},
		degraded: map[string]degradation{},
		dir:      dir,
		cat:      cat,
		pathEnv:  opts.PathEnv,
		status:   opts.Status,
	}
	for _, t := range set.Tools {
		e := r.check(t)
		r.byName[t.Name] = e
		r.list = append(r.list, e)
		if dir != "" {
			r.files[filepath.Base(t.File)] = t.Name
		}
	}
	slices.SortFunc(r.list, func(a, b *Entry) int { return strings.Compare(a.Name, b.Name) })
	return r, nil
}

// check probes the binary of t and asks Status about its server.
func (r *Registry) check(t *toolfile.Tool) *Entry {
	e := probe(t, r.pathEnv)
	if e.Available && r.status != nil {
		if err := r.status(t.Server); err != nil {
			e.Available = false
			e.Reason = err.Error()
		}
	}
	return e
}

// LoadDefaults validates the embedded default tool set.
func LoadDefaults(cat toolfile.Catalog) (*toolfile.Set, error) {
	return toolfile.LoadFS(defaults.FS, "tools", cat, func(name string) string {
		return path.Join("(embedded)", name)
	})
}

func probe(t *toolfile.Tool, pathEnv string) *Entry {
	e := &Entry{Tool: t, Available: true}
	bin := t.Bin()
	if bin == "" {
		return e
	}
	p, err := binpath.Lookup(bin, pathEnv)
	if err != nil {
		e.Available = false
		what := "handler.bin"
		if t.Handler == nil || t.Handler.Bin == "" {
			what = "requiresBin"
		}
		e.Reason = fmt.Sprintf("%s %q not found on PATH; install it and start a new session", what, bin)
		if !errors.Is(err, binpath.ErrNotFound) {
			e.Reason = fmt.Sprintf("%s: %v", what, err)
		}
		return e
	}
	e.BinPath = p
	return e
}

// WriteResult says what WriteDefaults did.
type WriteResult struct {
	Written, Skipped []string // file names
}

// WriteDefaults writes the embedded default tool files into dir, creating
// it. An existing file is never overwritten; it is skipped. Each file appears
// whole or not at all: it is written to a temporary file and hard-linked into
// place, which fails rather than replace a file that appeared meanwhile.
func WriteDefaults(dir string) (WriteResult, error) {
	var res WriteResult
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("creating the tools directory: %w", err)
	}
	entries, err := fs.ReadDir(defaults.FS, "tools")
	if err != nil {
		return res, fmt.Errorf("reading the embedded defaults: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		data, err := fs.ReadFile(defaults.FS, path.Join("tools", name))
		if err != nil {
			return res, fmt.Errorf("reading the embedded %s: %w", name, err)
		}
		written, err := writeNew(filepath.Join(dir, name), data)
		if err != nil {
			return res, err
		}
		if written {
			res.Written = append(res.Written, name)
		} else {
			res.Skipped = append(res.Skipped, name)
		}
	}
	return res, nil
}

// writeNew creates target with data unless it exists (written false).
func writeNew(target string, data []byte) (written bool, err error) {
	if _, err := os.Lstat(target); err == nil {
		return false, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".opair-init-*")
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", target, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("writing %s: %w", target, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return false, fmt.Errorf("writing %s: %w", target, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("writing %s: %w", target, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("writing %s: %w", target, err)
	}
	if err := os.Link(tmp.Name(), target); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("writing %s: %w", target, err)
	}
	return true, nil
}
