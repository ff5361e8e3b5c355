package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/opair-dev/opair/host/config"
	"github.com/opair-dev/opair/host/gate"
	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/plugin"
	"github.com/opair-dev/opair/host/provider"
	"github.com/opair-dev/opair/host/registry"
	"github.com/opair-dev/opair/host/toolfile"
	"github.com/opair-dev/opair/internal/pathclass"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// Asker puts questions to the human. A headless session has none: there,
// ask means deny.
type Asker interface {
	// Approve asks about one call that needs approval.
	Approve(ctx context.Context, a Approval) (Answer, error)
	// Question asks the human a question for the model (askQuestion).
	Question(ctx context.Context, question string, options []string, allowCustom bool) (answer string, declined bool, err error)
}

// Approval is what the human is shown: the exact command, or the diff.
type Approval struct {
	Tool   string
	Argv   []string // exec: the exact command line
	Diff   string   // a write: the unified diff it makes
	Args   json.RawMessage
	Reason string // why it asks
	Root   string
	// CanAlways is false when "always" cannot loosen the gate (untrusted
	// tools, repeated calls): it then counts as once.
	CanAlways bool
}

// AnswerKind is the human's choice.
type AnswerKind int

// The answers.
const (
	Once AnswerKind = iota
	Always
	// SaveAlways is Always, and the rule is also saved into the user's
	// config for later sessions.
	SaveAlways
	Reject
	RejectWithMessage
)

// Answer is the human's answer to an Approval.
type Answer struct {
	Kind    AnswerKind
	Message string // for RejectWithMessage
}

// Observer shows a session's activity to the human.
type Observer interface {
	Text(delta string)
	ToolStart(name string, args json.RawMessage, argv []string)
	ToolProgress(name string, p *pluginv1.Progress)
	ToolEnd(name, summary string, isError bool)
	Usage(turn, total provider.Usage, contextTokens, window int)
	Notice(msg string)
}

// ModelOptions are a role's request options.
type ModelOptions struct {
	Model           string
	Temperature     *float64
	MaxTokens       int
	ReasoningEffort string
	// ContextWindow is the role's context size in tokens; 0 means 128 000.
	ContextWindow int
}

// Options configure a session.
type Options struct {
	Root     string
	Mode     permission.Mode
	Loops    map[string]Loop // by name; DefaultLoops when nil
	Config   *config.Config
	Registry *registry.Registry
	Plugins  *plugin.Manager
	Paths    *pathclass.Resolver
	Provider provider.Provider
	Model    ModelOptions
	Asker    Asker // nil: headless
	Observer Observer
	Log      *Log
	HostEnv  []string
	// MCP are the connected MCP servers whose tools are in the registry.
	MCP MCPCaller
	// ConfigPath is the user's config file, where "always, and save it"
	// answers are written.
	ConfigPath string
	// MaxSteps bounds the model's tool rounds in one turn (default 50).
	MaxSteps int
	// History resumes a logged conversation.
	History []provider.Message
}

// Session is one conversation of the main loop.
type Session struct {
	opts  Options
	mu    sync.Mutex
	mode  permission.Mode
	msgs  []provider.Message
	gate  *gate.Gate
	rules []permission.Rule // "always" answers of this session
	total provider.Usage
	obs   Observer

	subMu    sync.Mutex
	subCalls map[string]*subCall // sub-agent calls in flight, by call id

	// reads holds, for each file the model has read in this session, the
	// SHA-256 of the content it saw (key: the resolved project-relative
	// path, or the absolute path outside the project).
	reads map[string]string
}

// New starts a session (or resumes opts.History).
func New(opts Options) (*Session, error) {
	if opts.Loops == nil {
		opts.Loops = DefaultLoops()
		if opts.Config != nil {
			ApplyConfig(opts.Loops, opts.Config.Loops)
		}
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = 50
	}
	if opts.Model.ContextWindow == 0 {
		opts.Model.ContextWindow = 128000
	}
	if opts.Registry == nil || opts.Plugins == nil {
		return nil, errors.New("session: a registry and plugins are required")
	}
	obs := opts.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	s := &Session{opts: opts, mode: opts.Mode, obs: obs}
	s.gate = &gate.Gate{Root: opts.Root, Mode: opts.Mode, Config: opts.Config, HostEnv: opts.HostEnv,
		Recent: permission.NewRecent(0), Paths: opts.Paths}
	s.msgs = append(s.msgs, opts.History...)
	if len(s.msgs) == 0 || s.msgs[0].Role != provider.System {
		s.msgs = append([]provider.Message{{Role: provider.System}}, s.msgs...)
	}
	s.msgs[0].Content = s.loop().System
	return s, nil
}

