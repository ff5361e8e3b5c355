package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/opair-dev/opair/host/toolfile"
	"github.com/opair-dev/opair/internal/childenv"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// binDir holds the plugin binaries built for these tests: real processes,
// started over go-plugin like in a session.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "opair-plugin-test")
	if err != nil {
		panic(err)
	}
	binDir = dir
	builds := map[string]string{
		"opair-plugin-test": "./testdata/testplugin",
		"opair-plugin-v2":   "./testdata/v2plugin",
		"opair-plugin-exec": "../../plugins/exec/opair-plugin-exec",
	}
	for name, pkg := range builds {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			panic(fmt.Sprintf("building %s: %v", pkg, err))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func testSpec(name string) Spec {
	return Spec{Name: name, Path: filepath.Join(binDir, name)}
}

type recorder struct {
	mu        sync.Mutex
	questions []string
}

func (r *recorder) AskHuman(_ context.Context, callID, q string, opts []string, _ bool) (string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.questions = append(r.questions, callID+":"+q)
	return opts[0], false, nil
}

func (r *recorder) CallTool(context.Context, string, string, json.RawMessage, func(*pluginv1.Progress)) (*pluginv1.Result, error) {
	return nil, errors.New("not in this test")
}

func (r *recorder) Complete(context.Context, string, string, json.RawMessage, []string, func(string)) (json.RawMessage, error) {
	return nil, errors.New("not in this test")
}

func start(t *testing.T, specs []Spec, mod func(*Options)) *Manager {
	t.Helper()
	opts := Options{
		Logger:      hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}),
		ProjectRoot: t.TempDir(),
		Env:         childenv.Build(os.Environ()),
		HostTools:   []string{"askQuestion"},
	}
	if mod != nil {
		mod(&opts)
	}
	m, err := Start(context.Background(), specs, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

func call(mode, text string) *pluginv1.InvokeRequest {
	args, _ := json.Marshal(map[string]string{"mode": mode, "text": text})
	return &pluginv1.InvokeRequest{ToolName: "tester", HandlerType: "test", HandlerJson: []byte(`{"type":"test"}`), ArgumentsJson: args}
}

func text(r *pluginv1.Result) string {
	var s []string
	for _, c := range r.Content {
		s = append(s, c.GetText())
	}
	return strings.Join(s, "")
}

func TestDescribeAndInvoke(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	if len(m.StartErrors) > 0 {
		t.Fatal(m.StartErrors)
	}
	if s, ok := m.HandlerType("test"); !ok || s != "opair-plugin-test" {
		t.Errorf("HandlerType(test) = %q %v", s, ok)
	}
	if s, ok := m.HandlerlessTool("testTool"); !ok || s != "opair-plugin-test" {
		t.Errorf("HandlerlessTool(testTool) = %q %v", s, ok)
	}
	if s, ok := m.HandlerlessTool("askQuestion"); !ok || s != HostServed {
		t.Errorf("askQuestion served by %q %v", s, ok)
	}
	res, err := m.Invoke(context.Background(), call("echo", "hello"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if text(res) != "hello" || res.Summary != "echoed" || string(res.DetailsJson) != `{"tool":"tester"}` || res.IsError {
		t.Errorf("result %v", res)
	}
	// A handler-less tool routes by name.
	args, _ := json.Marshal(map[string]string{"mode": "echo", "text": "by name"})
	res, err = m.Invoke(context.Background(), &pluginv1.InvokeRequest{ToolName: "testTool", ArgumentsJson: args}, nil)
	if err != nil || text(res) != "by name" {
		t.Errorf("handler-less: %v %v", res, err)
	}
	if _, err := m.Invoke(context.Background(), &pluginv1.InvokeRequest{ToolName: "x", HandlerType: "nope"}, nil); err == nil || !strings.Contains(err.Error(), `no installed plugin serves handler type "nope"`) {
		t.Errorf("unknown type: %v", err)
	}
}

func TestProgressAndErrors(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	var out strings.Builder
	res, err := m.Invoke(context.Background(), call("progress", ""), func(p *pluginv1.Progress) { out.Write(p.Output) })
	if err != nil || text(res) != "done" || out.String() != "line 0\nline 1\nline 2\n" {
		t.Errorf("progress: %q %v %v", out.String(), res, err)
	}
	res, err = m.Invoke(context.Background(), call("error", "bad input"), nil)
	if err != nil || !res.IsError || text(res) != "expected failure: bad input" {
		t.Errorf("expected failure: %v %v", res, err)
	}
	_, err = m.Invoke(context.Background(), call("fail", "boom"), nil)
	if err == nil || !strings.Contains(err.Error(), "opair-plugin-test: handler failed: boom") {
		t.Errorf("failure: %v", err)
	}
}

func TestPanicDoesNotCrashThePlugin(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	pid := m.Pid("opair-plugin-test")
	_, err := m.Invoke(context.Background(), call("panic", "oops"), nil)
	if err == nil || !strings.Contains(err.Error(), "panicked: test panic: oops") {
		t.Fatalf("panic: %v", err)
	}
	if _, err := m.Invoke(context.Background(), call("echo", "still here"), nil); err != nil {
		t.Fatal(err)
	}
	if m.Pid("opair-plugin-test") != pid {
		t.Error("the plugin was restarted after a handler panic")
	}
}

func TestExitMidCallFailsOnlyThatCall(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	pid := m.Pid("opair-plugin-test")
	_, err := m.Invoke(context.Background(), call("exit", "x"), nil)
	var ce *CrashError
	if !errors.As(err, &ce) || ce.Plugin != "opair-plugin-test" {
		t.Fatalf("want a CrashError naming the plugin, got %v", err)
	}
	if !strings.Contains(err.Error(), "last words of the test plugin") && !strings.Contains(err.Error(), "about to exit mid-call") {
		t.Errorf("the crash error does not quote the plugin's stderr:\n%v", err)
	}
	res, err := m.Invoke(context.Background(), call("echo", "after"), nil)
	if err != nil || text(res) != "after" {
		t.Fatalf("next call: %v %v", res, err)
	}
	if np := m.Pid("opair-plugin-test"); np == pid || np == 0 {
		t.Errorf("plugin not restarted: pid %d → %d", pid, np)
	}
}

var pidsRE = regexp.MustCompile(`plugin=(\d+) child=(\d+) grandchild=(\d+)`)

// TestKilledMidCall kills the plugin process while a call runs that has
// started a child and a grandchild in its own session: the host survives,
// the call fails naming the crash, both descendants are gone, and the next
// call succeeds.
func TestKilledMidCall(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	pids := make(chan []int, 1)
	done := make(chan error, 1)
	go func() {
		_, err := m.Invoke(context.Background(), call("spawn", ""), func(p *pluginv1.Progress) {
			if mm := pidsRE.FindStringSubmatch(p.Message); mm != nil {
				var ps []int
				for _, s := range mm[1:] {
					n, _ := strconv.Atoi(s)
					ps = append(ps, n)
				}
				pids <- ps
			}
		})
		done <- err
	}()
	var ps []int
	select {
	case ps = <-pids:
	case err := <-done:
		t.Fatalf("call ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no pids reported")
	}
	if err := syscall.Kill(ps[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var ce *CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("want a CrashError, got %v", err)
	}
	for _, pid := range ps[1:] {
		if !gone(pid, 3*time.Second) {
			t.Errorf("descendant %d of the killed plugin is still running", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if res, err := m.Invoke(context.Background(), call("echo", "alive"), nil); err != nil || text(res) != "alive" {
		t.Errorf("next call: %v %v", res, err)
	}
}

// gone waits for a process to disappear (or become a zombie).
func gone(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func TestCancelKillsTheCallNotThePlugin(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	pid := m.Pid("opair-plugin-test")
	ctx, cancel := context.WithCancel(context.Background())
	pids := make(chan []int, 1)
	done := make(chan error, 1)
	go func() {
		_, err := m.Invoke(ctx, call("spawn", ""), func(p *pluginv1.Progress) {
			if mm := pidsRE.FindStringSubmatch(p.Message); mm != nil {
				c, _ := strconv.Atoi(mm[2])
				pids <- []int{c}
			}
		})
		done <- err
	}()
	child := (<-pids)[0]
	cancel()
	select {
	case err := <-done:
		if err == nil || !errors.Is(err, context.Canceled) {
			t.Errorf("want cancelled, got %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("cancel did not end the call")
	}
	if !gone(child, 3*time.Second) {
		t.Error("the call's child survived cancellation")
	}
	if m.Pid("opair-plugin-test") != pid {
		t.Error("cancellation restarted the plugin")
	}
}

func TestRepeatedCrashesMarkTheTypeFailed(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, func(o *Options) { o.CrashLimit = 3 })
	for i := 0; i < 3; i++ {
		if _, err := m.Invoke(context.Background(), call("exit", ""), nil); err == nil {
			t.Fatal("exit did not fail the call")
		}
	}
	_, err := m.Invoke(context.Background(), call("echo", "x"), nil)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "crashed 3 times") {
		t.Fatalf("want the plugin marked failed, got %v", err)
	}
	if m.Status("opair-plugin-test") == nil {
		t.Error("Status does not report the failure")
	}
}

func TestWrongProtocolVersion(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-v2"), testSpec("opair-plugin-test")}, nil)
	if len(m.StartErrors) != 1 {
		t.Fatalf("start errors: %v", m.StartErrors)
	}
	msg := m.StartErrors[0].Error()
	if !strings.Contains(msg, "opair-plugin-v2 speaks plugin protocol version 2, but this opair speaks version 1") {
		t.Errorf("message: %s", msg)
	}
	// The other plugin is unaffected.
	if _, err := m.Invoke(context.Background(), call("echo", "ok"), nil); err != nil {
		t.Error(err)
	}
}

func TestPins(t *testing.T) {
	bin := filepath.Join(binDir, "opair-plugin-test")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	good := hex.EncodeToString(sum[:])

	spec := testSpec("opair-plugin-test")
	spec.Pin = strings.Repeat("ab", 32)
	m := start(t, []Spec{spec}, nil)
	if len(m.StartErrors) != 1 || !strings.Contains(m.StartErrors[0].Error(), "refusing to start it: its SHA-256 is "+good+", but the config pins "+spec.Pin) {
		t.Fatalf("pin mismatch: %v", m.StartErrors)
	}
	if _, ok := m.HandlerType("test"); ok {
		t.Error("a plugin with a mismatched pin serves its type")
	}

	spec.Pin = good
	m = start(t, []Spec{spec}, nil)
	if len(m.StartErrors) != 0 {
		t.Fatalf("matching pin: %v", m.StartErrors)
	}
	if _, err := m.Invoke(context.Background(), call("echo", "pinned"), nil); err != nil {
		t.Error(err)
	}
}

func TestTwoPluginsClaimingOneType(t *testing.T) {
	dup := filepath.Join(t.TempDir(), "opair-plugin-test2")
	data, _ := os.ReadFile(filepath.Join(binDir, "opair-plugin-test"))
	if err := os.WriteFile(dup, data, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), []Spec{testSpec("opair-plugin-test"), {Name: "opair-plugin-test2", Path: dup}}, Options{Env: childenv.Build(os.Environ())})
	if err == nil || !strings.Contains(err.Error(), `handler type "test" is served by both opair-plugin-test and opair-plugin-test2`) {
		t.Fatalf("want a conflict, got %v", err)
	}
}

// A tool file using a plugin's type validates only when the plugin is
// installed, and the plugin's own checks appear as validation errors.
func TestCatalogValidation(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	src := func(bad bool) []byte {
		return []byte(fmt.Sprintf(`{
  "schema": {"type": "function", "function": {"name": "tester", "description": "t", "parameters": {"type": "object"}}},
  "handler": {"type": "test", "config": {"bad": %v}}
}`, bad))
	}
	if _, errs := toolfile.Parse("tester.json", src(false), m); errs != nil {
		t.Fatalf("valid: %v", errs)
	}
	_, errs := toolfile.Parse("tester.json", src(true), m)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "/config/bad: config.bad must be false") || errs[0].Line != 3 {
		t.Fatalf("plugin validation: %v", errs)
	}
	if _, errs := toolfile.Parse("tester.json", src(false), toolfile.FirstParty()); len(errs) == 0 {
		t.Error("a plugin type validated without the plugin")
	}
}

func TestHostCallbacks(t *testing.T) {
	rec := &recorder{}
	m := start(t, []Spec{testSpec("opair-plugin-test")}, func(o *Options) { o.Callbacks = rec })
	req := call("ask", "proceed?")
	req.CallId = "call-42"
	res, err := m.Invoke(context.Background(), req, nil)
	if err != nil || text(res) != "answer=yes declined=false" {
		t.Fatalf("ask: %v %v", res, err)
	}
	if len(rec.questions) != 1 || rec.questions[0] != "call-42:proceed?" {
		t.Errorf("questions: %v", rec.questions)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-test")}, nil)
	pid := m.Pid("opair-plugin-test")
	if pid == 0 {
		t.Fatal("no pid")
	}
	m.Close()
	if !gone(pid, 3*time.Second) {
		t.Error("plugin process survived Close")
	}
}

func TestDiscover(t *testing.T) {
	self, plugins := t.TempDir(), t.TempDir()
	mk := func(dir, name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	mk(self, "opair-plugin-exec", 0o755)
	mk(plugins, "opair-plugin-exec", 0o755) // shadowed by the one next to opair
	mk(plugins, "opair-plugin-builtin", 0o755)
	mk(plugins, "opair-plugin-jira", 0o755)
	mk(plugins, "opair-plugin-notexec", 0o644)
	mk(plugins, "other-tool", 0o755)
	specs, missing := Discover(self, plugins, map[string]string{"opair-plugin-jira": "pin"})
	got := map[string]Spec{}
	for _, s := range specs {
		got[s.Name] = s
	}
	if len(specs) != 3 || got["opair-plugin-exec"].Path != filepath.Join(self, "opair-plugin-exec") ||
		got["opair-plugin-builtin"].Path != filepath.Join(plugins, "opair-plugin-builtin") || got["opair-plugin-jira"].Pin != "pin" {
		t.Errorf("specs: %+v", specs)
	}
	if len(missing) != 1 || missing[0] != "opair-plugin-subagent" {
		t.Errorf("missing: %v", missing)
	}
}

// TestExecPluginKilledMidCall kills the real exec plugin while its child
// runs a command that left a process in a session of its own: the call
// fails naming the crash, both processes are gone, and the next exec call
// on the same manager succeeds.
func TestExecPluginKilledMidCall(t *testing.T) {
	m := start(t, []Spec{testSpec("opair-plugin-exec")}, nil)
	pidFile := filepath.Join(t.TempDir(), "pids")
	script := `setsid sleep 300 & echo $! > ` + pidFile + `.tmp; echo $$ >> ` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; exec sleep 300`
	req := &pluginv1.InvokeRequest{
		ToolName: "sh", HandlerType: "exec", HandlerJson: []byte(`{"type":"exec","bin":"sh"}`), ArgumentsJson: []byte(`{}`),
		Command: &pluginv1.ExecCommand{Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, ModelArgsStart: 1},
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Invoke(context.Background(), req, nil)
		done <- err
	}()
	var pids []int
	deadline := time.Now().Add(10 * time.Second)
	for len(pids) < 2 && time.Now().Before(deadline) {
		if data, err := os.ReadFile(pidFile); err == nil {
			for _, f := range strings.Fields(string(data)) {
				n, _ := strconv.Atoi(f)
				pids = append(pids, n)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) < 2 {
		t.Fatal("the command did not start")
	}
	if err := syscall.Kill(m.Pid("opair-plugin-exec"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ce *CrashError
	if err := <-done; !errors.As(err, &ce) || ce.Plugin != "opair-plugin-exec" {
		t.Fatalf("want a crash of opair-plugin-exec, got %v", err)
	}
	for _, pid := range pids {
		if !gone(pid, 3*time.Second) {
			t.Errorf("process %d of the killed call survived", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	req.Command.Argv = []string{"/bin/sh", "-c", "echo again"}
	res, err := m.Invoke(context.Background(), req, nil)
	if err != nil || !strings.Contains(text(res), "again") {
		t.Fatalf("next call: %v %v", res, err)
	}
}
