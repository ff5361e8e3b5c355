package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/opair-dev/opair/host/gate"
	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/plugin"
	"github.com/opair-dev/opair/host/provider"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// subCall is a sub-agent call in flight: the loop it runs and its own gate
// (its own repetition window; the same mode, rules and paths).
type subCall struct {
	loop Loop
	gate *gate.Gate
}

func isSubAgent(loops map[string]Loop, tool string) bool {
	l, ok := loops[tool]
	return ok && l.SubAgent
}

func (s *Session) subGate() *gate.Gate {
	return &gate.Gate{Root: s.opts.Root, Mode: s.Mode(), Config: s.opts.Config, HostEnv: s.opts.HostEnv,
		Recent: permission.NewRecent(0), Paths: s.opts.Paths}
}

func (s *Session) sub(callID string) (*subCall, error) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	sc, ok := s.subCalls[callID]
	if !ok {
		return nil, fmt.Errorf("call %s is not a sub-agent call in flight", callID)
	}
	return sc, nil
}

// RoleProvider returns the provider and options of a model role.
type RoleProvider func(role string) (provider.Provider, ModelOptions, error)

// Callbacks returns the host's callback service for this session's
// plugins: sub-agents run model completions with their loop's role and
// whitelist, and every tool call they make passes the same gate, asks the
// same human, and lands in the same session log.
func (s *Session) Callbacks(roles RoleProvider) plugin.Callbacks {
	return &callbacks{s: s, roles: roles}
}

type callbacks struct {
	s     *Session
	roles RoleProvider
}

func (c *callbacks) AskHuman(ctx context.Context, callID, question string, options []string, allowCustom bool) (string, bool, error) {
	if c.s.opts.Asker == nil {
		return "", true, nil
	}
	return c.s.opts.Asker.Question(ctx, question, options, allowCustom)
}

func (c *callbacks) CallTool(ctx context.Context, callID, tool string, args json.RawMessage, onProgress func(*pluginv1.Progress)) (*pluginv1.Result, error) {
	sc, err := c.s.sub(callID)
	if err != nil {
		return nil, err
	}
	tc := provider.ToolCall{ID: "sub-" + NewID(), Name: tool, Arguments: args}
	o := c.s.execute(ctx, tc, sc.loop, sc.gate, false)
	c.s.record(tc, o, false)
	res := o.res
	if res == nil {
		res = &pluginv1.Result{IsError: o.isError, Summary: o.summary}
	}
	res.Content = []*pluginv1.Content{{Kind: &pluginv1.Content_Text{Text: o.text}}}
	return res, nil
}

func (c *callbacks) Complete(ctx context.Context, callID, loopName string, messages json.RawMessage, _ []string, onText func(string)) (json.RawMessage, error) {
	sc, err := c.s.sub(callID)
	if err != nil {
		return nil, err
	}
	if loopName != "" && loopName != sc.loop.Name {
		return nil, fmt.Errorf("call %s runs the %s loop, not %s", callID, sc.loop.Name, loopName)
	}
	if c.roles == nil {
		return nil, errors.New("no model is configured for sub-agents")
	}
	prov, opts, err := c.roles(sc.loop.Role)
	if err != nil {
		return nil, fmt.Errorf("the %s role of the %s loop: %w", sc.loop.Role, sc.loop.Name, err)
	}
	var msgs []provider.Message
	if err := json.Unmarshal(messages, &msgs); err != nil {
		return nil, fmt.Errorf("decoding the sub-agent's messages: %w", err)
	}
	msgs = append([]provider.Message{{Role: provider.System, Content: sc.loop.System}}, msgs...)
	resp, err := prov.Complete(ctx, provider.Request{Model: opts.Model, Messages: msgs, Tools: c.s.toolsIn(sc.loop),
		Temperature: opts.Temperature, MaxTokens: opts.MaxTokens, ReasoningEffort: opts.ReasoningEffort}, onText)
	if err != nil {
		return nil, err
	}
	c.s.mu.Lock()
	addUsage(&c.s.total, resp.Usage)
	c.s.mu.Unlock()
	resp.Message.Role = provider.Assistant
	return json.Marshal(resp.Message)
}

// Late is a plugin.Callbacks whose target is set once the session exists
// (the plugins start before it).
type Late struct {
	mu     sync.RWMutex
	target plugin.Callbacks
}

// Set points the callbacks at their target.
func (l *Late) Set(t plugin.Callbacks) {
	l.mu.Lock()
	l.target = t
	l.mu.Unlock()
}

func (l *Late) get() (plugin.Callbacks, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.target == nil {
		return nil, errors.New("no session is running to serve host callbacks")
	}
	return l.target, nil
}

// AskHuman implements plugin.Callbacks.
func (l *Late) AskHuman(ctx context.Context, callID, q string, opts []string, custom bool) (string, bool, error) {
	t, err := l.get()
	if err != nil {
		return "", true, err
	}
	return t.AskHuman(ctx, callID, q, opts, custom)
}

// CallTool implements plugin.Callbacks.
func (l *Late) CallTool(ctx context.Context, callID, tool string, args json.RawMessage, p func(*pluginv1.Progress)) (*pluginv1.Result, error) {
	t, err := l.get()
	if err != nil {
		return nil, err
	}
	return t.CallTool(ctx, callID, tool, args, p)
}

// Complete implements plugin.Callbacks.
func (l *Late) Complete(ctx context.Context, callID, role string, msgs json.RawMessage, tools []string, onText func(string)) (json.RawMessage, error) {
	t, err := l.get()
	if err != nil {
		return nil, err
	}
	return t.Complete(ctx, callID, role, msgs, tools, onText)
}
