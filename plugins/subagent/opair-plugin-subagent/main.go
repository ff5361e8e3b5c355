// Command opair-plugin-subagent serves the sub-agent entry points (plan,
// reviewDiff): each runs a nested agent loop through the host's callback
// service. The host holds the model credentials and the loop definitions
// (role, system prompt, tool whitelist); every tool call the sub-agent makes
// goes back through the host's permission gate. The plugin only drives the
// loop: ask the model, run the tools it asks for, until it answers.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/opair-dev/opair/sdk"
)

// maxSteps bounds a sub-agent's tool rounds.
const maxSteps = 30

// message is a conversation message in the host's session format.
type message struct {
	Role       string     `json:"Role"`
	Content    string     `json:"Content"`
	ToolCalls  []toolCall `json:"ToolCalls,omitempty"`
	ToolCallID string     `json:"ToolCallID,omitempty"`
	Name       string     `json:"Name,omitempty"`
}

type toolCall struct {
	ID        string          `json:"ID"`
	Name      string          `json:"Name"`
	Arguments json.RawMessage `json:"Arguments"`
}

// task turns a call's arguments into the sub-agent's first message.
func task(call *sdk.Call) (string, error) {
	var a map[string]any
	if err := call.Decode(&a); err != nil {
		return "", err
	}
	switch call.Tool {
	case "plan":
		t, _ := a["task"].(string)
		if strings.TrimSpace(t) == "" {
			return "", errors.New(`plan needs {"task": "what to plan"}`)
		}
		return "Plan this task: " + t, nil
	case "reviewDiff":
		focus, _ := a["focus"].(string)
		if focus != "" {
			return "Review the working tree's changes, with this focus: " + focus, nil
		}
		return "Review the working tree's changes.", nil
	}
	b, _ := json.Marshal(a)
	return string(b), nil
}

func run(ctx context.Context, call *sdk.Call, p sdk.Progress) (*sdk.Result, error) {
	if call.Host == nil {
		return nil, errors.New("the host granted no callbacks: sub-agents need them to reach the model")
	}
	first, err := task(call)
	if err != nil {
		return sdk.Errorf("%v", err), nil
	}
	msgs := []message{{Role: "user", Content: first}}
	calls := 0
	for step := 0; step < maxSteps; step++ {
		raw, err := json.Marshal(msgs)
		if err != nil {
			return nil, err
		}
		_ = p.Status(fmt.Sprintf("%s: thinking (step %d)", call.Tool, step+1))
		reply, err := call.Host.Complete(ctx, call.Tool, raw, nil, nil)
		if err != nil {
			return nil, err
		}
		var m message
		if err := json.Unmarshal(reply, &m); err != nil {
			return nil, fmt.Errorf("decoding the model's reply: %w", err)
		}
		m.Role = "assistant"
		msgs = append(msgs, m)
		if len(m.ToolCalls) == 0 {
			return &sdk.Result{
				Content: []sdk.Content{{Text: m.Content}},
				Summary: fmt.Sprintf("%s done after %d tool calls", call.Tool, calls),
				Details: map[string]int{"steps": step + 1, "toolCalls": calls},
			}, nil
		}
		for _, tc := range m.ToolCalls {
			calls++
			_ = p.Status(fmt.Sprintf("%s: %s", call.Tool, tc.Name))
			res, err := call.Host.CallTool(ctx, tc.Name, tc.Arguments, p)
			if err != nil {
				return nil, err
			}
			var text strings.Builder
			for _, c := range res.Content {
				text.WriteString(c.Text)
			}
			msgs = append(msgs, message{Role: "tool", ToolCallID: tc.ID, Name: tc.Name, Content: text.String()})
		}
	}
	return sdk.Errorf("%s stopped after %d steps without an answer", call.Tool, maxSteps), nil
}

func main() {
	sdk.Serve(sdk.Plugin{
		Version:   "1.0.0",
		NeedsHost: true,
		Tools: map[string]sdk.Tool{
			"plan":       {Description: "A read-only planning sub-agent.", Handler: sdk.HandlerFunc(run)},
			"reviewDiff": {Description: "A review sub-agent for the working tree's diff.", Handler: sdk.HandlerFunc(run)},
		},
	})
}
