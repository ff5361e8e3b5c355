// Package gate prepares one tool call for the human and the plugin: it
// checks the arguments against the tool's schema, builds the exact command
// an exec tool will run, filters its arguments by every spelling the binary
// accepts, and decides allow, ask, deny or not offered from the mode, the
// tool's categories, the repetition rule and the user's rules.
//
// It never prompts and never runs anything: it returns a Prepared call whose
// Request is exactly what the plugin will get, so that what the human
// approves is what runs.
package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/opair-dev/opair/host/config"
	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/plugin"
	"github.com/opair-dev/opair/host/registry"
	"github.com/opair-dev/opair/host/toolfile"
	"github.com/opair-dev/opair/internal/argfilter"
	"github.com/opair-dev/opair/internal/childenv"
	"github.com/opair-dev/opair/internal/pathclass"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// Gate prepares the calls of one loop.
type Gate struct {
	Root    string // absolute project root
	Mode    permission.Mode
	Config  *config.Config
	HostEnv []string           // the host's environment, before filtering
	Recent  *permission.Recent // the loop's recent calls; nil: no repetition rule
	// Paths classifies the paths of builtin calls; nil refuses builtin
	// calls that name a path.
	Paths *pathclass.Resolver

	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema
}

// Prepared is a call ready to be decided and run.
type Prepared struct {
	Entry    *registry.Entry
	Args     json.RawMessage
	ExecArgs []string // exec: the model's args
	// Path is the resolved path a builtin call names, if any.
	Path     *pathclass.Resolved
	Argv     []string // exec: the exact command line, argv[0] absolute
	Decision permission.Decision
	// Call is what the decision was made from, to decide again with more
	// rules (a session's "always" answers).
	Call permission.Call
	// Suggestions are rules that would allow the call, when it asks.
	Suggestions []permission.Rule
	Request     *pluginv1.InvokeRequest
}

// Refusal is a call refused before anything runs: bad arguments, a denied
// argument, an unavailable tool.
type Refusal struct {
	Tool string
	Msg  string
}

func (r *Refusal) Error() string { return fmt.Sprintf("%s: refused before running: %s", r.Tool, r.Msg) }

