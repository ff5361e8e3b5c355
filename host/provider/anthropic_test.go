package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opair-dev/opair/host/provider"
	"github.com/opair-dev/opair/host/provider/providertest"
)

func anthropicConfig(url string) provider.Config {
	return provider.Config{BaseURL: url, APIKey: "test-key", APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-test", RetryDelay: 5 * time.Millisecond}
}

func TestAnthropicStreamsText(t *testing.T) {
	srv := providertest.NewAnthropic(t, providertest.Reply{Text: "Hello from Claude.", Usage: &providertest.Usage{InputTokens: 300, OutputTokens: 5, CachedInputTokens: 200}})
	p := provider.NewAnthropic(anthropicConfig(srv.URL()))
	if p.Name() != "anthropic" {
		t.Errorf("Name = %q", p.Name())
	}
	onText, deltas := collect()
	msgs := []provider.Message{
		{Role: provider.System, Content: "You are terse."},
		{Role: provider.User, Content: "Hi"},
		{Role: provider.System, Content: "Answer in English."},
	}
	resp, err := p.Complete(context.Background(), provider.Request{Messages: msgs}, onText)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Hello ", "from ", "Claude."}; !reflect.DeepEqual(deltas(), want) {
		t.Errorf("deltas %q, want %q", deltas(), want)
	}
	want := &provider.Response{
		Message:    provider.Message{Role: provider.Assistant, Content: "Hello from Claude."},
		Usage:      provider.Usage{InputTokens: 300, OutputTokens: 5, CachedInputTokens: 200},
		StopReason: provider.StopEnd,
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response %+v, want %+v", resp, want)
	}
	r := srv.Recorded()[0]
	if r.Path != "/v1/messages" || r.Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("%s, Authorization %q", r.Path, r.Header.Get("Authorization"))
	}
	body := srv.Requests()[0]
	wantSystem := []any{map[string]any{"type": "text", "text": "You are terse."}, map[string]any{"type": "text", "text": "Answer in English."}}
	if !reflect.DeepEqual(body["system"], wantSystem) {
		t.Errorf("system = %v", body["system"])
	}
	wantMsgs := []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hi"}}}}
	if !reflect.DeepEqual(body["messages"], wantMsgs) {
		t.Errorf("messages = %v", body["messages"])
	}
	if body["stream"] != true || body["model"] != "claude-test" || body["max_tokens"] != float64(provider.DefaultAnthropicMaxTokens) {
		t.Errorf("body %v", body)
	}
}