// NewID returns a new session id.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Session) loop() Loop {
	if l, ok := s.opts.Loops[string(s.mode)]; ok {
		return l
	}
	return DefaultLoops()[string(s.mode)]
}

// Mode returns the current mode.
func (s *Session) Mode() permission.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// SetMode switches between navigator and driver.
func (s *Session) SetMode(m permission.Mode) error {
	s.mu.Lock()
	s.mode = m
	s.gate.Mode = m
	s.msgs[0].Content = s.loop().System
	s.mu.Unlock()
	return s.opts.Log.Append(Entry{Type: "mode", Mode: string(m)})
}

// Messages returns a copy of the conversation.
func (s *Session) Messages() []provider.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provider.Message(nil), s.msgs...)
}

// Offered returns the tools the model is offered now: available, not
// internal, in the loop's whitelist, and not withheld by the mode.
func (s *Session) Offered() []*registry.Entry { return s.offeredIn(s.loop()) }

// offeredIn is Offered for a given loop (a sub-agent's).
func (s *Session) offeredIn(l Loop) []*registry.Entry {
	var out []*registry.Entry
	for _, e := range s.opts.Registry.Snapshot() {
		if !e.Available || e.Internal || !l.Offers(e.Name) {
			continue
		}
		if permission.Categories(e.Reads, e.Writes, e.Untrusted, s.Mode()).Action == permission.NotOffered {
			continue
		}
		out = append(out, e)
	}
	return out
}

func (s *Session) tools() []provider.Tool { return s.toolsIn(s.loop()) }

func (s *Session) toolsIn(l Loop) []provider.Tool {
	var out []provider.Tool
	for _, e := range s.offeredIn(l) {
		out = append(out, provider.Tool{Name: e.Name, Description: e.Description, Parameters: e.Parameters, Strict: e.Strict})
	}
	return out
}

// MCPCaller runs the tools of MCP servers.
type MCPCaller interface {
	Call(ctx context.Context, t *toolfile.Tool, args json.RawMessage) (text string, isError bool, err error)
}

// ErrNoHuman is what an Asker returns when it has nobody to ask (an MCP
// client without elicitation): the call is then denied as in a headless
// session.
var ErrNoHuman = errors.New("nobody to ask")

// CallAsModel runs a tool call made by a model outside this session's own
// conversation (an MCP client's): the same gate, read-before-edit and
// approvals as the session's own model; the result is logged, not added to
// the conversation.
func (s *Session) CallAsModel(ctx context.Context, name string, args json.RawMessage) (text string, isError bool, images []provider.Image) {
	tc := provider.ToolCall{ID: "mcp-" + NewID(), Name: name, Arguments: args}
	o := s.execute(ctx, tc, s.loop(), s.gate, false)
	s.record(tc, o, false)
	if o.res != nil {
		for _, c := range o.res.Content {
			if img := c.GetImage(); img != nil {
				images = append(images, provider.Image{MIMEType: img.MimeType, Data: img.Data})
			}
		}
	}
	return o.text, o.isError, images
}

