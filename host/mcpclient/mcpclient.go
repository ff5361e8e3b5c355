// Package mcpclient connects to the MCP servers the user's config lists and
// turns their tools into Opair tools named <server>_<tool>. Those tools live
// in their own permission space: their effects are unknown to Opair, so they
// are offered only in driver mode and ask by default; rules keyed by their
// names may allow or deny them.
//
// It never decides a permission; the gate does.
package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opair-dev/opair/host/config"
	"github.com/opair-dev/opair/host/toolfile"
	"github.com/opair-dev/opair/internal/binpath"
	"github.com/opair-dev/opair/internal/childenv"
)

// Server is one connected MCP server.
type Server struct {
	Name    string
	session *mcp.ClientSession
	tools   []*mcp.Tool
}

// Connect starts one server with the allow-listed environment plus its own
// env and passEnv, and lists its tools.
func Connect(ctx context.Context, s config.MCPServer, hostEnv []string, root string) (*Server, error) {
	path, err := binpath.Lookup(s.Command, os.Getenv("PATH"))
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %w", s.Name, err)
	}
	env := childenv.Build(hostEnv)
	var extra []string
	for k, v := range s.Env {
		extra = append(extra, k+"="+v)
	}
	for _, name := range s.PassEnv {
		if v, ok := childenv.Lookup(hostEnv, name); ok {
			extra = append(extra, name+"="+v)
		}
	}
	cmd := exec.Command(path, s.Args...)
	cmd.Env = childenv.Merge(env, extra)
	cmd.Dir = root
	client := mcp.NewClient(&mcp.Implementation{Name: "opair", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s (%s): %w", s.Name, s.Source, err)
	}
	srv := &Server{Name: s.Name, session: cs}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("MCP server %s: listing its tools: %w", s.Name, err)
		}
		srv.tools = append(srv.tools, t)
	}
	return srv, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.session.Close() }

// ToolName is the Opair name of a server's tool.
func ToolName(server, tool string) string { return server + "_" + tool }

// Tools returns the server's tools as Opair tools: reads and writes external
// (their effects are unknown), served by "mcp:<server>".
func (s *Server) Tools() []*toolfile.Tool {
	var out []*toolfile.Tool
	for _, t := range s.tools {
		params, err := json.Marshal(t.InputSchema)
		if err != nil || len(params) == 0 || string(params) == "null" {
			params = []byte(`{"type":"object"}`)
		}
		name := ToolName(s.Name, t.Name)
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		desc = strings.TrimSpace(desc + " (MCP server " + s.Name + ")")
		schema, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]any{"name": name, "description": desc, "parameters": json.RawMessage(params)}})
		out = append(out, &toolfile.Tool{
			File: "mcp:" + s.Name, Name: name, Description: desc, Parameters: params, Schema: schema,
			Kind: toolfile.KindMCP, Server: "mcp:" + s.Name,
			Reads: toolfile.External, Writes: toolfile.External,
		})
	}
	return out
}

// Call runs one tool of the server.
func (s *Server) Call(ctx context.Context, tool string, args json.RawMessage) (text string, isError bool, err error) {
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, fmt.Errorf("MCP server %s: %w", s.Name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		default:
			fmt.Fprintf(&b, "[%T content]", c)
		}
	}
	return b.String(), res.IsError, nil
}

// Set is the connected servers of a session.
type Set struct {
	mu      sync.Mutex
	servers map[string]*Server
}

// ConnectAll connects every configured server; a server that fails is
// reported in errs and its tools are missing.
func ConnectAll(ctx context.Context, servers map[string]config.MCPServer, hostEnv []string, root string) (*Set, []error) {
	set := &Set{servers: map[string]*Server{}}
	var errs []error
	for name, s := range servers {
		srv, err := Connect(ctx, s, hostEnv, root)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		set.servers[name] = srv
	}
	return set, errs
}

// Tools returns every connected server's tools.
func (s *Set) Tools() []*toolfile.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*toolfile.Tool
	for _, srv := range s.servers {
		out = append(out, srv.Tools()...)
	}
	return out
}

// Call runs an Opair-named MCP tool (<server>_<tool>).
func (s *Set) Call(ctx context.Context, t *toolfile.Tool, args json.RawMessage) (string, bool, error) {
	server := strings.TrimPrefix(t.Server, "mcp:")
	s.mu.Lock()
	srv, ok := s.servers[server]
	s.mu.Unlock()
	if !ok {
		return "", false, fmt.Errorf("MCP server %s is not connected", server)
	}
	return srv.Call(ctx, strings.TrimPrefix(t.Name, server+"_"), args)
}

// Close stops every server.
func (s *Set) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range s.servers {
		_ = srv.Close()
	}
}
