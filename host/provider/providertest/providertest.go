// Package providertest is a scripted model provider for tests: an HTTP server
// that speaks the real wire protocol of OpenAI chat completions (NewOpenAI)
// or Anthropic messages (NewAnthropic), streamed as server-sent events or
// not, and plays back a script of replies (text, tool calls, errors) in
// order, recording every request.
//
// It imports nothing from the host, so any test, in any package, can point a
// provider or the opair binary at it:
//
//	srv := providertest.NewOpenAI(t,
//		providertest.Reply{ToolCalls: []providertest.ToolCall{{Name: "readProjectFile", Arguments: `{"path": "go.mod"}`}}},
//		providertest.Reply{Text: "It is module example.com/x."})
//	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=x", "OPAIR_MODEL=m")
//	…
//	body := srv.Requests()[1] // the request that carried the tool's result
//
// A request beyond the end of the script fails the test (t.Error) and gets a
// 500 with x-should-retry: false, so that a client does not retry it.
// Replies left unused when the test ends fail it too, unless it failed
// already.
package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// ToolCall is a tool call in a scripted reply.
type ToolCall struct {
	ID        string // default: call_<n> (OpenAI) or toolu_<n> (Anthropic)
	Name      string
	Arguments string // the JSON object of the arguments, "" for {}
}

// Usage is the token count a reply reports. InputTokens is the whole prompt,
// CachedInputTokens the part read from the cache (sent to Anthropic clients
// as input_tokens = InputTokens - CachedInputTokens plus
// cache_read_input_tokens).
type Usage struct {
	InputTokens, OutputTokens, CachedInputTokens int
}

// Reply is one scripted answer.
type Reply struct {
	// Text is streamed a word at a time (each piece a separate chunk).
	Text string
	// ToolCalls are streamed after the text, one after the other, each
	// call's arguments split into several pieces in the middle of the JSON.
	ToolCalls []ToolCall
	// Status, when not 0 or 200, makes this an error answer with the
	// provider's error body, e.g. 429 (with Header {"Retry-After": "1"}),
	// 500, 401 or 404.
	Status int
	// Error is the error answer's message; default: the status text.
	Error string
	// Header holds extra response headers.
	Header map[string]string
	// Delay waits before answering (cut short if the client goes away).
	Delay time.Duration
	// Hang streams the first piece of the reply, then waits until the
	// client goes away: for cancellation tests.
	Hang bool
	// StreamError opens a streamed answer (200) and then sends an error
	// event of this type instead of the reply: OpenAI gets a data line
	// {"error": {"type": …}}, Anthropic an error event (e.g.
	// "overloaded_error").
	StreamError string
	// Usage is reported when set; otherwise a small count is made up.
	Usage *Usage
	// FinishReason overrides the finish_reason (OpenAI) or stop_reason
	// (Anthropic), e.g. "length" or "max_tokens".
	FinishReason string
}

// Request is one recorded request.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Server is a scripted provider. Its methods are safe for concurrent use.
type Server struct {
	t         testing.TB
	anthropic bool
	srv       *httptest.Server
	closing   chan struct{}

	mu      sync.Mutex
	replies []Reply
	reqs    []Request
	served  int
}

// NewOpenAI starts a server for the OpenAI chat-completions protocol: POST
// /v1/chat/completions (or /chat/completions). t.Cleanup closes it.
func NewOpenAI(t testing.TB, replies ...Reply) *Server {
	return start(t, false, replies)
}

// NewAnthropic starts a server for the Anthropic messages protocol: POST
// /v1/messages. t.Cleanup closes it.
func NewAnthropic(t testing.TB, replies ...Reply) *Server {
	return start(t, true, replies)
}

func start(t testing.TB, anthropic bool, replies []Reply) *Server {
	t.Helper()
	s := &Server{t: t, anthropic: anthropic, replies: append([]Reply(nil), replies...), closing: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(func() {
		close(s.closing)
		s.srv.Close()
		s.mu.Lock()
		left := len(s.replies) - s.served
		s.mu.Unlock()
		if left > 0 && !t.Failed() {
			t.Errorf("providertest: %d scripted replies were never requested", left)
		}
	})
	return s
}

// URL is the base URL to give a client: for OpenAI it ends in /v1, as the
// SDKs and OPENAI_BASE_URL expect (http://127.0.0.1:port/v1); for Anthropic
// it is the server's root, as ANTHROPIC_BASE_URL expects.
func (s *Server) URL() string {
	if s.anthropic {
		return s.srv.URL
	}
	return s.srv.URL + "/v1"
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, replies...)
	s.mu.Unlock()
}

// Requests returns the JSON bodies of the requests received so far, decoded.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, 0, len(s.reqs))
	for _, r := range s.reqs {
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m)
		out = append(out, m)
	}
	return out
}