// Turn sends what the human typed and runs the model, and its tool calls,
// until the model answers without calling a tool. It returns that answer.
func (s *Session) Turn(ctx context.Context, text string) (string, error) {
	if s.opts.Provider == nil {
		return "", errors.New("this session has no model")
	}
	user := provider.Message{Role: provider.User, Content: text}
	if err := s.opts.Log.Append(Entry{Type: "user", Message: &user}); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, user)
	s.mu.Unlock()
	var turn provider.Usage
	for step := 0; ; step++ {
		if step >= s.opts.MaxSteps {
			err := fmt.Errorf("stopped after %d tool rounds in one turn; say how to go on", s.opts.MaxSteps)
			_ = s.opts.Log.Append(Entry{Type: "error", Error: err.Error()})
			return "", err
		}
		if err := s.fitContext(ctx); err != nil {
			return "", err
		}
		req := provider.Request{Model: s.opts.Model.Model, Messages: s.Messages(), Tools: s.tools(),
			Temperature: s.opts.Model.Temperature, MaxTokens: s.opts.Model.MaxTokens, ReasoningEffort: s.opts.Model.ReasoningEffort}
		resp, err := s.opts.Provider.Complete(ctx, req, s.obs.Text)
		if err != nil {
			_ = s.opts.Log.Append(Entry{Type: "error", Error: err.Error()})
			return "", fmt.Errorf("model: %w", err)
		}
		msg := resp.Message
		msg.Role = provider.Assistant
		if err := s.opts.Log.Append(Entry{Type: "assistant", Message: &msg}); err != nil {
			return "", err
		}
		s.mu.Lock()
		s.msgs = append(s.msgs, msg)
		addUsage(&s.total, resp.Usage)
		total := s.total
		s.mu.Unlock()
		addUsage(&turn, resp.Usage)
		_ = s.opts.Log.Append(Entry{Type: "usage", Usage: &resp.Usage, Total: &total})
		if len(msg.ToolCalls) == 0 {
			s.obs.Usage(turn, total, resp.Usage.InputTokens+resp.Usage.OutputTokens, s.opts.Model.ContextWindow)
			return msg.Content, nil
		}
		for _, tc := range msg.ToolCalls {
			if err := ctx.Err(); err != nil {
				// Answer the remaining calls, so the conversation stays
				// well-formed for the next turn.
				s.record(tc, outcome{text: "cancelled by the human before it ran", isError: true}, true)
				continue
			}
			s.record(tc, s.execute(ctx, tc, s.loop(), s.gate, false), true)
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
	}
}

func addUsage(t *provider.Usage, u provider.Usage) {
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CachedInputTokens += u.CachedInputTokens
}

// outcome is what a tool call came to.
type outcome struct {
	text    string
	isError bool
	summary string
	res     *pluginv1.Result
	full    string // the whole output, for the log
}

// record logs a call's outcome and, for the model's own calls, adds it to
// the conversation.
func (s *Session) record(tc provider.ToolCall, o outcome, converse bool) {
	msg := provider.Message{Role: provider.ToolRole, ToolCallID: tc.ID, Name: tc.Name, Content: o.text}
	e := Entry{Type: "result", Tool: tc.Name, CallID: tc.ID, IsError: o.isError, Summary: o.summary, Full: o.full}
	if !converse {
		e.Type = "direct"
	}
	if o.res != nil {
		for _, c := range o.res.Content {
			if img := c.GetImage(); img != nil {
				msg.Images = append(msg.Images, provider.Image{MIMEType: img.MimeType, Data: img.Data})
			}
		}
		if len(o.res.DetailsJson) > 0 && json.Valid(o.res.DetailsJson) {
			e.Details = json.RawMessage(o.res.DetailsJson)
		}
	}
	e.Message = &msg
	_ = s.opts.Log.Append(e)
	if converse {
		s.mu.Lock()
		s.msgs = append(s.msgs, msg)
		s.mu.Unlock()
	}
}

// RunTool runs a call the human asked for (a slash command) through the
// same gate, asking where the gate asks. The result is shown to the human
// and logged; it is not added to the model's conversation.
func (s *Session) RunTool(ctx context.Context, name string, args json.RawMessage) (text, summary string, isError bool) {
	tc := provider.ToolCall{ID: "human-" + NewID(), Name: name, Arguments: args}
	o := s.execute(ctx, tc, s.loop(), s.gate, true)
	s.record(tc, o, false)
	return o.text, o.summary, o.isError
}

