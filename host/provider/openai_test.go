package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opair-dev/opair/host/provider"
	"github.com/opair-dev/opair/host/provider/providertest"
)

// fast is a config that retries without waiting long.
func fast(url string) provider.Config {
	return provider.Config{BaseURL: url, APIKey: "test-key", APIKeyEnv: "OPENAI_API_KEY", Model: "test-model", RetryDelay: 5 * time.Millisecond}
}

func conversation() []provider.Message {
	return []provider.Message{
		{Role: provider.System, Content: "You are terse."},
		{Role: provider.User, Content: "Hi"},
	}
}

// compact canonicalises JSON without reordering anything: white space is
// dropped and every string and number is re-encoded the one way (so "<" and
// "\u003c" compare equal), keys staying where they were. Equal results mean
// the same keywords in the same order with the same values.
func compact(t *testing.T, raw []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	if err := canon(dec, &b); err != nil {
		t.Fatalf("canonicalise %s: %v", raw, err)
	}
	return b.String()
}

func canon(dec *json.Decoder, b *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	str := func(s string) {
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		b.Truncate(b.Len() - 1) // the encoder's newline
	}
	switch v := tok.(type) {
	case json.Delim:
		open, end := byte(v), byte(']')
		if v == '{' {
			end = '}'
		}
		b.WriteByte(open)
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if v == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				str(k.(string))
				b.WriteByte(':')
			}
			if err := canon(dec, b); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		b.WriteByte(end)
	case string:
		str(v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		fmt.Fprint(b, v)
	case nil:
		b.WriteString("null")
	}
	return nil
}

// rawField walks a raw JSON body along keys and array indexes, keeping the
// bytes of the value found (so key order is kept).
func rawField(t *testing.T, body []byte, path ...any) json.RawMessage {
	t.Helper()
	cur := json.RawMessage(body)
	for _, p := range path {
		switch p := p.(type) {
		case string:
			var m map[string]json.RawMessage
			if err := json.Unmarshal(cur, &m); err != nil {
				t.Fatalf("%v: %v in %s", path, err, cur)
			}
			v, ok := m[p]
			if !ok {
				return nil
			}
			cur = v
		case int:
			var a []json.RawMessage
			if err := json.Unmarshal(cur, &a); err != nil || p >= len(a) {
				t.Fatalf("%v: %v (index %d) in %s", path, err, p, cur)
			}
			cur = a[p]
		}
	}
	return cur
}

// collect returns an onText that records the deltas.
func collect() (func(string), func() []string) {
	var mu sync.Mutex
	var got []string
	return func(s string) {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		}, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), got...)
		}
}

func TestOpenAIStreamsText(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "Hello there, how are you?", Usage: &providertest.Usage{InputTokens: 120, OutputTokens: 7, CachedInputTokens: 64}})
	p := provider.NewOpenAI(fast(srv.URL()))
	if p.Name() != "openai" {
		t.Errorf("Name = %q", p.Name())
	}
	onText, deltas := collect()
	resp, err := p.Complete(context.Background(), provider.Request{Messages: conversation()}, onText)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Hello ", "there, ", "how ", "are ", "you?"}; !reflect.DeepEqual(deltas(), want) {
		t.Errorf("deltas = %q, want %q", deltas(), want)
	}
	want := &provider.Response{
		Message:    provider.Message{Role: provider.Assistant, Content: "Hello there, how are you?"},
		Usage:      provider.Usage{InputTokens: 120, OutputTokens: 7, CachedInputTokens: 64},
		StopReason: provider.StopEnd,
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
	}
	reqs := srv.Recorded()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("request %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
	}
	body := srv.Requests()[0]
	if body["stream"] != true || !reflect.DeepEqual(body["stream_options"], map[string]any{"include_usage": true}) || body["model"] != "test-model" {
		t.Errorf("body: %v", body)
	}
	wantMsgs := []any{
		map[string]any{"role": "system", "content": "You are terse."},
		map[string]any{"role": "user", "content": "Hi"},
	}
	if !reflect.DeepEqual(body["messages"], wantMsgs) {
		t.Errorf("messages = %v", body["messages"])
	}
	for _, k := range []string{"tools", "temperature", "max_tokens", "max_completion_tokens", "reasoning_effort"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent though not set: %v", k, body[k])
		}
	}
}

