// Package e2etest runs the builtin plugin binary end to end through the
// host's plugin manager: real processes over go-plugin, real files.
package e2etest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opair-dev/opair/host/plugin"
	"github.com/opair-dev/opair/internal/childenv"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// binPath is the plugin binary built for these tests: a real process,
// started over go-plugin by the host's plugin manager, as in a session.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "opair-builtin-test")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "opair-plugin-builtin")
	cmd := exec.Command("go", "build", "-o", binPath, "../../../plugins/builtin/opair-plugin-builtin")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		panic(fmt.Sprintf("building the plugin: %v", err))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func start(t *testing.T, root string, quiet ...bool) *plugin.Manager {
	t.Helper()
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr})
	if len(quiet) > 0 && quiet[0] {
		log = hclog.NewNullLogger() // the kills are expected
	}
	m, err := plugin.Start(context.Background(), []plugin.Spec{{Name: "opair-plugin-builtin", Path: binPath}}, plugin.Options{
		Logger:      log,
		ProjectRoot: root,
		Env:         childenv.Build(os.Environ()),
		CrashLimit:  1000,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if len(m.StartErrors) > 0 {
		t.Fatal(m.StartErrors)
	}
	t.Cleanup(m.Close)
	return m
}

func project(t *testing.T, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type call struct {
	tool, typ, scope string
	args             any
	dryRun           bool
}

func invoke(t *testing.T, m *plugin.Manager, c call) (*pluginv1.Result, error) {
	t.Helper()
	h := map[string]any{"type": c.typ}
	if c.scope != "" {
		h["scope"] = c.scope
	}
	hb, _ := json.Marshal(h)
	ab, _ := json.Marshal(c.args)
	return m.Invoke(context.Background(), &pluginv1.InvokeRequest{ToolName: c.tool, HandlerType: c.typ, HandlerJson: hb, ArgumentsJson: ab, DryRun: c.dryRun}, nil)
}

func text(r *pluginv1.Result) string {
	var s []string
	for _, c := range r.Content {
		s = append(s, c.GetText())
	}
	return strings.Join(s, "")
}

func TestServesTheTenTypes(t *testing.T) {
	m := start(t, project(t, nil))
	types, _ := m.Names()
	sort.Strings(types)
	want := []string{"chmodFile", "createFile", "deleteFile", "editFile", "findInProject", "listDirectory", "readFile", "readFileBytes", "readFileLines", "replaceInProject"}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("types %v", types)
	}
	// The plugin's validator refuses a scope the type does not allow.
	if diags := m.ValidateHandler("createFile", "x", []byte(`{"type":"createFile","scope":"external"}`)); len(diags) == 0 {
		t.Error("createFile with external scope validated")
	}
	if diags := m.ValidateHandler("readFile", "x", []byte(`{"type":"readFile","scope":"project"}`)); len(diags) != 0 {
		t.Errorf("valid block refused: %v", diags)
	}
}

// TestEndToEnd runs every handler type through the host's plugin manager.
func TestEndToEnd(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
	root := project(t, map[string]string{
		"main.go":    "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"pkg/a.go":   "package pkg\n\nconst Name = \"old\"\n",
		"img.png":    png,
		".env":       "SECRET=1\n",
		"run.sh":     "#!/bin/sh\n",
		"gone.txt":   "bye\n",
		".gitignore": "out/\n",
		"out/gen.go": "package out // old\n",
	})
	m := start(t, root)
	steps := []struct {
		c       call
		isErr   bool
		want    string
		summary string
	}{
		{call{"listProjectDirectory", "listDirectory", "project", map[string]any{"path": "."}, false}, false, "main.go", "listed .: 5 entries"},
		{call{"readProjectFile", "readFile", "project", map[string]any{"path": "main.go"}, false}, false, "println", "read 5 lines of main.go"},
		{call{"readProjectFile", "readFile", "project", map[string]any{"path": ".env"}, false}, true, "dot path", ""},
		{call{"readProjectFileLines", "readFileLines", "project", map[string]any{"path": "main.go", "start": 3, "end": 4}, false}, false, "     3\tfunc main() {\n     4\t\tprintln(\"hi\")\n", "read 2 lines of main.go"},
		{call{"findInProject", "findInProject", "", map[string]any{"pattern": "old"}, false}, false, "pkg/a.go:3:const Name = \"old\"\n", "1 match in 1 file"},
		{call{"createProjectFile", "createFile", "project", map[string]any{"path": "new/x.go", "content": "package x\n"}, false}, false, "Created new/x.go", "created new/x.go (1 line)"},
		{call{"editProjectFile", "editFile", "project", map[string]any{"path": "main.go", "oldString": "\"hi\"", "newString": "\"hello\""}, true}, false, "Dry run", ""},
		{call{"editProjectFile", "editFile", "project", map[string]any{"path": "main.go", "oldString": "\"hi\"", "newString": "\"hello\""}, false}, false, "Edited main.go", "edited main.go: 1 replacement"},
		{call{"chmodProjectFile", "chmodFile", "project", map[string]any{"path": "run.sh", "mode": "0755"}, false}, false, "0755", "chmod 0755 run.sh"},
		{call{"chmodProjectFile", "chmodFile", "project", map[string]any{"path": "run.sh", "mode": "4755"}, false}, true, "setuid", ""},
		{call{"deleteProjectFile", "deleteFile", "project", map[string]any{"path": "gone.txt"}, false}, false, "Deleted gone.txt", "deleted gone.txt"},
		{call{"replaceInProject", "replaceInProject", "project", map[string]any{"pattern": `"(o)ld"`, "replacement": `"${1}LD"`}, false}, false, "pkg/a.go: 1", "replaced 1 match in 1 file"},
	}
	for _, s := range steps {
		res, err := invoke(t, m, s.c)
		if err != nil {
			t.Fatalf("%s: %v", s.c.tool, err)
		}
		if res.IsError != s.isErr || !strings.Contains(text(res), s.want) {
			t.Errorf("%s %v: isError=%v\n%s", s.c.tool, s.c.args, res.IsError, text(res))
		}
		if s.summary != "" && res.Summary != s.summary {
			t.Errorf("%s: summary %q want %q", s.c.tool, res.Summary, s.summary)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "main.go")); !bytes.Contains(b, []byte(`println("hello")`)) {
		t.Errorf("main.go: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "pkg/a.go")); !bytes.Contains(b, []byte(`"oLD"`)) {
		t.Errorf("pkg/a.go: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "out/gen.go")); !bytes.Contains(b, []byte(`old`)) {
		t.Error("an ignored file was replaced in")
	}
	if fi, _ := os.Stat(filepath.Join(root, "run.sh")); fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode %v", fi.Mode())
	}
	// An image comes back as image content.
	res, err := invoke(t, m, call{"readProjectFileBytes", "readFileBytes", "project", map[string]any{"path": "img.png", "offset": 0, "length": 1000}, false})
	if err != nil {
		t.Fatal(err)
	}
	var img *pluginv1.Image
	for _, c := range res.Content {
		if c.GetImage() != nil {
			img = c.GetImage()
		}
	}
	if img == nil || img.MimeType != "image/png" || string(img.Data) != png {
		t.Errorf("no image: %v", res.Content)
	}
	// Details carry the diff and the hashes; a dry run touches nothing.
	before, _ := os.ReadFile(filepath.Join(root, "main.go"))
	res, err = invoke(t, m, call{"editProjectFile", "editFile", "project", map[string]any{"path": "main.go", "oldString": "hello", "newString": "bye"}, true})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Diff  string `json:"diff"`
		Files []struct {
			Path   string `json:"path"`
			Before string `json:"before_sha256"`
			After  string `json:"after_sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal(res.DetailsJson, &d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Diff, "-\tprintln(\"hello\")\n+\tprintln(\"bye\")\n") || len(d.Files) != 1 || d.Files[0].Before != fmt.Sprintf("%x", sha256.Sum256(before)) {
		t.Errorf("details %s", res.DetailsJson)
	}
	// The host passes the approved hashes back: the write happens while
	// they hold, and is refused once the file changed.
	args := map[string]any{"path": "main.go", "oldString": "hello", "newString": "bye", "expectSha256": map[string]string{"main.go": d.Files[0].Before}}
	os.WriteFile(filepath.Join(root, "main.go"), append(before, "// changed\n"...), 0o644)
	res, _ = invoke(t, m, call{"editProjectFile", "editFile", "project", args, false})
	if !res.IsError || !strings.Contains(text(res), "changed since the diff was approved") {
		t.Errorf("stale edit: %s", text(res))
	}
	os.WriteFile(filepath.Join(root, "main.go"), before, 0o644)
	res, _ = invoke(t, m, call{"editProjectFile", "editFile", "project", args, false})
	if res.IsError {
		t.Errorf("approved edit refused: %s", text(res))
	}
}

// TestKillDuringWrite kills the plugin at random moments while it rewrites
// a large file: afterwards the file holds the old or the new content, whole.
func TestKillDuringWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	line := strings.Repeat("abcdefghij", 10) + "\n"
	a := strings.Repeat(line, 120000) // ~12 MiB
	b := strings.ReplaceAll(a, "abc", "ABC")
	root := project(t, map[string]string{"big.txt": a})
	p := filepath.Join(root, "big.txt")
	m := start(t, root, true)
	valid := map[[32]byte]string{sha256.Sum256([]byte(a)): "old", sha256.Sum256([]byte(b)): "new"}
	r := rand.New(rand.NewSource(1))
	kills := 0
	seen := map[string]int{}
	for i := 0; i < 12; i++ {
		cur, _ := os.ReadFile(p)
		old, repl := "abc", "ABC"
		if string(cur) == b {
			old, repl = "ABC", "abc"
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			invoke(t, m, call{"editProjectFile", "editFile", "project", map[string]any{"path": "big.txt", "oldString": old, "newString": repl, "replaceAll": true}, false})
		}()
		time.Sleep(time.Duration(r.Intn(400)) * time.Millisecond)
		if pid := m.Pid("opair-plugin-builtin"); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
			kills++
		}
		<-done
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		which, ok := valid[sha256.Sum256(got)]
		if !ok {
			t.Fatalf("after a kill the file is torn (%d bytes)", len(got))
		}
		seen[which]++
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if e.Name() != "big.txt" {
				os.Remove(filepath.Join(root, e.Name())) // a temporary file the kill left
			}
		}
	}
	t.Logf("%d kills; the file was whole every time (old %d, new %d)", kills, seen["old"], seen["new"])
}