// execute runs one tool call through the gate and its plugin.
func (s *Session) execute(ctx context.Context, tc provider.ToolCall, l Loop, g *gate.Gate, human bool) outcome {
	e := s.opts.Registry.Lookup(tc.Name)
	offered := false
	for _, o := range s.offeredIn(l) {
		offered = offered || o.Name == tc.Name
	}
	if e == nil || !offered {
		return outcome{text: fmt.Sprintf("error: there is no tool %q available to the %s loop in %s mode; use one of the tools you were given", tc.Name, l.Name, s.Mode()), isError: true}
	}
	args := tc.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return outcome{text: fmt.Sprintf("error: the arguments are not valid JSON: %s", truncate(string(args), 200)), isError: true}
	}
	if e.Kind == toolfile.KindHandlerless && e.Server == plugin.HostServed {
		return s.askQuestion(ctx, tc, args)
	}
	p, err := g.Prepare(e, args)
	if err != nil {
		var r *gate.Refusal
		if errors.As(err, &r) {
			s.obs.ToolEnd(tc.Name, "refused: "+r.Msg, true)
			_ = s.opts.Log.Append(Entry{Type: "decision", Tool: tc.Name, CallID: tc.ID, Args: args, Decision: "refused", Reason: r.Msg})
			return outcome{text: "refused before running: " + r.Msg, isError: true}
		}
		return outcome{text: "error: " + err.Error(), isError: true}
	}
	// A write's dry run is computed at most once per call: the checks
	// below and the approval prompt share it.
	var preview *Preview
	dryRun := func() (*Preview, error) {
		if preview == nil {
			pv, err := DryRun(ctx, s.opts.Plugins, p)
			if err != nil {
				return nil, err
			}
			preview = pv
		}
		return preview, nil
	}
	if !human && p.Entry.Type() == "editFile" && p.Path != nil {
		if msg := s.checkRead(p, dryRun); msg != "" {
			_ = s.opts.Log.Append(Entry{Type: "decision", Tool: tc.Name, CallID: tc.ID, Args: args, Decision: "refused", Reason: msg})
			s.obs.ToolEnd(tc.Name, "refused: not read, or changed since read", true)
			return outcome{text: "refused: " + msg, isError: true}
		}
	}
	if p.Entry.Type() == "replaceInProject" {
		// Its paths are known only from a dry run: path rules apply to
		// every file it would change.
		pv, err := dryRun()
		if err != nil {
			return outcome{text: "error: " + err.Error(), isError: true}
		}
		if pv.Failed != "" {
			return outcome{text: pv.Failed, isError: true}
		}
		paths := make([]string, 0, len(pv.Files))
		for f := range pv.Files {
			paths = append(paths, f)
		}
		sort.Strings(paths)
		g.WithPaths(p, paths)
	}
	s.applySessionRules(p)
	d := p.Decision
	entry := Entry{Type: "decision", Tool: tc.Name, CallID: tc.ID, Args: args, Argv: p.Argv, Decision: string(d.Action), Reason: d.Reason}
	switch d.Action {
	case permission.Allow:
		_ = s.opts.Log.Append(entry)
	case permission.Ask:
		ok, text := s.approve(ctx, p, tc, &entry, dryRun)
		_ = s.opts.Log.Append(entry)
		if !ok {
			s.obs.ToolEnd(tc.Name, entry.Decision, true)
			return outcome{text: text, isError: true}
		}
	default:
		_ = s.opts.Log.Append(entry)
		s.obs.ToolEnd(tc.Name, string(d.Action)+": "+d.Reason, true)
		return outcome{text: fmt.Sprintf("denied (%s): %s", d.Action, d.Reason), isError: true}
	}
	return s.run(ctx, tc, p, g)
}

