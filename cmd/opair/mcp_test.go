package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opair-dev/opair/host/provider/providertest"
)

// mcpClient starts `opair mcp` as a subprocess and connects the official
// MCP client to it over stdio.
func mcpClient(t *testing.T, env []string, opts *mcp.ClientOptions, args ...string) *mcp.ClientSession {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(opairBin, append([]string{"mcp"}, args...)...)
	cmd.Env = append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestMCPServesGatedTools(t *testing.T) {
	project := t.TempDir()
	writeFiles(t, project, map[string]string{"a.txt": "hello from the project\n"})
	ctx := context.Background()
	cs := mcpClient(t, nil, nil, "--project", project)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !contains(names, "readProjectFile") || contains(names, "editProjectFile") {
		t.Errorf("navigator tools over MCP: %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "readProjectFile", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "hello from the project") {
		t.Fatalf("read: %v %v %q", res, err, resultText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "readProjectFile", Arguments: map[string]any{"path": "../../etc/passwd"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "external") {
		t.Errorf("escape: %v %q", err, resultText(res))
	}
	// A client without elicitation: ask means deny, with the reason.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "npmTest", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "denied: this call needs the human's approval") {
		t.Errorf("untrusted without elicitation: %v %q", err, resultText(res))
	}
}

func TestMCPElicitation(t *testing.T) {
	tools := toolsDirWith(t, map[string]string{"shout.json": shoutTool})
	var asked []string
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		if len(asked) == 1 {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "reject", "message": "not now"}}, nil
	}}
	cs := mcpClient(t, []string{"OPAIR_TOOLS_DIR=" + tools}, opts, "--project", t.TempDir())
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"args": []string{"hi"}}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "hi\n[exit status 0]") {
		t.Fatalf("approved: %v %q", err, resultText(res))
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "shout wants to run") || !strings.Contains(asked[0], "/echo hi") {
		t.Errorf("elicitation: %q", asked)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"args": []string{"again"}}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "the human rejected this call, saying: not now") {
		t.Errorf("rejected: %v %q", err, resultText(res))
	}
}

// MCP servers listed in the config become tools named <server>_<tool>, in
// their own permission space: offered in driver mode only, asking by
// default, allowed by a rule keyed by their name. The server here is opair
// itself, serving its own tools over MCP.
func TestMCPServersBecomeTools(t *testing.T) {
	project := t.TempDir()
	writeFiles(t, project, map[string]string{"a.txt": "from the inner server\n"})
	cfg := filepath.Join(t.TempDir(), "config.json")
	write := func(rules string) {
		src := `{"mcpServers": {"inner": {"command": "` + opairBin + `", "args": ["mcp", "--project", "` + project + `"]}}` + rules + `}`
		if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	env := []string{"OPAIR_CONFIG=" + cfg}
	r := opair(t, env, "tools", "show", "inner_readProjectFile")
	if r.code != 0 || !strings.Contains(r.stdout, "In navigator mode:  not offered") || !strings.Contains(r.stdout, "In driver mode:     ask") {
		t.Fatalf("show: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	srv := providertest.NewOpenAI(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "inner_readProjectFile", Arguments: `{"path":"a.txt"}`}}},
		providertest.Reply{Text: "denied, as expected"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "inner_readProjectFile", Arguments: `{"path":"a.txt"}`}}},
		providertest.Reply{Text: "read it"},
	)
	r = opair(t, modelEnv(srv, env...), "run", "--mode", "driver", "--project", project, "read a.txt through the inner server")
	if r.code != 0 {
		t.Fatalf("run: %d\n%s", r.code, r.stderr)
	}
	if m := messagesOf(t, srv.Requests()[1]); !strings.Contains(m, `{\"tool\": \"inner_readProjectFile\"`) {
		t.Errorf("the denial does not name the rule:\n%s", m)
	}
	write(`, "permissions": [{"tool": "inner_*", "action": "allow"}]`)
	r = opair(t, modelEnv(srv, env...), "run", "--mode", "driver", "--project", project, "again")
	if r.code != 0 {
		t.Fatalf("run with the rule: %d\n%s", r.code, r.stderr)
	}
	if m := messagesOf(t, srv.Requests()[3]); !strings.Contains(m, "from the inner server") {
		t.Errorf("the MCP tool's result did not reach the model:\n%s", m)
	}
}