// Prepare checks and decides one call. A *Refusal error means nothing may
// run; otherwise Decision says whether it runs, asks or is denied.
func (g *Gate) Prepare(e *registry.Entry, args json.RawMessage) (*Prepared, error) {
	refuse := func(format string, a ...any) (*Prepared, error) {
		return nil, &Refusal{Tool: e.Name, Msg: fmt.Sprintf(format, a...)}
	}
	if !e.Available {
		return refuse("the tool is unavailable: %s", e.Reason)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return refuse("the arguments must be a JSON object, e.g. {\"args\": [\"./...\"]}")
	}
	if err := g.validate(e.Tool, args); err != nil {
		var ce compileError
		// An MCP server's schema that does not compile is the server's
		// problem: its own validation applies.
		if !(errors.As(err, &ce) && e.Kind == toolfile.KindMCP) {
			return refuse("the arguments do not match the tool's parameters: %v", err)
		}
	}
	p := &Prepared{Entry: e, Args: args}
	untrusted := e.Untrusted
	req := &pluginv1.InvokeRequest{
		CallId: plugin.NewCallID(), ToolName: e.Name, HandlerType: e.Type(),
		HandlerJson: e.HandlerJSON, ArgumentsJson: args, ProjectRoot: g.Root,
	}
	if req.HandlerJson == nil {
		req.HandlerJson = []byte("{}")
	}
	if e.Kind == toolfile.KindExec {
		var a struct {
			Args []string `json:"args"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return refuse("args must be an array of strings: %v", err)
		}
		p.ExecArgs = a.Args
		h := e.Handler
		if rej := argfilter.Check(argfilter.StyleFor(h.Bin), h.AllowArgs, h.DenyArgs, a.Args); rej != nil {
			return refuse("%v", rej)
		}
		if e.BinPath == "" {
			return refuse("the binary %q was not found at start-up", h.Bin)
		}
		if inside(g.Root, e.BinPath) {
			untrusted = true
		}
		argv := append([]string{e.BinPath}, h.Subcommand...)
		if filepath.Base(e.BinPath) == "git" && len(h.Subcommand) > 0 {
			argv = append(argv, childenv.GitArgs(h.Subcommand[0])...)
		}
		start := len(argv)
		argv = append(argv, a.Args...)
		p.Argv = argv
		env := childenv.Merge(childenv.Build(g.HostEnv), envList(h.Env), childenv.Pinned(filepath.Base(e.BinPath)))
		req.Command = &pluginv1.ExecCommand{Argv: argv, Env: env, ModelArgsStart: uint32(start)}
		timeout, outputCap := config.DefaultTimeout, config.DefaultOutputCap
		if g.Config != nil {
			timeout, outputCap = g.Config.Exec.Timeout, g.Config.Exec.OutputCap
		}
		req.Limits = &pluginv1.Limits{TimeoutMs: int64(timeout / time.Millisecond), OutputCapBytes: int64(outputCap)}
	}
	p.Request = req
	if e.Type() == "findInProject" {
		// The search walks many paths the gate cannot list first: the
		// user's deny rules on paths go to the plugin, which does not
		// enter them. (replaceInProject is decided on its dry run's files
		// instead: one denied file denies the call.)
		if err := g.addExcludes(p); err != nil {
			return refuse("%v", err)
		}
	}

	reads, writes := e.Reads, e.Writes
	var paths []string
	if e.Kind == toolfile.KindBuiltin {
		res, err := g.builtinPath(e, obj)
		if err != nil {
			return refuse("%v", err)
		}
		if res != nil {
			p.Path = res
			// The call is decided by the class of the path it touches,
			// which is at most what the tool's scope reaches.
			cat := classCategory(res.Class)
			reads = cat
			if writes != toolfile.None {
				writes = cat
			}
			if res.Class == pathclass.External {
				paths = []string{res.Abs}
			} else {
				paths = []string{res.Rel}
			}
		}
	}
	call := permission.Call{
		Tool:      e.Name,
		Args:      p.ExecArgs,
		Paths:     paths,
		Untrusted: untrusted,
		Static:    permission.Categories(reads, writes, untrusted, g.Mode),
	}
	if g.Recent != nil {
		if repeat, why := g.Recent.Check(e.Name, args); repeat {
			call.Repeat = why
		}
	}
	var user, project []permission.Rule
	if g.Config != nil {
		user, project = g.Config.Permissions, g.Config.ProjectPermissions
	}
	p.Call = call
	p.Decision = permission.Decide(call, user, project)
	if p.Decision.Action == permission.Ask {
		p.Suggestions = permission.Suggest(call, user, project)
	}
	return p, nil
}

// addExcludes adds to a walking call's arguments the path globs of every
// deny rule that applies to its tool.
func (g *Gate) addExcludes(p *Prepared) error {
	if g.Config == nil {
		return nil
	}
	var globs []string
	for _, r := range append(append([]permission.Rule(nil), g.Config.Permissions...), g.Config.ProjectPermissions...) {
		if r.Action == permission.Deny && r.Path != "" && !filepath.IsAbs(r.Path) && permission.Wildcard(r.Tool, p.Entry.Name) {
			globs = append(globs, r.Path)
		}
	}
	if len(globs) == 0 {
		return nil
	}
	var args map[string]any
	if err := json.Unmarshal(p.Request.ArgumentsJson, &args); err != nil {
		return err
	}
	args["excludePaths"] = globs
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	p.Request.ArgumentsJson = b
	return nil
}

// WithPaths decides a prepared call again, now knowing every path it
// touches (a replaceInProject's files, from its dry run): it is allowed only
// if every path is.
func (g *Gate) WithPaths(p *Prepared, paths []string) {
	var user, project []permission.Rule
	if g.Config != nil {
		user, project = g.Config.Permissions, g.Config.ProjectPermissions
	}
	p.Call.Paths = paths
	p.Decision = permission.Decide(p.Call, user, project)
	p.Suggestions = nil
	if p.Decision.Action == permission.Ask {
		p.Suggestions = permission.Suggest(p.Call, user, project)
	}
}

// Record notes that a call ran, for the repetition rule.
func (g *Gate) Record(p *Prepared) {
	if g.Recent != nil {
		g.Recent.Record(p.Entry.Name, p.Args)
	}
}

// builtinPath resolves and checks the path a builtin call names: its class
// must be one the tool's scope grants, a writer may not touch a protected
// path, and nothing is read or written through a dangling link, a device or
// a FIFO.
func (g *Gate) builtinPath(e *registry.Entry, args map[string]any) (*pathclass.Resolved, error) {
	raw, ok := args["path"]
	if !ok {
		return nil, nil
	}
	path, ok := raw.(string)
	if !ok {
		return nil, fmt.Errorf("path must be a string")
	}
	if g.Paths == nil {
		return nil, fmt.Errorf("no project root to resolve %q against", path)
	}
	res, err := g.Paths.Resolve(path)
	if err != nil {
		return nil, err
	}
	scope := pathclass.Project
	if e.Handler.Scope != "" {
		if scope, err = pathclass.ParseScope(string(e.Handler.Scope)); err != nil {
			return nil, err
		}
	}
	if !pathclass.Grants(scope, res.Class) {
		return nil, fmt.Errorf("path %q is %s, which the tool's scope (%s) does not reach%s", path, res.Class, scope, scopeHint(res.Class))
	}
	writer := e.Writes != toolfile.None
	switch {
	case writer && res.Protected != "":
		return nil, fmt.Errorf("path %q is protected: %s; no tool may write it", path, res.Protected)
	case writer && res.Dangling:
		return nil, fmt.Errorf("path %q is a symbolic link to a missing target; write the target itself", path)
	case res.Special:
		return nil, fmt.Errorf("path %q is not a regular file or directory (a device, FIFO or socket)", path)
	}
	return res, nil
}

func scopeHint(c pathclass.Class) string {
	switch c {
	case pathclass.ProjectDot:
		return " (a component starts with \".\"; use a tool with scope project-dot)"
	case pathclass.ProjectIgnore:
		return " (git ignores it; use a tool with scope project-ignore)"
	case pathclass.External:
		return " (it is outside the project; use a tool with scope external)"
	}
	return ""
}

func classCategory(c pathclass.Class) toolfile.Category {
	switch c {
	case pathclass.Project:
		return toolfile.Project
	case pathclass.ProjectDot:
		return toolfile.ProjectDot
	case pathclass.ProjectIgnore:
		return toolfile.ProjectIgnore
	}
	return toolfile.External
}

func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// compileError is a parameters schema that does not compile.
type compileError struct{ error }

// noLoader refuses external references: a schema must be self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed", url)
}

// validate checks arguments against the tool's parameters schema, compiled
// once per tool.
func (g *Gate) validate(t *toolfile.Tool, args json.RawMessage) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.schemas == nil {
		g.schemas = map[string]*jsonschema.Schema{}
	}
	key := t.Name + "\x00" + string(t.Parameters)
	s, ok := g.schemas[key]
	if !ok {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.Parameters))
		if err != nil {
			return compileError{err}
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseLoader(noLoader{})
		url := "opair:///" + t.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return compileError{err}
		}
		if s, err = c.Compile(url); err != nil {
			return compileError{err}
		}
		g.schemas[key] = s
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return err
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}