// approve asks the human about a call, previewing a write first. It returns
// whether to run, and otherwise what the model is told.
func (s *Session) approve(ctx context.Context, p *gate.Prepared, tc provider.ToolCall, entry *Entry, dryRun func() (*Preview, error)) (bool, string) {
	a := Approval{Tool: tc.Name, Argv: p.Argv, Args: p.Args, Reason: p.Decision.Reason, Root: s.opts.Root, CanAlways: len(p.Suggestions) > 0}
	var preview *Preview
	if p.Entry.Kind == toolfile.KindBuiltin && p.Entry.Writes != toolfile.None {
		pv, err := dryRun()
		if err != nil {
			entry.Decision = "error"
			return false, "error previewing the change: " + err.Error()
		}
		if pv.Failed != "" {
			entry.Decision = "refused"
			return false, pv.Failed
		}
		preview = pv
		a.Diff = pv.Diff
	}
	var ans Answer
	var askErr error
	if s.opts.Asker != nil {
		ans, askErr = s.opts.Asker.Approve(ctx, a)
	}
	if s.opts.Asker == nil || errors.Is(askErr, ErrNoHuman) {
		entry.Decision = "deny (headless)"
		msg := fmt.Sprintf("denied: this call needs the human's approval (%s), and this session has nobody to ask (headless)", p.Decision.Reason)
		if len(p.Suggestions) > 0 {
			var rules []string
			for _, r := range p.Suggestions {
				rules = append(rules, r.JSON())
			}
			msg += "; the human can allow it by adding to the permissions of their Opair config: " + strings.Join(rules, ", ")
		}
		return false, msg
	}
	if askErr != nil {
		entry.Decision = "error"
		return false, "error asking the human: " + askErr.Error()
	}
	switch ans.Kind {
	case Once:
		entry.Decision = "approved once"
	case Always, SaveAlways:
		entry.Decision = "approved always"
		if a.CanAlways {
			s.mu.Lock()
			s.rules = append(s.rules, p.Suggestions...)
			s.mu.Unlock()
			if ans.Kind == SaveAlways && s.opts.ConfigPath != "" {
				if err := config.AddRules(s.opts.ConfigPath, p.Suggestions); err != nil {
					s.obs.Notice("could not save the approval: " + err.Error())
				} else {
					entry.Decision = "approved always, saved"
					s.obs.Notice(fmt.Sprintf("saved into %s; 'opair permissions list' shows it", s.opts.ConfigPath))
				}
			}
		}
	case RejectWithMessage:
		entry.Decision = "rejected"
		entry.Reason = ans.Message
		return false, "the human rejected this call, saying: " + ans.Message
	default:
		entry.Decision = "rejected"
		return false, "the human rejected this call"
	}
	if preview != nil {
		if err := preview.Bind(p); err != nil {
			return false, "error: " + err.Error()
		}
	}
	return true, ""
}

// applySessionRules lets the session's "always" answers turn an ask into
// allow, through the same rule engine (so they never loosen what a rule
// cannot).
func (s *Session) applySessionRules(p *gate.Prepared) {
	s.mu.Lock()
	rules := append([]permission.Rule(nil), s.rules...)
	s.mu.Unlock()
	if len(rules) == 0 || p.Decision.Action != permission.Ask {
		return
	}
	var user, project []permission.Rule
	if s.opts.Config != nil {
		user, project = s.opts.Config.Permissions, s.opts.Config.ProjectPermissions
	}
	d := permission.Decide(p.Call, append(append([]permission.Rule(nil), user...), rules...), project)
	if d.Action == permission.Allow {
		p.Decision = d
	}
}