func TestOpenAIAssemblesToolCalls(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{
		Text: "Let me look.",
		ToolCalls: []providertest.ToolCall{
			{Name: "readProjectFile", Arguments: `{"path": "go.mod", "lines": [1, 20]}`},
			{ID: "call_custom", Name: "grep", Arguments: `{"pattern": "func \\w+\\(", "glob": "**/*.go", "note": "élan ✓"}`},
			{Name: "listFiles"},
		},
	})
	p := provider.NewOpenAI(fast(srv.URL()))
	resp, err := p.Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.ToolCall{
		{ID: "call_1", Name: "readProjectFile", Arguments: json.RawMessage(`{"path": "go.mod", "lines": [1, 20]}`)},
		{ID: "call_custom", Name: "grep", Arguments: json.RawMessage(`{"pattern": "func \\w+\\(", "glob": "**/*.go", "note": "élan ✓"}`)},
		{ID: "call_3", Name: "listFiles", Arguments: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
		t.Errorf("tool calls:\n%s\nwant\n%s", show(resp.Message.ToolCalls), show(want))
	}
	if resp.Message.Content != "Let me look." || resp.StopReason != provider.StopToolCalls {
		t.Errorf("content %q, stop %q", resp.Message.Content, resp.StopReason)
	}
}

func show(calls []provider.ToolCall) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.ID + " " + c.Name + " " + string(c.Arguments) + "\n")
	}
	return b.String()
}

// schemas are tool parameters with keywords an SDK type would drop or
// reorder, and characters json.Marshal would escape.
var schemas = []string{
	`{
  "type": "object",
  "properties": {
    "zeta": {"type": "string", "pattern": "^<[a-z]+>&$", "description": "a <tag> & more"},
    "alpha": {"type": "integer", "minimum": 0, "maximum": 10, "x-opair-unit": "lines"},
    "mode": {"enum": ["fast", "slow"], "default": "fast"}
  },
  "required": ["zeta"],
  "additionalProperties": false,
  "$defs": {"unused": {"type": "null"}}
}`,
	`{"type": "object", "properties": {}, "additionalProperties": false}`,
	`{"properties": {"q": {"anyOf": [{"type": "string"}, {"type": "null"}]}}, "type": "object"}`,
}

func tools() []provider.Tool {
	yes, no := true, false
	return []provider.Tool{
		{Name: "search", Description: "Search the project. Use <b>bold</b> & care.", Parameters: json.RawMessage(schemas[0]), Strict: &yes},
		{Name: "listFiles", Description: "List files.", Parameters: json.RawMessage(schemas[1]), Strict: &no},
		{Name: "query", Description: "", Parameters: json.RawMessage(schemas[2])},
	}
}

func TestOpenAISendsToolsExactly(t *testing.T) {
	// The canonical form keeps key order and ignores only spelling.
	if compact(t, []byte(`{"a": 1, "b": "<"}`)) != compact(t, []byte(`{"a":1,"b":"\u003c"}`)) ||
		compact(t, []byte(`{"a": 1, "b": 2}`)) == compact(t, []byte(`{"b": 2, "a": 1}`)) {
		t.Fatal("compact is not the canonical form the test needs")
	}
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "ok"})
	p := provider.NewOpenAI(fast(srv.URL()))
	if _, err := p.Complete(context.Background(), provider.Request{Messages: conversation(), Tools: tools()}, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Recorded()[0].Body
	for i, tool := range tools() {
		if got := string(rawField(t, body, "tools", i, "type")); got != `"function"` {
			t.Errorf("tool %d type %s", i, got)
		}
		params := rawField(t, body, "tools", i, "function", "parameters")
		if got, want := compact(t, params), compact(t, tool.Parameters); got != want {
			t.Errorf("tool %s parameters changed:\n got %s\nwant %s", tool.Name, got, want)
		}
		if got := string(rawField(t, body, "tools", i, "function", "name")); got != `"`+tool.Name+`"` {
			t.Errorf("tool %d name %s", i, got)
		}
		strict := rawField(t, body, "tools", i, "function", "strict")
		switch {
		case tool.Strict == nil && strict != nil:
			t.Errorf("tool %s: strict sent though not set: %s", tool.Name, strict)
		case tool.Strict != nil && string(strict) != map[bool]string{true: "true", false: "false"}[*tool.Strict]:
			t.Errorf("tool %s: strict = %s, want %v", tool.Name, strict, *tool.Strict)
		}
		desc := rawField(t, body, "tools", i, "function", "description")
		if tool.Description == "" && desc != nil {
			t.Errorf("tool %s: empty description sent: %s", tool.Name, desc)
		}
	}
	// Through the OpenAI SDK the bytes are even the very same, escapes and
	// all: only white space is dropped.
	for _, tool := range tools() {
		var b bytes.Buffer
		_ = json.Compact(&b, tool.Parameters)
		if !bytes.Contains(body, b.Bytes()) {
			t.Errorf("tool %s: the body does not hold its parameters verbatim:\n%s", tool.Name, b.Bytes())
		}
	}
	if got := string(rawField(t, body, "tools", 0, "function", "description")); got != `"Search the project. Use <b>bold</b> & care."` {
		t.Errorf("description = %s", got)
	}
}