func TestAnthropicToolUseRoundTrip(t *testing.T) {
	srv := providertest.NewAnthropic(t,
		providertest.Reply{Text: "Let me check.", ToolCalls: []providertest.ToolCall{
			{Name: "readProjectFile", Arguments: `{"path": "go.mod", "lines": [1, 20]}`},
			{Name: "grep", Arguments: `{"pattern": "func \\w+\\(", "note": "élan ✓"}`},
		}},
		providertest.Reply{Text: "The module is x."})
	p := provider.NewAnthropic(anthropicConfig(srv.URL()))
	msgs := []provider.Message{{Role: provider.System, Content: "sys"}, {Role: provider.User, Content: "What module?"}}
	resp, err := p.Complete(context.Background(), provider.Request{Messages: msgs, Tools: tools()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []provider.ToolCall{
		{ID: "toolu_01", Name: "readProjectFile", Arguments: json.RawMessage(`{"path": "go.mod", "lines": [1, 20]}`)},
		{ID: "toolu_02", Name: "grep", Arguments: json.RawMessage(`{"pattern": "func \\w+\\(", "note": "élan ✓"}`)},
	}
	if !reflect.DeepEqual(resp.Message.ToolCalls, wantCalls) || resp.StopReason != provider.StopToolCalls || resp.Message.Content != "Let me check." {
		t.Fatalf("response %+v\n%s", resp, show(resp.Message.ToolCalls))
	}
	// The tools went out exactly as defined.
	body := srv.Recorded()[0].Body
	for i, tool := range tools() {
		if got, want := compact(t, rawField(t, body, "tools", i, "input_schema")), compact(t, tool.Parameters); got != want {
			t.Errorf("tool %s input_schema changed:\n got %s\nwant %s", tool.Name, got, want)
		}
		strict := rawField(t, body, "tools", i, "strict")
		if (tool.Strict == nil) != (strict == nil) || (tool.Strict != nil && string(strict) != map[bool]string{true: "true", false: "false"}[*tool.Strict]) {
			t.Errorf("tool %s strict = %s", tool.Name, strict)
		}
	}

	// Send the results back: they become tool_result blocks in one user
	// message, followed by the user's next words.
	png := provider.Image{MIMEType: "image/png", Data: []byte("png")}
	msgs = append(msgs, resp.Message,
		provider.Message{Role: provider.ToolRole, ToolCallID: "toolu_01", Name: "readProjectFile", Content: "module x"},
		provider.Message{Role: provider.ToolRole, ToolCallID: "toolu_02", Name: "grep", Content: "", Images: []provider.Image{png}},
		provider.Message{Role: provider.User, Content: "Be brief."})
	resp, err = p.Complete(context.Background(), provider.Request{Messages: msgs, Tools: tools()}, nil)
	if err != nil || resp.Message.Content != "The module is x." {
		t.Fatalf("second turn: %+v, %v", resp, err)
	}
	got := srv.Requests()[1]["messages"]
	want := []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "What module?"}}},
		map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Let me check."},
			map[string]any{"type": "tool_use", "id": "toolu_01", "name": "readProjectFile", "input": map[string]any{"path": "go.mod", "lines": []any{1.0, 20.0}}},
			map[string]any{"type": "tool_use", "id": "toolu_02", "name": "grep", "input": map[string]any{"pattern": `func \w+\(`, "note": "élan ✓"}},
		}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_01", "content": []any{map[string]any{"type": "text", "text": "module x"}}},
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_02", "content": []any{
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "cG5n"}},
			}},
			map[string]any{"type": "text", "text": "Be brief."},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("messages:\n%s", g)
	}
}

func TestAnthropicOptions(t *testing.T) {
	srv := providertest.NewAnthropic(t, providertest.Reply{Text: "ok"})
	temp := 0.5
	req := provider.Request{Messages: conversation(), MaxTokens: 1000, ReasoningEffort: "low", Temperature: &temp, Model: "claude-other"}
	if _, err := provider.NewAnthropic(anthropicConfig(srv.URL())).Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0]
	if body["max_tokens"] != 1000.0 || !reflect.DeepEqual(body["output_config"], map[string]any{"effort": "low"}) || body["model"] != "claude-other" {
		t.Errorf("body %v", body)
	}
	if _, ok := body["temperature"]; ok {
		t.Errorf("temperature sent to an API version without it")
	}
}