// run invokes an approved call.
func (s *Session) run(ctx context.Context, tc provider.ToolCall, p *gate.Prepared, g *gate.Gate) outcome {
	g.Record(p)
	if isSubAgent(s.opts.Loops, tc.Name) {
		s.subMu.Lock()
		if s.subCalls == nil {
			s.subCalls = map[string]*subCall{}
		}
		s.subCalls[p.Request.CallId] = &subCall{loop: s.opts.Loops[tc.Name], gate: s.subGate()}
		s.subMu.Unlock()
		defer func() {
			s.subMu.Lock()
			delete(s.subCalls, p.Request.CallId)
			s.subMu.Unlock()
		}()
	}
	s.obs.ToolStart(tc.Name, p.Args, p.Argv)
	if p.Entry.Kind == toolfile.KindMCP {
		if s.opts.MCP == nil {
			return outcome{text: "error: no MCP server is connected for " + tc.Name, isError: true}
		}
		text, isErr, err := s.opts.MCP.Call(ctx, p.Entry.Tool, p.Args)
		if err != nil {
			s.obs.ToolEnd(tc.Name, "failed", true)
			return outcome{text: "the call failed: " + err.Error(), isError: true}
		}
		s.obs.ToolEnd(tc.Name, truncate(firstLine(text), 120), isErr)
		return outcome{text: text, isError: isErr, full: text}
	}
	var full strings.Builder
	res, err := s.opts.Plugins.Invoke(ctx, p.Request, func(pr *pluginv1.Progress) {
		if full.Len() < maxFullOutput {
			full.Write(pr.Output)
		}
		s.obs.ToolProgress(tc.Name, pr)
	})
	if err != nil {
		var ce *plugin.CrashError
		switch {
		case errors.As(err, &ce):
			s.obs.ToolEnd(tc.Name, "the plugin crashed", true)
		case ctx.Err() != nil:
			s.obs.ToolEnd(tc.Name, "cancelled", true)
			return outcome{text: "cancelled by the human while it ran; its processes were killed", isError: true}
		default:
			s.obs.ToolEnd(tc.Name, "failed", true)
		}
		// A binary that vanished mid-session makes its tool degraded for
		// the rest of the session (SPEC §2.2): it is no longer offered.
		if p.Entry.Kind == toolfile.KindExec && p.Entry.BinPath != "" {
			if _, serr := os.Stat(p.Entry.BinPath); serr != nil {
				s.opts.Registry.MarkDegraded(tc.Name, fmt.Sprintf("its binary %s vanished during the session", p.Entry.BinPath))
				s.obs.Notice(fmt.Sprintf("%s is degraded for the rest of this session: %s is gone", tc.Name, p.Entry.BinPath))
			}
		}
		return outcome{text: "the call failed: " + err.Error(), isError: true}
	}
	var text strings.Builder
	for _, c := range res.Content {
		text.WriteString(c.GetText())
	}
	if !res.IsError {
		s.noteContent(p, res)
	}
	s.obs.ToolEnd(tc.Name, res.Summary, res.IsError)
	body := text.String()
	if res.IsError && !strings.HasPrefix(body, "error") {
		body = "error: " + body
	}
	return outcome{text: body, isError: res.IsError, summary: res.Summary, res: res, full: full.String()}
}

const maxFullOutput = 16 << 20

// askQuestion serves the host's askQuestion tool.
func (s *Session) askQuestion(ctx context.Context, tc provider.ToolCall, args json.RawMessage) outcome {
	var q struct {
		Question    string   `json:"question"`
		Options     []string `json:"options"`
		AllowCustom bool     `json:"allowCustom"`
	}
	if err := json.Unmarshal(args, &q); err != nil || strings.TrimSpace(q.Question) == "" {
		return outcome{text: "error: askQuestion needs {\"question\": \"…\"}", isError: true}
	}
	if s.opts.Asker == nil {
		return outcome{text: "nobody can answer: this session is headless; decide yourself, or stop and say what you need", isError: true}
	}
	s.obs.ToolStart(tc.Name, args, nil)
	answer, declined, err := s.opts.Asker.Question(ctx, q.Question, q.Options, q.AllowCustom)
	switch {
	case errors.Is(err, ErrNoHuman):
		s.obs.ToolEnd(tc.Name, "nobody to ask", true)
		return outcome{text: "nobody can answer: there is no human to ask here; decide yourself, or stop and say what you need", isError: true}
	case err != nil:
		s.obs.ToolEnd(tc.Name, "error", true)
		return outcome{text: "error asking the human: " + err.Error(), isError: true}
	case declined:
		s.obs.ToolEnd(tc.Name, "declined", false)
		return outcome{text: "the human declined to answer", summary: "declined"}
	}
	s.obs.ToolEnd(tc.Name, "answered", false)
	return outcome{text: answer, summary: "answered"}
}

// Preview is the dry run of a write: the diff the human approves and the
// content hashes it was computed from.
type Preview struct {
	Diff   string
	Files  map[string]string // path → SHA-256 before
	Failed string            // the dry run's own refusal
}