func TestOpenAIOptions(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "ok"})
	p := provider.NewOpenAI(fast(srv.URL()))
	temp := 0.2
	req := provider.Request{Model: "other-model", Messages: conversation(), Temperature: &temp, MaxTokens: 512, ReasoningEffort: "high"}
	if _, err := p.Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0]
	if body["model"] != "other-model" || body["temperature"] != 0.2 || body["max_tokens"] != 512.0 || body["reasoning_effort"] != "high" {
		t.Errorf("body: %v", body)
	}
}

func TestOpenAIConversation(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "ok"})
	p := provider.NewOpenAI(fast(srv.URL()))
	png := provider.Image{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}
	msgs := []provider.Message{
		{Role: provider.System, Content: "sys"},
		{Role: provider.User, Content: "look at this", Images: []provider.Image{png}},
		{Role: provider.Assistant, Content: "", ToolCalls: []provider.ToolCall{
			{ID: "c1", Name: "screenshot", Arguments: json.RawMessage(`{"url": "x"}`)},
			{ID: "c2", Name: "listFiles", Arguments: nil},
		}},
		{Role: provider.ToolRole, ToolCallID: "c1", Name: "screenshot", Content: "saved", Images: []provider.Image{png}},
		{Role: provider.ToolRole, ToolCallID: "c2", Name: "listFiles", Content: "a.go\nb.go"},
		{Role: provider.Assistant, Content: "Done."},
		{Role: provider.User, Content: "thanks"},
	}
	if _, err := p.Complete(context.Background(), provider.Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]["messages"].([]any)
	dataURL := "data:image/png;base64,iVBORw=="
	want := []any{
		map[string]any{"role": "system", "content": "sys"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "look at this"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL}},
		}},
		map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "screenshot", "arguments": `{"url": "x"}`}},
			map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "listFiles", "arguments": `{}`}},
		}},
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": "saved"},
		map[string]any{"role": "tool", "tool_call_id": "c2", "content": "a.go\nb.go"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "The images of the result of screenshot (call c1):"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL}},
		}},
		map[string]any{"role": "assistant", "content": "Done."},
		map[string]any{"role": "user", "content": "thanks"},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("messages:\n%s", g)
	}
}

func TestOpenAIRetriesAfterRetryAfter(t *testing.T) {
	srv := providertest.NewOpenAI(t,
		providertest.Reply{Status: http.StatusTooManyRequests, Error: "Rate limit reached", Header: map[string]string{"Retry-After": "1"}},
		providertest.Reply{Text: "finally"})
	cfg := fast(srv.URL())
	var waits []time.Duration
	cfg.OnRetry = func(attempt int, wait time.Duration, err error) {
		waits = append(waits, wait)
		var ae *provider.APIError
		if attempt != 1 || !errors.As(err, &ae) || ae.Status != 429 {
			t.Errorf("OnRetry(%d, %s, %v)", attempt, wait, err)
		}
	}
	start := time.Now()
	resp, err := provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "finally" || len(srv.Recorded()) != 2 {
		t.Errorf("content %q after %d requests", resp.Message.Content, len(srv.Recorded()))
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("retried after %s, before the Retry-After of 1s", el)
	}
	if !reflect.DeepEqual(waits, []time.Duration{time.Second}) {
		t.Errorf("waits %v", waits)
	}
}

