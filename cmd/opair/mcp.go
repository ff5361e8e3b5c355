package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/host/session"
)

func newMCPCmd() *cobra.Command {
	var mode, project string
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the loop's tools over the Model Context Protocol on stdio",
		Long: `Serve Opair's gated tools to another MCP client (an editor, another agent)
over stdio. The tools offered are those of the mode's loop; every call passes
the same gate as in a session (argument filters, path classes, rules,
read-before-edit, the repetition rule). A call that needs approval asks the
human through MCP elicitation when the client supports it; otherwise ask
means deny, and the client's model is told which rule would allow the call.
Calls are logged like a session ('opair sessions list').`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := permission.ParseMode(mode)
			if err != nil {
				return usageError{err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serveMCP(ctx, cmd.ErrOrStderr(), m, project)
		},
	}
	c.Flags().StringVar(&mode, "mode", "navigator", "the mode whose tools are served: navigator or driver")
	c.Flags().StringVar(&project, "project", "", "the project root (default: the current directory)")
	return c
}

func serveMCP(ctx context.Context, stderr io.Writer, mode permission.Mode, project string) error {
	h, err := setupHost(ctx, hostOptions{project: project, logOut: stderr})
	if err != nil {
		return err
	}
	defer h.close()
	state, err := session.StateDir()
	if err != nil {
		return err
	}
	log, err := session.Create(state, session.Meta{ID: session.NewID(), Project: h.root, Mode: string(mode), Loop: string(mode), Model: "mcp client", Started: time.Now()})
	if err != nil {
		return err
	}
	defer log.Close()
	asker := &mcpAsker{}
	s, err := session.New(session.Options{Root: h.root, Mode: mode, Config: h.cfg, Registry: h.reg, Plugins: h.plugins,
		Paths: h.paths, Asker: asker, Observer: &stderrObserver{w: stderr}, Log: log, HostEnv: os.Environ(), ConfigPath: h.cfgPath, MCP: mcpCaller(h)})
	if err != nil {
		return err
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "opair", Version: versionString()}, nil)
	var serial sync.Mutex // one call at a time: the asker follows the call in flight
	for _, e := range s.Offered() {
		name := e.Name
		server.AddTool(&mcp.Tool{Name: name, Description: e.Description, InputSchema: json.RawMessage(e.Parameters)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				serial.Lock()
				defer serial.Unlock()
				asker.begin(req)
				args := req.Params.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				text, isError, images := s.CallAsModel(ctx, name, args)
				if id, params := asker.pendingInput(); params != nil {
					// The human must answer first: the client asks and
					// retries the call with the answer (SEP-2322).
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{id: params}, RequestState: "opair-approval"}, nil
				}
				res := &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
				for _, img := range images {
					res.Content = append(res.Content, &mcp.ImageContent{MIMEType: img.MIMEType, Data: img.Data})
				}
				return res, nil
			})
	}
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("serving MCP: %w", err)
	}
	return nil
}

// mcpAsker asks the human through the client's elicitation, when the client
// supports it: during the call on older protocol versions, and on newer ones
// by returning the question with the call's result and reading the answer
// from the client's retry (multi round-trip requests, SEP-2322).
type mcpAsker struct {
	mu        sync.Mutex
	ss        *mcp.ServerSession
	responses mcp.InputResponseMap
	pendingID string
	pending   *mcp.ElicitParams
}

// errAwaitingInput aborts a call whose question goes back to the client.
var errAwaitingInput = errors.New("awaiting the human's answer through the MCP client")

func (a *mcpAsker) begin(req *mcp.CallToolRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ss, a.responses, a.pendingID, a.pending = req.Session, req.Params.InputResponses, "", nil
}

func (a *mcpAsker) pendingInput() (string, *mcp.ElicitParams) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pendingID, a.pending
}

func (a *mcpAsker) session() (*mcp.ServerSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ss == nil {
		return nil, session.ErrNoHuman
	}
	if p := a.ss.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return nil, session.ErrNoHuman
	}
	return a.ss, nil
}

// elicit asks one question: directly, or (protocol 2026-07-28 and later)
// through the client's retry, where id names the question.
func (a *mcpAsker) elicit(ctx context.Context, id string, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ss, err := a.session()
	if err != nil {
		return nil, err
	}
	if p := ss.InitializeParams(); p.ProtocolVersion < "2026-07-28" {
		return ss.Elicit(ctx, params)
	}
	sum := sha256.Sum256([]byte(params.Message))
	id += "-" + hex.EncodeToString(sum[:8])
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.responses[id].(*mcp.ElicitResult); ok {
		return r, nil
	}
	a.pendingID, a.pending = id, params
	return nil, errAwaitingInput
}

func (a *mcpAsker) Approve(ctx context.Context, ap session.Approval) (session.Answer, error) {
	var msg strings.Builder
	describeApproval(&msg, ap)
	choices := []string{"once", "reject"}
	if ap.CanAlways {
		choices = []string{"once", "always", "reject"}
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "enum": choices, "description": "Allow this call once, always for this session, or reject it."},
			"message":  map[string]any{"type": "string", "description": "If you reject it: a message for the model (optional)."},
		},
		"required": []string{"decision"},
	}
	res, err := a.elicit(ctx, "approve", &mcp.ElicitParams{Message: msg.String(), RequestedSchema: schema})
	if err != nil {
		return session.Answer{}, err
	}
	if res.Action != "accept" {
		return session.Answer{Kind: session.Reject}, nil
	}
	d, _ := res.Content["decision"].(string)
	m, _ := res.Content["message"].(string)
	switch d {
	case "once":
		return session.Answer{Kind: session.Once}, nil
	case "always":
		return session.Answer{Kind: session.Always}, nil
	}
	if strings.TrimSpace(m) != "" {
		return session.Answer{Kind: session.RejectWithMessage, Message: m}, nil
	}
	return session.Answer{Kind: session.Reject}, nil
}

func (a *mcpAsker) Question(ctx context.Context, question string, options []string, allowCustom bool) (string, bool, error) {
	answer := map[string]any{"type": "string", "description": "Your answer."}
	if len(options) > 0 && !allowCustom {
		answer["enum"] = options
	}
	res, err := a.elicit(ctx, "question", &mcp.ElicitParams{Message: question, RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"answer": answer}, "required": []string{"answer"},
	}})
	if err != nil {
		return "", true, err
	}
	if res.Action != "accept" {
		return "", true, nil
	}
	s, _ := res.Content["answer"].(string)
	return s, s == "", nil
}