// DryRun runs a writing call with DryRun set: nothing is touched.
func DryRun(ctx context.Context, m *plugin.Manager, p *gate.Prepared) (*Preview, error) {
	req := proto.Clone(p.Request).(*pluginv1.InvokeRequest)
	req.DryRun = true
	res, err := m.Invoke(ctx, req, nil)
	if err != nil {
		return nil, fmt.Errorf("previewing %s: %w", p.Entry.Name, err)
	}
	pv := &Preview{Files: map[string]string{}}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.GetText())
		}
		pv.Failed = strings.TrimSpace(b.String())
		return pv, nil
	}
	var d struct {
		Diff  string `json:"diff"`
		Files []struct {
			Path   string `json:"path"`
			Before string `json:"before_sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal(res.DetailsJson, &d); err != nil {
		return nil, fmt.Errorf("previewing %s: the plugin's details are not the expected JSON: %w", p.Entry.Name, err)
	}
	pv.Diff = d.Diff
	for _, f := range d.Files {
		pv.Files[f.Path] = f.Before
	}
	return pv, nil
}

// Bind makes an approved write conditional on the files still holding the
// content the diff was computed from.
func (pv *Preview) Bind(p *gate.Prepared) error {
	var args map[string]any
	if err := json.Unmarshal(p.Request.ArgumentsJson, &args); err != nil {
		return fmt.Errorf("binding the approval of %s: %w", p.Entry.Name, err)
	}
	args["expectSha256"] = pv.Files
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("binding the approval of %s: %w", p.Entry.Name, err)
	}
	p.Request.ArgumentsJson = b
	return nil
}

// fitContext keeps the conversation within the role's context window: when
// it nears the window, the oldest tool outputs are elided first (the model
// is told how to get them back); if that is not enough, the oldest turns are
// summarised by the model. The session log keeps everything.
func (s *Session) fitContext(ctx context.Context) error {
	s.mu.Lock()
	window := s.opts.Model.ContextWindow
	high, low := window*8/10, window*6/10
	if estimate(s.msgs) <= high {
		s.mu.Unlock()
		return nil
	}
	elided := 0
	// Never touch the last turn: the model needs what it just did.
	lastUser := len(s.msgs) - 1
	for lastUser > 0 && s.msgs[lastUser].Role != provider.User {
		lastUser--
	}
	for i := 1; i < lastUser && estimate(s.msgs) > low; i++ {
		m := &s.msgs[i]
		if m.Role != provider.ToolRole || strings.HasPrefix(m.Content, elidedMarker) || len(m.Content) < 200 {
			continue
		}
		m.Content = fmt.Sprintf("%s %d characters of %s output removed to save context; call the tool again if you need it]", elidedMarker, len(m.Content), m.Name)
		m.Images = nil
		elided++
	}
	still := estimate(s.msgs) > low && lastUser > 2
	older := append([]provider.Message(nil), s.msgs[1:lastUser]...)
	s.mu.Unlock()
	if elided > 0 {
		s.obs.Notice(fmt.Sprintf("context nearly full: elided %d old tool outputs (the session log keeps them)", elided))
	}
	if !still {
		return nil
	}
	return s.summarize(ctx, older)
}

const summaryPrompt = `Summarise the conversation below for yourself, to continue the work with less context: the human's goals and instructions, decisions made, facts learned about the project (files, functions, commands, test results), changes made so far, and what is still open. Be concise and concrete; keep file paths and names exact.`

// summarize replaces the oldest turns (older, which the conversation begins
// with after the system prompt) by a summary the model writes.
func (s *Session) summarize(ctx context.Context, older []provider.Message) error {
	var b strings.Builder
	for _, m := range older {
		switch {
		case m.Role == provider.ToolRole:
			fmt.Fprintf(&b, "[result of %s]\n%s\n\n", m.Name, m.Content)
		case len(m.ToolCalls) > 0:
			fmt.Fprintf(&b, "[%s]\n%s\n", m.Role, m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[calls %s %s]\n", c.Name, c.Arguments)
			}
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, m.Content)
		}
	}
	resp, err := s.opts.Provider.Complete(ctx, provider.Request{Model: s.opts.Model.Model, MaxTokens: s.opts.Model.MaxTokens,
		Messages: []provider.Message{{Role: provider.System, Content: summaryPrompt}, {Role: provider.User, Content: b.String()}}}, nil)
	if err != nil {
		return fmt.Errorf("summarising the oldest turns to fit the context window: %w", err)
	}
	summary := provider.Message{Role: provider.User, Content: "[Summary of the earlier conversation, written to save context; the session log keeps all of it]\n" + resp.Message.Content}
	s.mu.Lock()
	// The conversation may only have grown at its end since: replace the
	// prefix that was summarised.
	rest := append([]provider.Message(nil), s.msgs[1+len(older):]...)
	s.msgs = append([]provider.Message{s.msgs[0], summary}, rest...)
	addUsage(&s.total, resp.Usage)
	s.mu.Unlock()
	_ = s.opts.Log.Append(Entry{Type: "summary", Message: &summary, Covers: len(older), Usage: &resp.Usage})
	s.obs.Notice(fmt.Sprintf("context nearly full: the model summarised the %d oldest messages (the session log keeps them)", len(older)))
	return nil
}

const elidedMarker = "[elided:"

// estimate is a rough token count: four bytes a token.
func estimate(msgs []provider.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)/4 + 4
		for _, c := range m.ToolCalls {
			n += (len(c.Name) + len(c.Arguments)) / 4
		}
		n += len(m.Images) * 1000
	}
	return n
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