// Recorded returns the requests received so far, with their raw bodies
// (to check key order, say) and headers.
func (s *Server) Recorded() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	n := len(s.reqs)
	s.mu.Unlock()

	want := []string{"/v1/chat/completions", "/chat/completions"}
	if s.anthropic {
		want = []string{"/v1/messages"}
	}
	if r.Method != http.MethodPost || !contains(want, r.URL.Path) {
		s.t.Errorf("providertest: request %d is %s %s; this server answers POST %s", n, r.Method, r.URL.Path, strings.Join(want, " or "))
		s.writeError(w, Reply{Status: http.StatusNotFound, Error: "no such endpoint: " + r.URL.Path, Header: map[string]string{"x-should-retry": "false"}})
		return
	}
	var req struct {
		Model         string            `json:"model"`
		Stream        bool              `json:"stream"`
		Messages      []json.RawMessage `json:"messages"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("providertest: request %d: the body is not JSON: %v\n%s", n, err, body)
		s.writeError(w, Reply{Status: http.StatusBadRequest, Error: "invalid JSON: " + err.Error(), Header: map[string]string{"x-should-retry": "false"}})
		return
	}

	s.mu.Lock()
	var rep Reply
	ok := s.served < len(s.replies)
	if ok {
		rep = s.replies[s.served]
		s.served++
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("providertest: request %d came after the end of the script (%d replies); its body:\n%s", n, n-1, body)
		s.writeError(w, Reply{Status: http.StatusInternalServerError, Error: "providertest: out of script", Header: map[string]string{"x-should-retry": "false"}})
		return
	}
	if !s.wait(r, rep.Delay) {
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		s.writeError(w, rep)
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	usage := Usage{InputTokens: 10 * len(req.Messages), OutputTokens: len(pieces(rep.Text)) + 5*len(rep.ToolCalls)}
	if rep.Usage != nil {
		usage = *rep.Usage
	}
	model := req.Model
	switch {
	case s.anthropic && req.Stream:
		s.anthropicStream(w, r, rep, model, usage)
	case s.anthropic:
		s.anthropicOnce(w, r, rep, model, usage)
	case req.Stream:
		s.openAIStream(w, r, rep, model, usage, req.StreamOptions.IncludeUsage)
	default:
		s.openAIOnce(w, r, rep, model, usage)
	}
}

// wait sleeps d, or until the client goes away or the server closes; it
// reports whether to go on.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// hang waits until the client goes away or the server closes.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closing:
	}
}

func (s *Server) writeError(w http.ResponseWriter, rep Reply) {
	msg := rep.Error
	if msg == "" {
		msg = http.StatusText(rep.Status)
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	var body any
	if s.anthropic {
		body = map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(rep.Status), "message": msg}}
	} else {
		body = map[string]any{"error": map[string]any{"message": msg, "type": openAIErrorType(rep.Status), "param": nil, "code": openAIErrorCode(rep.Status)}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.Status)
	_ = json.NewEncoder(w).Encode(body)
}

func openAIErrorType(status int) string {
	switch {
	case status == 401:
		return "invalid_request_error"
	case status == 404:
		return "invalid_request_error"
	case status == 429:
		return "requests"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func openAIErrorCode(status int) any {
	switch status {
	case 401:
		return "invalid_api_key"
	case 404:
		return "model_not_found"
	case 429:
		return "rate_limit_exceeded"
	}
	return nil
}

func anthropicErrorType(status int) string {
	switch {
	case status == 400:
		return "invalid_request_error"
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status == 429:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	}
	return "api_error"
}

// pieces splits a text into words, each with the white space after it, so
// that a text of several words streams as several chunks.
func pieces(text string) []string {
	var out []string
	start := 0
	inSpace := true
	for i, r := range text {
		sp := unicode.IsSpace(r)
		if !sp && inSpace && i > start && strings.TrimSpace(text[start:i]) != "" {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// splitJSON cuts a call's arguments into three pieces, in the middle of the
// JSON.
func splitJSON(args string) []string {
	if len(args) < 3 {
		return []string{args}
	}
	a, b := len(args)/3, 2*len(args)/3
	for a > 0 && !isBoundary(args, a) {
		a--
	}
	for b > a && !isBoundary(args, b) {
		b--
	}
	var out []string
	for _, p := range []string{args[:a], args[a:b], args[b:]} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isBoundary reports whether i is the start of a UTF-8 character.
func isBoundary(s string, i int) bool { return i >= len(s) || s[i] < 0x80 || s[i] >= 0xC0 }

func args(c ToolCall) string {
	if strings.TrimSpace(c.Arguments) == "" {
		return "{}"
	}
	return c.Arguments
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) send(event string, v any) {
	var b bytes.Buffer
	if event != "" {
		fmt.Fprintf(&b, "event: %s\n", event)
	}
	data, ok := v.(string)
	if !ok {
		raw, _ := json.Marshal(v)
		data = string(raw)
	}
	fmt.Fprintf(&b, "data: %s\n\n", data)
	_, _ = e.w.Write(b.Bytes())
	if e.f != nil {
		e.f.Flush()
	}
}
