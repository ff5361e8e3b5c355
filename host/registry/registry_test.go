package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opair-dev/opair/host/toolfile"
)

// spec is what toolJSON writes: an exec tool.
type spec struct {
	name, desc, bin, slash string
}

// toolJSON is a valid exec tool file. The name is on line 5, writes on line
// 22 and the slash command, when there is one, on line 23.
func toolJSON(s spec) string {
	bin := s.bin
	if bin == "" {
		bin = "fakebin"
	}
	slash := ""
	if s.slash != "" {
		slash = fmt.Sprintf(",\n  \"slashCommand\": %q", s.slash)
	}
	return fmt.Sprintf(`{
  "schema": {
    "type": "function",
    "function": {
      "name": %q,
      "description": %q,
      "parameters": {
        "type": "object",
        "properties": {
          "args": {
            "type": "array",
            "description": "Arguments.",
            "items": { "type": "string" }
          }
        },
        "additionalProperties": false
      }
    }
  },
  "handler": { "type": "exec", "bin": %q },
  "reads": "project",
  "writes": "none"%s
}
`, s.name, s.desc, bin, slash)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is a tools directory, a PATH holding fakebin, and a loaded registry.
type fixture struct {
	dir, pathEnv string
	reg          *Registry
}

func newFixture(t *testing.T, tools ...spec) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), pathEnv: t.TempDir()}
	write(t, filepath.Join(f.pathEnv, "fakebin"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(f.pathEnv, "fakebin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range tools {
		write(t, f.file(s.name), toolJSON(s))
	}
	reg, err := Load(Options{Dir: f.dir, Explicit: true, PathEnv: f.pathEnv})
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	return f
}

func (f *fixture) file(name string) string { return filepath.Join(f.dir, toolfile.FileName(name)) }

// watcher runs Watch until the test ends and hands out its events.
type watcher struct {
	t  *testing.T
	ch chan Event
}

func (f *fixture) watch(t *testing.T) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{t: t, ch: make(chan Event, 100)}
	done := make(chan error, 1)
	go func() { done <- f.reg.Watch(ctx, func(e Event) { w.ch <- e }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Watch did not return after its context ended")
		}
	})
	return w
}

// patience bounds the waits that are not themselves the timing under test
// (a loaded CI machine running -race); SPEC §2.2's one second is asserted by
// TestWatchChangedDescription.
const patience = 5 * time.Second

// next returns the next event, which must be of that kind and file.
func (w *watcher) next(kind EventKind, file string) Event {
	w.t.Helper()
	select {
	case e := <-w.ch:
		if e.Kind != kind || e.File != file {
			w.t.Fatalf("event %v (%s %s %v), want %v of %s", e, e.Kind, e.File, e.Err, kind, file)
		}
		return e
	case <-time.After(patience):
		w.t.Fatalf("no %v event for %s within %v", kind, file, patience)
	}
	return Event{}
}

// waitFor polls cond until it holds or within passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func names(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestLoadDefaultsWhenDirMissing(t *testing.T) {
	reg, err := Load(Options{Dir: filepath.Join(t.TempDir(), "nope"), PathEnv: ""})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Source != DefaultsSource {
		t.Fatalf("Source = %q, want %q", reg.Source, DefaultsSource)
	}
	snap := reg.Snapshot()
	if len(snap) == 0 || reg.Lookup("readProjectFile") == nil {
		t.Fatalf("defaults not loaded: %v", names(snap))
	}
	for i := 1; i < len(snap); i++ {
		if snap[i-1].Name >= snap[i].Name {
			t.Fatalf("Snapshot not sorted: %v", names(snap))
		}
	}
	// Nothing to watch: Watch returns at once.
	done := make(chan error, 1)
	go func() { done <- reg.Watch(context.Background(), func(e Event) { t.Errorf("event %v", e) }) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patience):
		t.Fatal("Watch of the embedded defaults did not return")
	}
}

func TestLoadExplicitMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	_, err := Load(Options{Dir: dir, Explicit: true})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "opair init") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools")
	write(t, file, "")
	_, err := Load(Options{Dir: file})
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadInvalidFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go_test.json"), `{"schema": 1}`)
	_, err := Load(Options{Dir: dir, Explicit: true})
	var errs toolfile.Errors
	if !errors.As(err, &errs) || len(errs) == 0 || !strings.HasSuffix(errs[0].File, "go_test.json") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadStatusMarksUnavailable(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	var asked []string
	reg, err := Load(Options{Dir: f.dir, PathEnv: f.pathEnv, Status: func(server string) error {
		asked = append(asked, server)
		return fmt.Errorf("%s is not running", server)
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := reg.Lookup("goTest")
	if e.Available || e.Reason != e.Server+" is not running" || len(asked) != 1 || asked[0] != e.Server {
		t.Fatalf("entry %+v, asked %v", e, asked)
	}
	if e.BinPath != filepath.Join(f.pathEnv, "fakebin") {
		t.Fatalf("BinPath = %q", e.BinPath)
	}
}

func TestLoadProbesMissingBinary(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."}, spec{name: "goVet", desc: "Run go vet.", bin: "no-such-binary"})
	if e := f.reg.Lookup("goTest"); !e.Available || e.BinPath == "" {
		t.Fatalf("goTest: %+v", e)
	}
	e := f.reg.Lookup("goVet")
	if e.Available || !strings.Contains(e.Reason, `handler.bin "no-such-binary" not found on PATH`) || e.BinPath != "" {
		t.Fatalf("goVet: %+v", e)
	}
	if got := names(f.reg.Snapshot()); strings.Join(got, ",") != "goTest,goVet" {
		t.Fatalf("Snapshot = %v", got)
	}
	if f.reg.Lookup("nothing") != nil {
		t.Fatal("Lookup of an unknown name is not nil")
	}
}

func TestWatchChangedDescription(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Old description."})
	w := f.watch(t)
	old := f.reg.Lookup("goTest")
	start := time.Now()
	write(t, f.file("goTest"), toolJSON(spec{name: "goTest", desc: "New description."}))
	waitFor(t, time.Second, "the new schema in the Snapshot", func() bool {
		for _, e := range f.reg.Snapshot() {
			if e.Name == "goTest" && strings.Contains(string(e.Schema), "New description.") {
				return e.Description == "New description." && e.Available
			}
		}
		return false
	})
	t.Logf("reloaded after %v", time.Since(start))
	e := w.next(Changed, f.file("goTest"))
	if e.Tool != "goTest" || e.String() != "tool goTest reloaded from go_test.json" {
		t.Fatalf("event %+v: %s", e, e)
	}
	if old.Description != "Old description." {
		t.Fatal("a published entry was modified")
	}
}

func TestWatchInvalidKeepsOldDefinitionThenFix(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	w := f.watch(t)
	good := toolJSON(spec{name: "goTest", desc: "Run go test."})
	bad := strings.Replace(good, `"writes": "none"`, `"writes": "everything"`, 1)
	write(t, f.file("goTest"), bad)
	e := w.next(Invalid, f.file("goTest"))
	var errs toolfile.Errors
	if !errors.As(e.Err, &errs) || len(errs) == 0 {
		t.Fatalf("Invalid event without toolfile.Errors: %v", e.Err)
	}
	if !strings.Contains(e.Err.Error(), f.file("goTest")+":22:13: ") || !strings.Contains(e.Err.Error(), "everything") {
		t.Fatalf("error without file:line: %v", e.Err)
	}
	if s := e.String(); !strings.HasPrefix(s, "go_test.json is invalid; the previous definition of goTest stays in force:\n") {
		t.Fatalf("String = %q", s)
	}
	if got := f.reg.Lookup("goTest"); got == nil || got.Writes != toolfile.Category("none") || got.Description != "Run go test." {
		t.Fatalf("old definition not in force: %+v", got)
	}
	// Fixing it back to exactly what was in force still reports the fix.
	write(t, f.file("goTest"), good)
	w.next(Changed, f.file("goTest"))
	if got := f.reg.Lookup("goTest"); got == nil || got.Writes != "none" {
		t.Fatalf("after the fix: %+v", got)
	}
}

func TestWatchNewFileNeedsRestart(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	w := f.watch(t)
	write(t, f.file("goVet"), toolJSON(spec{name: "goVet", desc: "Run go vet."}))
	e := w.next(NeedsRestart, f.file("goVet"))
	if e.Tool != "goVet" || e.Err != nil || e.String() != "new tool file go_vet.json needs a restart; it is not callable in this session" {
		t.Fatalf("event %+v: %s", e, e)
	}
	if f.reg.Lookup("goVet") != nil || strings.Join(names(f.reg.Snapshot()), ",") != "goTest" {
		t.Fatalf("the new tool was added: %v", names(f.reg.Snapshot()))
	}
	// Editing it again is not reported again; an invalid new file says so.
	write(t, f.file("goVet"), toolJSON(spec{name: "goVet", desc: "Run go vet, again."}))
	write(t, filepath.Join(f.dir, "broken.json"), "{")
	e = w.next(NeedsRestart, filepath.Join(f.dir, "broken.json"))
	if e.Err == nil || !strings.Contains(e.String(), "it is also invalid") {
		t.Fatalf("event %+v: %s", e, e)
	}
	if f.reg.Lookup("goVet") != nil {
		t.Fatal("the new tool was added")
	}
}

func TestWatchDeleteRemovesAndRestore(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."}, spec{name: "goVet", desc: "Run go vet."})
	w := f.watch(t)
	if err := os.Remove(f.file("goVet")); err != nil {
		t.Fatal(err)
	}
	e := w.next(Removed, f.file("goVet"))
	if e.Tool != "goVet" || e.String() != "tool goVet removed: go_vet.json was deleted" {
		t.Fatalf("event %+v: %s", e, e)
	}
	if f.reg.Lookup("goVet") != nil || strings.Join(names(f.reg.Snapshot()), ",") != "goTest" {
		t.Fatalf("goVet still there: %v", names(f.reg.Snapshot()))
	}
	// Renamed away: removed too.
	if err := os.Rename(f.file("goTest"), f.file("goTest")+".bak"); err != nil {
		t.Fatal(err)
	}
	w.next(Removed, f.file("goTest"))
	if len(f.reg.Snapshot()) != 0 {
		t.Fatalf("Snapshot = %v", names(f.reg.Snapshot()))
	}
	// A file loaded at start that comes back is that tool again.
	write(t, f.file("goVet"), toolJSON(spec{name: "goVet", desc: "Run go vet."}))
	w.next(Changed, f.file("goVet"))
	if f.reg.Lookup("goVet") == nil {
		t.Fatal("goVet not restored")
	}
}

func TestWatchAtomicSaveByRename(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	w := f.watch(t)
	tmp := filepath.Join(f.dir, ".go_test.json.tmp")
	write(t, tmp, toolJSON(spec{name: "goTest", desc: "Saved by rename."}))
	if err := os.Rename(tmp, f.file("goTest")); err != nil {
		t.Fatal(err)
	}
	w.next(Changed, f.file("goTest"))
	if got := f.reg.Lookup("goTest"); got.Description != "Saved by rename." {
		t.Fatalf("Description = %q", got.Description)
	}
}

func TestWatchSlashCommandClash(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test.", slash: "test"}, spec{name: "goVet", desc: "Run go vet.", slash: "vet"})
	w := f.watch(t)
	write(t, f.file("goVet"), toolJSON(spec{name: "goVet", desc: "Run go vet.", slash: "test"}))
	e := w.next(Invalid, f.file("goVet"))
	want := fmt.Sprintf("%s:23:19: slashCommand \"test\" is already used by goTest (%s)", f.file("goVet"), f.file("goTest"))
	if e.Err == nil || !strings.Contains(e.Err.Error(), want) {
		t.Fatalf("err = %v\nwant %s", e.Err, want)
	}
	if got := f.reg.Lookup("goVet"); got.SlashCommand != "vet" {
		t.Fatalf("SlashCommand = %q", got.SlashCommand)
	}
	// Once goTest gives it up, goVet may take it.
	write(t, f.file("goTest"), toolJSON(spec{name: "goTest", desc: "Run go test."}))
	w.next(Changed, f.file("goTest"))
	write(t, f.file("goVet"), toolJSON(spec{name: "goVet", desc: "Run go vet.", slash: "test"}))
	w.next(Changed, f.file("goVet"))
	if got := f.reg.Lookup("goVet"); got.SlashCommand != "test" {
		t.Fatalf("SlashCommand = %q", got.SlashCommand)
	}
}

func TestWatchRenamedToolIsInvalid(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	w := f.watch(t)
	// goTEST lives in go_test.json too, so only the registry can object.
	write(t, f.file("goTest"), toolJSON(spec{name: "goTEST", desc: "Run go test."}))
	e := w.next(Invalid, f.file("goTest"))
	if e.Tool != "goTest" || e.Err == nil || !strings.Contains(e.Err.Error(), f.file("goTest")+`:5:15: the tool name changed from "goTest" to "goTEST"`) {
		t.Fatalf("event %+v: %v", e, e.Err)
	}
	if f.reg.Lookup("goTEST") != nil || f.reg.Lookup("goTest") == nil {
		t.Fatalf("Snapshot = %v", names(f.reg.Snapshot()))
	}
}

func TestWatchIgnoresOtherFilesAndUnchangedSaves(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."}, spec{name: "goVet", desc: "Run go vet."})
	w := f.watch(t)
	write(t, filepath.Join(f.dir, "notes.txt"), "hello")
	if err := os.Mkdir(filepath.Join(f.dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.dir, "sub.json", "x.json"), "{")
	// Saved unchanged, and touched: nothing to report.
	write(t, f.file("goTest"), toolJSON(spec{name: "goTest", desc: "Run go test."}))
	now := time.Now()
	if err := os.Chtimes(f.file("goTest"), now, now); err != nil {
		t.Fatal(err)
	}
	// The next event is the next real change.
	write(t, f.file("goVet"), toolJSON(spec{name: "goVet", desc: "Changed."}))
	w.next(Changed, f.file("goVet"))
}

func TestMarkDegraded(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	w := f.watch(t)
	old := f.reg.Lookup("goTest")
	f.reg.MarkDegraded("goTest", "fakebin vanished")
	f.reg.MarkDegraded("noSuchTool", "ignored")
	e := f.reg.Lookup("goTest")
	if e.Available || e.Reason != "degraded: fakebin vanished" || e == old || !old.Available {
		t.Fatalf("entry %+v (old %+v)", e, old)
	}
	if s := f.reg.Snapshot(); len(s) != 1 || s[0] != e {
		t.Fatalf("Snapshot = %v", s)
	}
	// A reload needing the same binary stays degraded ...
	write(t, f.file("goTest"), toolJSON(spec{name: "goTest", desc: "Edited."}))
	w.next(Changed, f.file("goTest"))
	if e := f.reg.Lookup("goTest"); e.Available || e.Reason != "degraded: fakebin vanished" || e.Description != "Edited." {
		t.Fatalf("after reload: %+v", e)
	}
	// ... one needing another binary is probed afresh.
	other := filepath.Join(f.pathEnv, "otherbin")
	write(t, other, "#!/bin/sh\n")
	if err := os.Chmod(other, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, f.file("goTest"), toolJSON(spec{name: "goTest", desc: "Edited.", bin: "otherbin"}))
	w.next(Changed, f.file("goTest"))
	if e := f.reg.Lookup("goTest"); !e.Available || e.BinPath != other {
		t.Fatalf("after changing the binary: %+v", e)
	}
}

func TestWatchConcurrentReaders(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test.", slash: "test"}, spec{name: "goVet", desc: "Run go vet."})
	w := f.watch(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, e := range f.reg.Snapshot() {
					_ = e.Description + e.Reason + string(e.Schema)
				}
				if e := f.reg.Lookup("goTest"); e != nil {
					_ = e.Available
					_ = e.SlashCommand
				}
			}
		})
	}
	for i := range 5 {
		write(t, f.file("goTest"), toolJSON(spec{name: "goTest", desc: fmt.Sprintf("Version %d.", i), slash: "test"}))
		w.next(Changed, f.file("goTest"))
		f.reg.MarkDegraded("goVet", "gone")
	}
	if err := os.Remove(f.file("goVet")); err != nil {
		t.Fatal(err)
	}
	w.next(Removed, f.file("goVet"))
	close(stop)
	wg.Wait()
	if e := f.reg.Lookup("goTest"); e.Description != "Version 4." {
		t.Fatalf("Description = %q", e.Description)
	}
}