type nopObserver struct{}

func (nopObserver) Text(string)                                    {}
func (nopObserver) ToolStart(string, json.RawMessage, []string)    {}
func (nopObserver) ToolProgress(string, *pluginv1.Progress)        {}
func (nopObserver) ToolEnd(string, string, bool)                   {}
func (nopObserver) Usage(provider.Usage, provider.Usage, int, int) {}
func (nopObserver) Notice(string)                                  {}

// readKey is how the session names a resolved path.
func readKey(p *gate.Prepared) string {
	if p.Path == nil {
		return ""
	}
	if p.Path.Rel != "" {
		return p.Path.Rel
	}
	return p.Path.Abs
}

// checkRead enforces read-before-edit (SPEC §4.2): the model must have read
// the file in this session, and it must not have changed on disk since. The
// edit is then bound to the content the model read. It returns why the edit
// is refused, or "".
func (s *Session) checkRead(p *gate.Prepared, dryRun func() (*Preview, error)) string {
	key := readKey(p)
	s.mu.Lock()
	want, ok := s.reads[key]
	s.mu.Unlock()
	if !ok {
		return fmt.Sprintf("you have not read %s in this session; read it first (with a read tool), then edit it", key)
	}
	pv, err := dryRun()
	if err != nil {
		return err.Error()
	}
	if pv.Failed != "" {
		return pv.Failed
	}
	for path, before := range pv.Files {
		if before != want {
			return fmt.Sprintf("%s changed on disk since you last read it; read it again before editing it", path)
		}
		// Bind the write to what the model read: a change between now
		// and the write is refused by the plugin.
		pv.Files[path] = want
	}
	if err := pv.Bind(p); err != nil {
		return err.Error()
	}
	return ""
}

// noteContent records what the model now knows of a file: the content it
// read, or the content its own write produced.
func (s *Session) noteContent(p *gate.Prepared, res *pluginv1.Result) {
	if p.Entry.Kind != toolfile.KindBuiltin || len(res.DetailsJson) == 0 {
		return
	}
	var d struct {
		SHA256 string `json:"sha256"`
		Files  []struct {
			Path  string `json:"path"`
			After string `json:"after_sha256"`
		} `json:"files"`
	}
	if json.Unmarshal(res.DetailsJson, &d) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reads == nil {
		s.reads = map[string]string{}
	}
	switch p.Entry.Type() {
	case "readFile", "readFileLines", "readFileBytes":
		if key := readKey(p); key != "" && d.SHA256 != "" {
			s.reads[key] = d.SHA256
		}
	default:
		for _, f := range d.Files {
			if f.After != "" {
				s.reads[f.Path] = f.After
			} else {
				delete(s.reads, f.Path)
			}
			// A changed .gitignore changes which paths are ignored: the
			// gate classifies with the new rules from now on.
			if path.Base(f.Path) == ".gitignore" && s.opts.Paths != nil && s.opts.Paths.Ignore() != nil {
				s.opts.Paths.Ignore().Reload()
			}
		}
	}
}
