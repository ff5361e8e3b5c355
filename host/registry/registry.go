// Package registry holds the tools of a session: the validated tool files of
// the tools directory (or the embedded defaults when it does not exist), and
// for each whether it can be offered, after probing $PATH for its binary.
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

// Entry is one tool and whether it can be offered.
type Entry struct {
	*toolfile.Tool
	Available bool
	Reason    string // why not, when not available
	BinPath   string // the resolved absolute binary, when it has one
}

// Registry is the tools of a session.
type Registry struct {
	Source  string // the tools directory, or DefaultsSource
	Entries []*Entry
}

// Lookup returns the entry of that tool name, or nil.
func (r *Registry) Lookup(name string) *Entry {
	for _, e := range r.Entries {
		if e.Name == name {
			return e
		}
	}
	return nil
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
// Any invalid file fails the whole load with toolfile.Errors.
func Load(opts Options) (*Registry, error) {
	cat := opts.Catalog
	if cat == nil {
		cat = toolfile.FirstParty()
	}
	var set *toolfile.Set
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
	}
	r := &Registry{Source: set.Dir}
	for _, t := range set.Tools {
		e := probe(t, opts.PathEnv)
		if e.Available && opts.Status != nil {
			if err := opts.Status(t.Server); err != nil {
				e.Available = false
				e.Reason = err.Error()
			}
		}
		r.Entries = append(r.Entries, e)
	}
	return r, nil
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
