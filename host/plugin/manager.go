// Package plugin starts and supervises the handler plugins: the built-in
// opair-plugin-exec, -builtin and -subagent, and third-party opair-plugin-*
// binaries. It routes each call to the process that serves its handler type,
// isolates crashes (a plugin that dies fails only the calls in flight, is
// restarted on the next call, and is marked failed after repeated crashes),
// and serves the host's callback service to plugins that ask for it.
//
// It routes and supervises; it never decides a permission and never does a
// handler's work.
package plugin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// HostServed names what the host itself serves (askQuestion).
const HostServed = "host"

// Options configure a Manager.
type Options struct {
	Logger      hclog.Logger
	ProjectRoot string
	// Env is the environment plugins start with (childenv.Build of the
	// host's); go-plugin adds only its own variables.
	Env []string
	// Callbacks serves HostService to plugins that ask for it; nil refuses
	// callbacks.
	Callbacks Callbacks
	// HostTools are the handler-less tools the host serves itself.
	HostTools []string
	// ProtectedPaths are absolute paths no plugin may write (the tools
	// directory, the configuration, the plugins directory).
	ProtectedPaths []string
	// StartTimeout bounds one plugin start (default 20 s).
	StartTimeout time.Duration
	// CrashLimit crashes within CrashWindow mark a plugin failed for the
	// session (defaults 3 in 1 minute).
	CrashLimit  int
	CrashWindow time.Duration
}

// Manager supervises the plugins of one session.
type Manager struct {
	opts    Options
	log     hclog.Logger
	sockDir string
	procs   []*proc
	types   map[string]*proc
	tools   map[string]*proc
	// StartErrors are the plugins that could not start (wrong protocol
	// version, pin mismatch, crash at start); their types are unknown.
	StartErrors []error
}

// Start starts every plugin of specs and asks each what it serves. A plugin
// that fails to start is reported in StartErrors and its types stay unknown;
// two plugins claiming one handler type or tool is an error.
func Start(ctx context.Context, specs []Spec, opts Options) (*Manager, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 20 * time.Second
	}
	if opts.CrashLimit == 0 {
		opts.CrashLimit = 3
	}
	if opts.CrashWindow == 0 {
		opts.CrashWindow = time.Minute
	}
	// A short private directory for the plugins' Unix sockets: long TMPDIR
	// paths overflow the 108-byte socket path limit.
	sockDir, err := os.MkdirTemp("/tmp", "opair-")
	if err != nil {
		sockDir, err = os.MkdirTemp("", "opair-")
		if err != nil {
			return nil, fmt.Errorf("creating the plugin socket directory: %w", err)
		}
	}
	m := &Manager{opts: opts, log: opts.Logger.Named("plugins"), sockDir: sockDir, types: map[string]*proc{}, tools: map[string]*proc{}}
	for _, s := range specs {
		m.procs = append(m.procs, newProc(m, s))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(m.procs))
	for i, p := range m.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.get(ctx)
		}()
	}
	wg.Wait()
	var conflicts []string
	hostTools := map[string]bool{}
	for _, t := range opts.HostTools {
		hostTools[t] = true
	}
	for i, p := range m.procs {
		if errs[i] != nil {
			m.StartErrors = append(m.StartErrors, errs[i])
			continue
		}
		for _, t := range p.desc.HandlerTypes {
			if other, ok := m.types[t.Name]; ok {
				conflicts = append(conflicts, fmt.Sprintf("handler type %q is served by both %s and %s", t.Name, other.spec.Name, p.spec.Name))
				continue
			}
			m.types[t.Name] = p
		}
		for _, t := range p.desc.HandlerlessTools {
			if hostTools[t.Name] {
				conflicts = append(conflicts, fmt.Sprintf("tool %q is served by the host and by %s", t.Name, p.spec.Name))
				continue
			}
			if other, ok := m.tools[t.Name]; ok {
				conflicts = append(conflicts, fmt.Sprintf("tool %q is served by both %s and %s", t.Name, other.spec.Name, p.spec.Name))
				continue
			}
			m.tools[t.Name] = p
		}
	}
	if len(conflicts) > 0 {
		m.Close()
		return nil, fmt.Errorf("plugins conflict: %s; remove one of each pair from the plugins directory", strings.Join(conflicts, "; "))
	}
	return m, nil
}

// Close stops every plugin: in-flight calls are cancelled by the plugins'
// own shutdown, then the processes are killed.
func (m *Manager) Close() {
	var wg sync.WaitGroup
	for _, p := range m.procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop() }()
	}
	wg.Wait()
	os.RemoveAll(m.sockDir)
}

// Pid returns the process id of a running plugin, or 0.
func (m *Manager) Pid(name string) int {
	for _, p := range m.procs {
		if p.spec.Name == name {
			return p.pid()
		}
	}
	return 0
}

// Server returns the plugin that serves a handler type, or for a
// handler-less tool (typ ""), the tool.
func (m *Manager) route(typ, tool string) (*proc, error) {
	if typ != "" {
		if p, ok := m.types[typ]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("no installed plugin serves handler type %q%s", typ, m.startHint())
	}
	if p, ok := m.tools[tool]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no installed plugin serves the tool %q%s", tool, m.startHint())
}

func (m *Manager) startHint() string {
	if len(m.StartErrors) == 0 {
		return ""
	}
	var s []string
	for _, e := range m.StartErrors {
		s = append(s, e.Error())
	}
	return " (plugins that failed to start: " + strings.Join(s, "; ") + ")"
}

