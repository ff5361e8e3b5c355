package providertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// recorder stands in for the test a server reports to.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}
func (r *recorder) Failed() bool     { r.mu.Lock(); defer r.mu.Unlock(); return len(r.errs) > 0 }
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) close() {
	for _, f := range r.cleanups {
		f()
	}
}
func (r *recorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}
func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// events reads a server-sent event stream into (event, data) pairs.
func events(t *testing.T, r io.Reader) [][2]string {
	t.Helper()
	var out [][2]string
	var ev string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, [2]string{ev, strings.TrimPrefix(line, "data: ")})
			ev = ""
		default:
			t.Errorf("not an SSE line: %q", line)
		}
	}
	return out
}

func TestOpenAIWire(t *testing.T) {
	s := NewOpenAI(t, Reply{Text: "one two", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"path": "a/b.go", "n": 12}`}, {ID: "x", Name: "g"}}, Usage: &Usage{7, 3, 2}})
	res := post(t, s.URL()+"/chat/completions", `{"model": "m", "stream": true, "stream_options": {"include_usage": true}, "messages": [{"role": "user", "content": "hi"}]}`)
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	evs := events(t, res.Body)
	if last := evs[len(evs)-1]; last[1] != "[DONE]" {
		t.Fatalf("last event %q", last)
	}
	var text string
	args := map[float64]string{}
	pieces := map[float64]int{}
	var finish any
	var usage map[string]any
	for _, e := range evs[:len(evs)-1] {
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    float64 `json:"index"`
						ID       string  `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason any `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e[1]), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %s: %v", e[1], err)
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				args[tc.Index] += tc.Function.Arguments
				if tc.Function.Arguments != "" {
					pieces[tc.Index]++
				}
			}
			if ch.FinishReason != nil {
				finish = ch.FinishReason
			}
		}
	}
	if text != "one two" || finish != "tool_calls" || args[0] != `{"path": "a/b.go", "n": 12}` || args[1] != "{}" || pieces[0] < 2 {
		t.Errorf("text %q, finish %v, args %v in %v pieces", text, finish, args, pieces)
	}
	if usage["prompt_tokens"] != 7.0 || usage["completion_tokens"] != 3.0 || usage["prompt_tokens_details"].(map[string]any)["cached_tokens"] != 2.0 {
		t.Errorf("usage %v", usage)
	}
	if got := s.Requests(); len(got) != 1 || got[0]["model"] != "m" {
		t.Errorf("requests %v", got)
	}
}

func TestOpenAIWireNoUsageNoStream(t *testing.T) {
	s := NewOpenAI(t, Reply{Text: "a b"}, Reply{Text: "whole", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a":1}`}}})
	res := post(t, s.URL()+"/chat/completions", `{"model": "m", "stream": true, "messages": []}`)
	for _, e := range events(t, res.Body) {
		if strings.Contains(e[1], `"usage"`) {
			t.Errorf("usage sent without include_usage: %s", e[1])
		}
	}
	res.Body.Close()
	res = post(t, s.URL()+"/chat/completions", `{"model": "m", "messages": []}`)
	defer res.Body.Close()
	var c map[string]any
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	msg := c["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	calls := msg["tool_calls"].([]any)
	if c["object"] != "chat.completion" || msg["content"] != "whole" || len(calls) != 1 ||
		calls[0].(map[string]any)["function"].(map[string]any)["arguments"] != `{"a":1}` {
		t.Errorf("completion %v", c)
	}
}

func TestAnthropicWire(t *testing.T) {
	s := NewAnthropic(t, Reply{Text: "hi there", ToolCalls: []ToolCall{{Name: "f", Arguments: `{"q": "some query"}`}}, Usage: &Usage{10, 4, 6}})
	res := post(t, s.URL()+"/v1/messages", `{"model": "m", "stream": true, "max_tokens": 10, "messages": []}`)
	defer res.Body.Close()
	evs := events(t, res.Body)
	var names []string
	var partial string
	for _, e := range evs {
		var d map[string]any
		if err := json.Unmarshal([]byte(e[1]), &d); err != nil || d["type"] != e[0] {
			t.Fatalf("event %s with data %s: %v", e[0], e[1], err)
		}
		names = append(names, e[0])
		if delta, ok := d["delta"].(map[string]any); ok && delta["type"] == "input_json_delta" {
			partial += delta["partial_json"].(string)
		}
		if e[0] == "message_start" {
			u := d["message"].(map[string]any)["usage"].(map[string]any)
			if u["input_tokens"] != 4.0 || u["cache_read_input_tokens"] != 6.0 {
				t.Errorf("usage %v", u)
			}
		}
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("events\n%q\nwant\n%q", names, want)
	}
	if partial != `{"q": "some query"}` {
		t.Errorf("partial json %q", partial)
	}
}

func TestOutOfScript(t *testing.T) {
	r := &recorder{TB: t}
	s := NewOpenAI(r)
	res := post(t, s.URL()+"/chat/completions", `{"model": "m", "messages": []}`)
	res.Body.Close()
	if res.StatusCode != 500 || res.Header.Get("x-should-retry") != "false" {
		t.Errorf("status %d, x-should-retry %q", res.StatusCode, res.Header.Get("x-should-retry"))
	}
	r.close()
	if errs := r.errors(); len(errs) != 1 || !strings.Contains(errs[0], "came after the end of the script") {
		t.Errorf("errors %q", errs)
	}
}

func TestUnusedReplies(t *testing.T) {
	r := &recorder{TB: t}
	s := NewAnthropic(r, Reply{Text: "a"})
	s.Add(Reply{Text: "b"})
	res := post(t, s.URL()+"/v1/messages", `{"model": "m", "messages": []}`)
	res.Body.Close()
	r.close()
	if errs := r.errors(); len(errs) != 1 || !strings.Contains(errs[0], "1 scripted replies were never requested") {
		t.Errorf("errors %q", errs)
	}
}

func TestWrongEndpoint(t *testing.T) {
	r := &recorder{TB: t}
	s := NewOpenAI(r, Reply{Text: "a"})
	res := post(t, s.URL()+"/responses", `{}`)
	res.Body.Close()
	r.close()
	if errs := r.errors(); res.StatusCode != 404 || len(errs) != 1 || !strings.Contains(errs[0], "POST /v1/responses") {
		t.Errorf("status %d, errors %q", res.StatusCode, errs)
	}
}

func TestPieces(t *testing.T) {
	for in, want := range map[string][]string{
		"":                nil,
		"one":             {"one"},
		"one two":         {"one ", "two"},
		"  lead\n\nnext ": {"  lead\n\n", "next "},
	} {
		if got := pieces(in); !reflect.DeepEqual(got, want) {
			t.Errorf("pieces(%q) = %q, want %q", in, got, want)
		}
	}
	if got := splitJSON(`{"é": "ü"}`); len(got) != 3 || strings.Join(got, "") != `{"é": "ü"}` {
		t.Errorf("splitJSON = %q", got)
	}
}