func TestAnthropicRetries(t *testing.T) {
	srv := providertest.NewAnthropic(t,
		providertest.Reply{Status: 429, Header: map[string]string{"retry-after-ms": "50"}},
		providertest.Reply{Status: 529, Error: "Overloaded"},
		providertest.Reply{StreamError: "overloaded_error"},
		providertest.Reply{Text: "made it"})
	cfg := anthropicConfig(srv.URL())
	var waits []time.Duration
	cfg.OnRetry = func(_ int, wait time.Duration, _ error) { waits = append(waits, wait) }
	resp, err := provider.NewAnthropic(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "made it" || len(srv.Recorded()) != 4 {
		t.Errorf("%q after %d requests", resp.Message.Content, len(srv.Recorded()))
	}
	if len(waits) != 3 || waits[0] != 50*time.Millisecond {
		t.Errorf("waits %v", waits)
	}
}

func TestAnthropicErrors(t *testing.T) {
	srv := providertest.NewAnthropic(t,
		providertest.Reply{Status: 401, Error: "invalid x-api-key"},
		providertest.Reply{Status: 404, Error: "model: claude-nope"},
		providertest.Reply{StreamError: "invalid_request_error"})
	p := provider.NewAnthropic(anthropicConfig(srv.URL()))
	_, err := p.Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	if err == nil || !strings.Contains(err.Error(), "the API key in $ANTHROPIC_API_KEY was rejected by "+srv.URL()+"; check it") || !strings.Contains(err.Error(), "invalid x-api-key") {
		t.Errorf("401: %v", err)
	}
	_, err = p.Complete(context.Background(), provider.Request{Messages: conversation(), Model: "claude-nope"}, nil)
	if err == nil || !strings.Contains(err.Error(), "model claude-nope not found at "+srv.URL()) {
		t.Errorf("404: %v", err)
	}
	_, err = p.Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	var ae *provider.APIError
	if !errors.As(err, &ae) || ae.Type != "invalid_request_error" || ae.Temporary() {
		t.Errorf("stream error: %v", err)
	}
	if n := len(srv.Recorded()); n != 3 {
		t.Errorf("%d requests, want 3 (none retried)", n)
	}
}

func TestAnthropicCancelMidStream(t *testing.T) {
	srv := providertest.NewAnthropic(t, providertest.Reply{Text: "one two three", Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var at time.Time
	resp, err := provider.NewAnthropic(anthropicConfig(srv.URL())).Complete(ctx, provider.Request{Messages: conversation()}, func(string) {
		at = time.Now()
		cancel()
	})
	if !errors.Is(err, context.Canceled) || resp != nil || time.Since(at) > 2*time.Second {
		t.Errorf("Complete = %v, %v, %s after the cancel", resp, err, time.Since(at))
	}
}

func TestFromRole(t *testing.T) {
	env := map[string]string{"MY_KEY": "secret"}
	getenv := func(k string) string { return env[k] }
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "hi"})
	p, err := provider.FromRole(provider.Spec{ProviderType: "openai", BaseURL: srv.URL(), APIKeyEnv: "MY_KEY", Model: "m"}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), provider.Request{Messages: conversation()}, nil); err != nil {
		t.Fatal(err)
	}
	if h := srv.Recorded()[0].Header.Get("Authorization"); h != "Bearer secret" {
		t.Errorf("Authorization %q", h)
	}
	if p, err := provider.FromRole(provider.Spec{ProviderType: "anthropic", APIKeyEnv: "MY_KEY", Model: "m"}, getenv); err != nil || p.Name() != "anthropic" {
		t.Errorf("anthropic: %v, %v", p, err)
	}
	if _, err := provider.FromRole(provider.Spec{ProviderType: "anthropic", APIKeyEnv: "ANTHROPIC_API_KEY", Model: "m"}, getenv); err == nil ||
		!strings.Contains(err.Error(), "ANTHROPIC_API_KEY is not set") || !strings.Contains(err.Error(), "export ANTHROPIC_API_KEY=") {
		t.Errorf("unset key: %v", err)
	}
	if _, err := provider.FromRole(provider.Spec{ProviderType: "gemini", Model: "m"}, getenv); err == nil || !strings.Contains(err.Error(), `unknown provider type "gemini"`) {
		t.Errorf("unknown type: %v", err)
	}
	// A local server needs no key.
	if _, err := provider.FromRole(provider.Spec{ProviderType: "openai", BaseURL: "http://localhost:11434/v1", Model: "qwen3"}, getenv); err != nil {
		t.Errorf("no key: %v", err)
	}
}

// TestNothingFromTheEnvironment checks that the SDKs' environment defaults
// are bypassed: only the Config decides where requests go and what they
// carry.
func TestNothingFromTheEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "env-openai-key")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	t.Setenv("ANTHROPIC_API_KEY", "env-anthropic-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")

	o := providertest.NewOpenAI(t, providertest.Reply{Text: "ok"})
	cfg := fast(o.URL())
	cfg.APIKey = ""
	if _, err := provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil); err != nil {
		t.Fatal(err)
	}
	a := providertest.NewAnthropic(t, providertest.Reply{Text: "ok"})
	cfg = anthropicConfig(a.URL())
	cfg.APIKey = ""
	if _, err := provider.NewAnthropic(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range append(o.Recorded(), a.Recorded()...) {
		for k, v := range r.Header {
			joined := strings.Join(v, ",")
			if strings.Contains(joined, "env-") || strings.Contains(joined, "org-env") || strings.Contains(joined, "proj-env") || k == "X-Leak" || k == "Authorization" || k == "X-Api-Key" {
				t.Errorf("%s: header %s: %s comes from the environment", r.Path, k, joined)
			}
		}
	}
}