// HandlerType implements toolfile.Catalog.
func (m *Manager) HandlerType(typ string) (string, bool) {
	if p, ok := m.types[typ]; ok {
		return p.spec.Name, true
	}
	return "", false
}

// HandlerlessTool implements toolfile.Catalog.
func (m *Manager) HandlerlessTool(name string) (string, bool) {
	for _, t := range m.opts.HostTools {
		if t == name {
			return HostServed, true
		}
	}
	if p, ok := m.tools[name]; ok {
		return p.spec.Name, true
	}
	return "", false
}

// Names implements toolfile.Catalog.
func (m *Manager) Names() (types, tools []string) {
	for t := range m.types {
		types = append(types, t)
	}
	tools = append(tools, m.opts.HostTools...)
	for t := range m.tools {
		tools = append(tools, t)
	}
	sort.Strings(types)
	sort.Strings(tools)
	return types, tools
}

// ValidateHandler implements toolfile.Catalog by asking the plugin.
func (m *Manager) ValidateHandler(typ, tool string, handler []byte) []string {
	p, err := m.route(typ, "")
	if err != nil {
		return []string{err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := p.get(ctx)
	if err != nil {
		return []string{err.Error()}
	}
	resp, err := conn.Handler.ValidateHandler(ctx, &pluginv1.ValidateHandlerRequest{HandlerType: typ, ToolName: tool, HandlerJson: handler})
	if err != nil {
		return []string{fmt.Sprintf("%s could not validate it: %v", p.spec.Name, err)}
	}
	var out []string
	for _, d := range resp.Diagnostics {
		if d.Severity == pluginv1.Severity_SEVERITY_WARNING {
			m.log.Warn("tool file warning", "tool", tool, "summary", d.Summary, "detail", d.Detail)
			continue
		}
		msg := d.Summary
		if d.JsonPointer != "" {
			msg = d.JsonPointer + ": " + msg
		}
		if d.Detail != "" {
			msg += " (" + d.Detail + ")"
		}
		out = append(out, msg)
	}
	return out
}

// Status reports whether a server (a plugin name or "host") can take calls:
// nil, or why not. Registry availability uses it.
func (m *Manager) Status(server string) error {
	if server == HostServed || server == "" {
		return nil
	}
	for _, p := range m.procs {
		if p.spec.Name == server {
			return p.failure()
		}
	}
	return fmt.Errorf("plugin %s is not installed", server)
}

// CrashError is a call that failed because its plugin process died.
type CrashError struct {
	Plugin string
	Tail   []string // the plugin's last stderr lines
	Err    error
}

func (e *CrashError) Error() string {
	s := fmt.Sprintf("plugin %s crashed during the call (%v); it will be restarted on the next call", e.Plugin, e.Err)
	if len(e.Tail) > 0 {
		s += "; its last stderr lines:\n  " + strings.Join(e.Tail, "\n  ")
	}
	return s
}

func (e *CrashError) Unwrap() error { return e.Err }

// ErrFailed marks a plugin that crashed too often and is off for the session.
var ErrFailed = errors.New("plugin failed")

// Invoke runs one call on the plugin that serves it, streaming progress to
// onProgress. A plugin crash returns a *CrashError; cancelling ctx cancels
// the call in the plugin and the processes it started.
func (m *Manager) Invoke(ctx context.Context, req *pluginv1.InvokeRequest, onProgress func(*pluginv1.Progress)) (*pluginv1.Result, error) {
	p, err := m.route(req.HandlerType, req.ToolName)
	if err != nil {
		return nil, err
	}
	if req.ProjectRoot == "" {
		req.ProjectRoot = m.opts.ProjectRoot
	}
	if req.CallId == "" {
		req.CallId = NewCallID()
	}
	return p.invoke(ctx, req, onProgress)
}

// NewCallID returns a random call id.
func NewCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Spec is one plugin binary to run.
type Spec struct {
	Name string // opair-plugin-<name>
	Path string // absolute
	Pin  string // pinned SHA-256 (hex), or ""
}

// BuiltinNames are the first-party plugins.
var BuiltinNames = []string{"opair-plugin-exec", "opair-plugin-builtin", "opair-plugin-subagent"}

// PluginsDir returns $OPAIR_PLUGINS_DIR, else <user config dir>/opair/plugins.
func PluginsDir() (string, error) {
	if d := os.Getenv("OPAIR_PLUGINS_DIR"); d != "" {
		return filepath.Abs(d)
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the plugins directory: %w (set OPAIR_PLUGINS_DIR)", err)
	}
	return filepath.Join(cfg, "opair", "plugins"), nil
}

// Discover finds the plugin binaries: each built-in plugin next to the
// executable (selfDir) first, then in pluginsDir; then every other
// opair-plugin-* in pluginsDir. pins maps plugin names to SHA-256 pins.
// A built-in plugin found nowhere is reported in missing.
func Discover(selfDir, pluginsDir string, pins map[string]string) (specs []Spec, missing []string) {
	seen := map[string]bool{}
	add := func(name, path string) {
		seen[name] = true
		specs = append(specs, Spec{Name: name, Path: path, Pin: pins[name]})
	}
	for _, name := range BuiltinNames {
		found := false
		for _, dir := range []string{selfDir, pluginsDir} {
			if dir == "" {
				continue
			}
			p := filepath.Join(dir, name)
			if isExecutable(p) {
				add(name, p)
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	entries, _ := os.ReadDir(pluginsDir)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "opair-plugin-") || seen[name] {
			continue
		}
		p := filepath.Join(pluginsDir, name)
		if isExecutable(p) {
			add(name, p)
		}
	}
	return specs, missing
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