func TestOpenAIRetriesServerErrors(t *testing.T) {
	srv := providertest.NewOpenAI(t,
		providertest.Reply{Status: 500, Error: "boom"},
		providertest.Reply{Status: 503},
		providertest.Reply{Text: "up again"})
	resp, err := provider.NewOpenAI(fast(srv.URL())).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "up again" || len(srv.Recorded()) != 3 {
		t.Errorf("content %q after %d requests", resp.Message.Content, len(srv.Recorded()))
	}
}

func TestOpenAIRetriesRunOut(t *testing.T) {
	srv := providertest.NewOpenAI(t,
		providertest.Reply{Status: 502}, providertest.Reply{Status: 502}, providertest.Reply{Status: 502, Error: "bad gateway, last"})
	cfg := fast(srv.URL())
	cfg.MaxRetries = 2
	_, err := provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	var ae *provider.APIError
	if !errors.As(err, &ae) || ae.Status != 502 || !strings.Contains(err.Error(), "bad gateway, last") {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Recorded()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	// No retries at all.
	srv = providertest.NewOpenAI(t, providertest.Reply{Status: 500})
	cfg = fast(srv.URL())
	cfg.MaxRetries = -1
	if _, err := provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil); err == nil || len(srv.Recorded()) != 1 {
		t.Errorf("MaxRetries -1: %v after %d requests", err, len(srv.Recorded()))
	}
}

func TestOpenAIUnauthorized(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Status: 401, Error: "Incorrect API key provided: test-***key."})
	_, err := provider.NewOpenAI(fast(srv.URL())).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	var ae *provider.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Provider != "openai" {
		t.Fatalf("err = %#v", err)
	}
	for _, want := range []string{"the API key in $OPENAI_API_KEY was rejected by " + srv.URL() + "; check it", "Incorrect API key provided", "401"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not contain %q", err, want)
		}
	}
	if n := len(srv.Recorded()); n != 1 {
		t.Errorf("401 retried: %d requests", n)
	}
}

func TestOpenAINoKey(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "local"}, providertest.Reply{Status: 401})
	cfg := fast(srv.URL())
	cfg.APIKey, cfg.APIKeyEnv = "", ""
	p := provider.NewOpenAI(cfg)
	if _, err := p.Complete(context.Background(), provider.Request{Messages: conversation()}, nil); err != nil {
		t.Fatal(err)
	}
	if h := srv.Recorded()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a key", h)
	}
	_, err := p.Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	if err == nil || !strings.Contains(err.Error(), "requires an API key and none was sent") {
		t.Errorf("401 without a key: %v", err)
	}
}

func TestOpenAINotFound(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Status: 404, Error: "The model `gpt-9` does not exist or you do not have access to it."})
	cfg := fast(srv.URL())
	cfg.Model = "gpt-9"
	_, err := provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	var ae *provider.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Type != "model_not_found" {
		t.Fatalf("err = %#v", err)
	}
	for _, want := range []string{"model gpt-9 not found at " + srv.URL(), "does not exist"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not contain %q", err, want)
		}
	}
	if n := len(srv.Recorded()); n != 1 {
		t.Errorf("404 retried: %d requests", n)
	}
}

func TestOpenAICancelMidStream(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "first second third", Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	var cancelledAt time.Time
	onText := func(s string) {
		got = append(got, s)
		cancelledAt = time.Now()
		cancel() // the first delta arrived while the server still streams
	}
	resp, err := provider.NewOpenAI(fast(srv.URL())).Complete(ctx, provider.Request{Messages: conversation()}, onText)
	if !errors.Is(err, context.Canceled) || resp != nil {
		t.Fatalf("Complete = %v, %v; want context.Canceled", resp, err)
	}
	if el := time.Since(cancelledAt); el > 2*time.Second {
		t.Errorf("returned %s after the cancel", el)
	}
	if !reflect.DeepEqual(got, []string{"first "}) {
		t.Errorf("deltas %q", got)
	}
	if n := len(srv.Recorded()); n != 1 {
		t.Errorf("%d requests after a cancel", n)
	}
}

