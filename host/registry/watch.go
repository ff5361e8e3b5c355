package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/opair-dev/opair/host/toolfile"
	"github.com/opair-dev/opair/internal/strictjson"
)

// Reload timing: a burst of file-system events is handled once it has been
// quiet for debounce, and never later than maxDelay after its first event,
// so that a change takes effect well within a second (SPEC §2.2).
const (
	debounce = 100 * time.Millisecond
	maxDelay = 400 * time.Millisecond
)

// EventKind says what a reload did.
type EventKind int

const (
	// Changed: a tool file was re-read and is valid; its new definition is
	// in force (availability probed afresh).
	Changed EventKind = iota + 1
	// Invalid: a tool file changed and is now invalid; the previous
	// definition stays in force. Err holds the toolfile.Errors.
	Invalid
	// NeedsRestart: a new *.json file appeared; its tool is not added in
	// this session. Err holds its toolfile.Errors when it is also invalid.
	NeedsRestart
	// Removed: a tool file was deleted or renamed away; its tool is gone.
	Removed
	// Error: the watcher itself reported a problem; watching goes on.
	Error
)

func (k EventKind) String() string {
	switch k {
	case Changed:
		return "changed"
	case Invalid:
		return "invalid"
	case NeedsRestart:
		return "needs restart"
	case Removed:
		return "removed"
	case Error:
		return "error"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing Watch did or saw.
type Event struct {
	Kind EventKind
	Tool string // the tool name, when known
	File string // the path of the tool file ("" for Error)
	Err  error  // see the EventKind
}

// String describes the event for humans, e.g. "tool goTest reloaded from
// go_test.json". Invalid events carry the file:line diagnostics, one a line.
func (e Event) String() string {
	file := filepath.Base(e.File)
	switch e.Kind {
	case Changed:
		return fmt.Sprintf("tool %s reloaded from %s", e.Tool, file)
	case Invalid:
		s := fmt.Sprintf("%s is invalid; the previous definition of %s stays in force", file, e.Tool)
		if e.Tool == "" {
			s = fmt.Sprintf("%s is invalid; its previous definition stays in force", file)
		}
		if e.Err != nil {
			s += ":\n" + e.Err.Error()
		}
		return s
	case NeedsRestart:
		s := fmt.Sprintf("new tool file %s needs a restart; it is not callable in this session", file)
		if e.Err != nil {
			s += "\nit is also invalid and would fail the next start:\n" + e.Err.Error()
		}
		return s
	case Removed:
		return fmt.Sprintf("tool %s removed: %s was deleted", e.Tool, file)
	case Error:
		return fmt.Sprintf("watching the tools directory: %v", e.Err)
	}
	return fmt.Sprintf("%s: %s %s %v", e.Kind, e.Tool, file, e.Err)
}

// Watch watches the tools directory and applies changes to its tool files
// (SPEC §2.2) until ctx ends, then returns nil. A burst of changes is handled
// about 100 ms after it ends, and within a second of its start:
//
//   - a changed file of a tool of this session is re-read and re-validated
//     with the Catalog, PATH and Status given to Load. Valid: its entry is
//     replaced (Changed). Invalid, or declaring a different tool name, or a
//     slash command another current tool uses: the previous definition stays
//     in force (Invalid, with the toolfile.Errors). Saving it unchanged (or
//     touching it) reports nothing.
//   - a new *.json file is reported once (NeedsRestart) and its tool is not
//     added: nothing that was not loaded becomes callable, or shadows a tool.
//   - a deleted file, or one renamed away, removes its tool (Removed). A file
//     loaded at start that comes back (an editor that saves by deleting and
//     recreating) is reloaded as a change of that file.
//   - files not ending in .json, and subdirectories, are ignored.
//
// The directory is watched, not the files, so saves by rename over the file
// are seen. Problems of the watcher (such as lost events, after which every
// file is checked again) are reported as Error events and do not end the
// watch. events is called from the goroutine running Watch, one event at a
// time, after the registry has been updated; it may be nil.
//
// A registry loaded from the embedded defaults has no directory: Watch
// returns nil at once. Watch returns an error only when the watch cannot be
// set up, or when another Watch of this registry is running.
func (r *Registry) Watch(ctx context.Context, events func(Event)) error {
	if r.dir == "" {
		return nil
	}
	if !r.watching.CompareAndSwap(false, true) {
		return errors.New("registry: the tools directory is already being watched")
	}
	defer r.watching.Store(false)
	if events == nil {
		events = func(Event) {}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching the tools directory %s: %w", r.dir, err)
	}
	defer w.Close()
	if err := w.Add(r.dir); err != nil {
		return fmt.Errorf("watching the tools directory %s: %w", r.dir, err)
	}
	ws := &watchState{r: r, emit: events, invalid: map[string]bool{}, announced: map[string]bool{}}

	pending := map[string]bool{}
	var first time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	schedule := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		d := min(debounce, maxDelay-now.Sub(first))
		timer.Reset(max(d, 0))
	}
	// Check every file once for what changed between Load and the watch
	// being set up, debounced like any change: a file being written now
	// is read once its writer has gone quiet.
	rescan := true
	schedule()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) == r.dir {
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					events(Event{Kind: Error, Err: fmt.Errorf("the tools directory %s was removed or renamed; tool files are no longer watched in this session", r.dir)})
				}
				continue
			}
			base := filepath.Base(ev.Name)
			if filepath.Dir(ev.Name) != r.dir || !strings.HasSuffix(base, ".json") {
				continue
			}
			pending[base] = true
			schedule()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				rescan = true
				schedule()
				err = fmt.Errorf("%w; checking every tool file again", err)
			}
			events(Event{Kind: Error, Err: err})
		case <-timer.C:
			var names []string
			if rescan {
				names = ws.all()
			} else {
				for n := range pending {
					names = append(names, n)
				}
				slices.Sort(names)
			}
			clear(pending)
			rescan = false
			first = time.Time{}
			ws.flush(names)
		}
	}
}