func TestWatchOnlyOnceAndStopsWithContext(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.reg.Watch(ctx, nil) }()
	waitFor(t, patience, "Watch to start", func() bool { return f.reg.watching.Load() })
	if err := f.reg.Watch(context.Background(), nil); err == nil {
		t.Fatal("a second Watch was allowed")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(patience):
		t.Fatal("Watch did not return")
	}
}

func TestWatchDirectoryRemoved(t *testing.T) {
	f := newFixture(t, spec{name: "goTest", desc: "Run go test."})
	w := f.watch(t)
	// A change seen first: the watch is set up.
	write(t, f.file("goTest"), toolJSON(spec{name: "goTest", desc: "Changed."}))
	w.next(Changed, f.file("goTest"))
	if err := os.RemoveAll(f.dir); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(patience)
	for {
		select {
		case e := <-w.ch:
			if e.Kind == Error {
				if !strings.Contains(e.String(), "no longer watched") {
					t.Fatalf("String = %q", e)
				}
				return
			}
		case <-deadline:
			t.Fatal("no Error event for the removed directory")
		}
	}
}

func TestEventString(t *testing.T) {
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Kind: Error, Err: errors.New("boom")}, "watching the tools directory: boom"},
		{Event{Kind: Invalid, File: "/t/x.json", Err: errors.New("/t/x.json:1:1: bad")}, "x.json is invalid; its previous definition stays in force:\n/t/x.json:1:1: bad"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("String = %q, want %q", got, c.want)
		}
	}
	for k, want := range map[EventKind]string{Changed: "changed", Invalid: "invalid", NeedsRestart: "needs restart", Removed: "removed", Error: "error"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q", int(k), k.String())
		}
	}
}
