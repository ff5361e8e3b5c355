package provider

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct{ body, typ, msg string }{
		{`{"error": {"message": "Incorrect API key", "type": "invalid_request_error", "code": "invalid_api_key"}}`, "invalid_api_key", "Incorrect API key"},
		{`{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`, "overloaded_error", "Overloaded"},
		{`{"error": "model \"qwen9\" not found, try pulling it first"}`, "", `model "qwen9" not found, try pulling it first`},
		{`{"object": "error", "message": "The model does not exist.", "type": "NotFoundError"}`, "", "The model does not exist."},
		{`{"detail": "Not Found"}`, "", "Not Found"},
		{`{"detail": [{"loc": ["body"], "msg": "bad"}]}`, "", `[{"loc":["body"],"msg":"bad"}]`},
		{"404 page not found\n", "", "404 page not found"},
		{"", "", ""},
		{strings.Repeat("x", 600), "", strings.Repeat("x", 500) + "…"},
	}
	for _, tt := range tests {
		typ, msg := errorMessage([]byte(tt.body))
		if typ != tt.typ || msg != tt.msg {
			t.Errorf("errorMessage(%.40q) = %q, %q; want %q, %q", tt.body, typ, msg, tt.typ, tt.msg)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{h(), 0},
		{h("Retry-After", "3"), 3 * time.Second},
		{h("Retry-After", "1.5"), 1500 * time.Millisecond},
		{h("Retry-After", "-1"), 0},
		{h("Retry-After", "soon"), 0},
		{h("retry-after-ms", "250", "Retry-After", "9"), 250 * time.Millisecond},
		{h("Retry-After", "1e400"), time.Duration(1<<63-1) / time.Second * time.Second},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h); got != tt.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tt.h, got, tt.want)
		}
	}
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	if got := retryAfter(h("Retry-After", date)); got < 80*time.Second || got > 90*time.Second {
		t.Errorf("retryAfter(date) = %s", got)
	}
}

func TestRetryWait(t *testing.T) {
	c := newClient(TypeOpenAI, DefaultOpenAIBaseURL, Config{})
	if c.maxRetries != DefaultMaxRetries || c.retryDelay != DefaultRetryDelay || c.timeout != DefaultTimeout {
		t.Errorf("defaults: %+v", c)
	}
	for n := range 4 {
		d, ok := c.retryWait(n, &APIError{Status: 503})
		base := DefaultRetryDelay << n
		if !ok || d < base*3/4 || d > base*5/4 {
			t.Errorf("retry %d: wait %s, %v; want about %s", n, d, ok, base)
		}
	}
	if _, ok := c.retryWait(4, &APIError{Status: 503}); ok {
		t.Error("a fifth retry")
	}
	c.maxRetries = 100
	if d, _ := c.retryWait(30, &APIError{Status: 500}); d > MaxRetryDelay*5/4 {
		t.Errorf("backoff not capped: %s", d)
	}
	for _, tt := range []struct {
		err  error
		ok   bool
		wait time.Duration
	}{
		{&APIError{Status: 429, RetryAfter: 7 * time.Second}, true, 7 * time.Second},
		{&APIError{Status: 429, RetryAfter: 3 * time.Minute}, false, 0},
		{&APIError{Status: 500, noRetry: true}, false, 0},
		{&APIError{Status: 400}, false, 0},
		{&APIError{Status: 401}, false, 0},
		{&APIError{Status: 404}, false, 0},
		{&APIError{Status: 0}, false, 0},
		{&APIError{Status: 529}, true, -1},
		{&IdleError{}, true, -1},
		{&ConnError{Err: errors.New("refused")}, false, 0},
		{errors.New("other"), false, 0},
	} {
		d, ok := c.retryWait(0, tt.err)
		if ok != tt.ok || (tt.wait >= 0 && d != tt.wait) {
			t.Errorf("retryWait(%v) = %s, %v", tt.err, d, ok)
		}
	}
	c = newClient(TypeOpenAI, "", Config{MaxRetries: -1, Timeout: -1})
	if c.maxRetries != 0 || c.timeout != 0 {
		t.Errorf("negative settings: %+v", c)
	}
}

func TestCallBuilder(t *testing.T) {
	var b callBuilder
	// A server that sends each call whole at index 0.
	b.add(0, "a", "one", `{"x":`)
	b.add(0, "", "", `1}`)
	b.add(0, "b", "two", `{}`)
	b.add(0, "b", "two", ``) // a repeated id continues the call
	b.add(3, "", "three", ``)
	got := b.calls()
	want := []string{"a one {\"x\":1}", "b two {}", "call_2 three {}"}
	if len(got) != len(want) {
		t.Fatalf("%d calls", len(got))
	}
	for i, c := range got {
		if s := c.ID + " " + c.Name + " " + string(c.Arguments); s != want[i] {
			t.Errorf("call %d = %s, want %s", i, s, want[i])
		}
	}
}