func TestOpenAICancelWhileWaitingToRetry(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Status: 429, Header: map[string]string{"Retry-After": "60"}})
	ctx, cancel := context.WithCancel(context.Background())
	cfg := fast(srv.URL())
	cfg.OnRetry = func(int, time.Duration, error) { cancel() }
	start := time.Now()
	_, err := provider.NewOpenAI(cfg).Complete(ctx, provider.Request{Messages: conversation()}, nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("err %v after %s", err, time.Since(start))
	}
}

func TestOpenAIIdleTimeout(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Delay: 10 * time.Second, Text: "too late"})
	cfg := fast(srv.URL())
	cfg.Timeout = 100 * time.Millisecond
	cfg.MaxRetries = -1
	start := time.Now()
	_, err := provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	var idle *provider.IdleError
	if !errors.As(err, &idle) || time.Since(start) > 5*time.Second {
		t.Errorf("err = %v after %s", err, time.Since(start))
	}
	// A stream that stalls after its first words is not retried: they have
	// been shown.
	srv = providertest.NewOpenAI(t, providertest.Reply{Text: "partial answer", Hang: true})
	cfg = fast(srv.URL())
	cfg.Timeout = 100 * time.Millisecond
	onText, deltas := collect()
	_, err = provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation()}, onText)
	if !errors.As(err, &idle) || len(srv.Recorded()) != 1 || len(deltas()) != 1 {
		t.Errorf("stalled stream: %v after %d requests, deltas %q", err, len(srv.Recorded()), deltas())
	}
}

func TestOpenAIStreamError(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{StreamError: "server_error"})
	_, err := provider.NewOpenAI(fast(srv.URL())).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	var ae *provider.APIError
	if !errors.As(err, &ae) || ae.Type != "server_error" || !strings.Contains(err.Error(), "failed in the middle of the reply") {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	_, err = provider.NewOpenAI(fast(url)).Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
	var ce *provider.ConnError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cannot reach "+url) {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAINonStreamed(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{
		Text:      "Reading it.",
		ToolCalls: []providertest.ToolCall{{Name: "readProjectFile", Arguments: `{"path": "a"}`}, {Name: "grep", Arguments: `{"pattern": "x"}`}},
		Usage:     &providertest.Usage{InputTokens: 50, OutputTokens: 9},
	})
	cfg := fast(srv.URL())
	cfg.NoStream = true
	onText, deltas := collect()
	resp, err := provider.NewOpenAI(cfg).Complete(context.Background(), provider.Request{Messages: conversation(), Tools: tools()}, onText)
	if err != nil {
		t.Fatal(err)
	}
	want := &provider.Response{
		Message: provider.Message{Role: provider.Assistant, Content: "Reading it.", ToolCalls: []provider.ToolCall{
			{ID: "call_1", Name: "readProjectFile", Arguments: json.RawMessage(`{"path": "a"}`)},
			{ID: "call_2", Name: "grep", Arguments: json.RawMessage(`{"pattern": "x"}`)},
		}},
		Usage:      provider.Usage{InputTokens: 50, OutputTokens: 9},
		StopReason: provider.StopToolCalls,
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v", resp)
	}
	if !reflect.DeepEqual(deltas(), []string{"Reading it."}) {
		t.Errorf("deltas %q", deltas())
	}
	body := srv.Requests()[0]
	if _, ok := body["stream"]; ok {
		t.Errorf("stream sent: %v", body["stream"])
	}
}

func TestOpenAIStopReasons(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "cut", FinishReason: "length"}, providertest.Reply{Text: "no", FinishReason: "content_filter"})
	p := provider.NewOpenAI(fast(srv.URL()))
	for _, want := range []string{provider.StopMaxTokens, provider.StopFiltered} {
		resp, err := p.Complete(context.Background(), provider.Request{Messages: conversation()}, nil)
		if err != nil || resp.StopReason != want {
			t.Errorf("stop %v, %v; want %s", resp, err, want)
		}
	}
}