// watchState is what one Watch remembers between reloads.
type watchState struct {
	r         *Registry
	emit      func(Event)
	invalid   map[string]bool // base names whose last reload was invalid
	announced map[string]bool // new files already reported as needing a restart
}

// all returns every file to check: the files loaded at start and every
// *.json file of the directory now, sorted.
func (ws *watchState) all() []string {
	set := map[string]bool{}
	ws.r.mu.RLock()
	for f := range ws.r.files {
		set[f] = true
	}
	ws.r.mu.RUnlock()
	des, err := os.ReadDir(ws.r.dir)
	if err != nil {
		ws.emit(Event{Kind: Error, Err: fmt.Errorf("reading the tools directory: %w", err)})
	}
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".json") && !de.IsDir() {
			set[de.Name()] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (ws *watchState) flush(names []string) {
	for _, n := range names {
		if ev, ok := ws.sync(n); ok {
			ws.emit(ev)
		}
	}
}

// sync brings the registry in line with the file base of the directory.
func (ws *watchState) sync(base string) (Event, bool) {
	r := ws.r
	path := filepath.Join(r.dir, base)
	r.mu.RLock()
	name, known := r.files[base]
	r.mu.RUnlock()

	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.IsDir()) {
		delete(ws.invalid, base)
		delete(ws.announced, base)
		if !known {
			return Event{}, false
		}
		r.mu.Lock()
		present := r.byName[name] != nil
		if present {
			r.removeLocked(name)
		}
		r.mu.Unlock()
		return Event{Kind: Removed, Tool: name, File: path}, present
	}

	if !known {
		if ws.announced[base] {
			return Event{}, false
		}
		ws.announced[base] = true
		ev := Event{Kind: NeedsRestart, File: path}
		data, err := toolfile.ReadFile(path)
		if err != nil {
			ev.Err = readError(path, err)
		} else if t, errs := toolfile.Parse(path, data, r.cat); errs != nil {
			ev.Err = errs
		} else {
			ev.Tool = t.Name
		}
		return ev, true
	}

	invalid := func(errs toolfile.Errors) (Event, bool) {
		ws.invalid[base] = true
		return Event{Kind: Invalid, Tool: name, File: path, Err: errs}, true
	}
	data, err := toolfile.ReadFile(path)
	if err != nil {
		return invalid(readError(path, err))
	}
	t, errs := toolfile.Parse(path, data, r.cat)
	if errs != nil {
		return invalid(errs)
	}
	if t.Name != name {
		line, col := position(data, "schema", "function", "name")
		return invalid(toolfile.Errors{{File: path, Line: line, Col: col,
			Msg:  fmt.Sprintf("the tool name changed from %q to %q; a tool cannot be renamed in a running session, so %s keeps its previous definition", name, t.Name, name),
			Hint: fmt.Sprintf("change the name back to %q, or restart opair to use %q", name, t.Name)}})
	}
	e := r.check(t)

	r.mu.Lock()
	if t.SlashCommand != "" {
		for _, o := range r.list {
			if o.Name != name && o.SlashCommand == t.SlashCommand {
				r.mu.Unlock()
				line, col := position(data, "slashCommand")
				return invalid(toolfile.Errors{{File: path, Line: line, Col: col,
					Msg:  fmt.Sprintf("slashCommand %q is already used by %s (%s)", t.SlashCommand, o.Name, o.File),
					Hint: "slash commands must be unique across tools; pick another"}})
			}
		}
	}
	cur := r.byName[name]
	if cur != nil && !ws.invalid[base] && reflect.DeepEqual(cur.Tool, t) {
		r.mu.Unlock()
		return Event{}, false // touched or saved unchanged
	}
	if d, ok := r.degraded[name]; ok {
		if d.bin == t.Bin() {
			e.Available = false
			e.Reason = d.reason
		} else {
			delete(r.degraded, name)
		}
	}
	r.publishLocked(e)
	r.mu.Unlock()
	delete(ws.invalid, base)
	return Event{Kind: Changed, Tool: name, File: path}, true
}

func readError(path string, err error) toolfile.Errors {
	return toolfile.Errors{{File: path, Line: 1, Col: 1, Msg: err.Error(), Hint: "make it a readable regular file under 1 MiB, or remove it"}}
}

// position returns where the value at keys is written in a valid tool file,
// or 1:1.
func position(data []byte, keys ...string) (line, col int) {
	n, _ := strictjson.Parse(data, strictjson.Limits{MaxBytes: toolfile.MaxFileBytes, MaxDepth: toolfile.MaxDepth})
	for _, k := range keys {
		n = n.Get(k)
	}
	if n == nil {
		return 1, 1
	}
	return strictjson.NewLines(data).Position(n.Start)
}
