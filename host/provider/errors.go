package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is an error answer of a provider: an HTTP status of 400 or more,
// or an error event in the middle of a stream (Status 0, or the status the
// event's type stands for, such as 529 for Anthropic's overloaded_error).
// Its Error text says what to do about it and ends with the provider's own
// message.
type APIError struct {
	Provider string // TypeOpenAI or TypeAnthropic
	Status   int
	// Type is the provider's error type or code, if it sent one
	// ("invalid_api_key", "rate_limit_error", "model_not_found", …).
	Type string
	// Message is the provider's own message (or the start of its body).
	Message string
	BaseURL string
	Model   string
	// APIKeyEnv is the variable the key came from, if known.
	APIKeyEnv string
	// RetryAfter is the wait the server asked for (Retry-After or
	// retry-after-ms), or 0.
	RetryAfter time.Duration
	noKey      bool // no key was sent
	noRetry    bool // x-should-retry: false
}

func (e *APIError) Error() string {
	var head, advice string
	switch e.Status {
	case http.StatusUnauthorized:
		switch {
		case e.noKey:
			head = fmt.Sprintf("%s requires an API key and none was sent", e.BaseURL)
			advice = "set the variable that holds the key (apiKeyEnv in the config's models section)"
		case e.APIKeyEnv != "":
			head = fmt.Sprintf("the API key in $%s was rejected by %s; check it", e.APIKeyEnv, e.BaseURL)
		default:
			head = fmt.Sprintf("the API key was rejected by %s; check it", e.BaseURL)
		}
	case http.StatusForbidden:
		head = fmt.Sprintf("%s refused access to model %s", e.BaseURL, e.Model)
		if e.APIKeyEnv != "" {
			advice = fmt.Sprintf("check that the key in $%s may use it", e.APIKeyEnv)
		}
	case http.StatusNotFound:
		head = fmt.Sprintf("model %s not found at %s", e.Model, e.BaseURL)
		advice = "check the model name, and that the base URL is the API's root"
		if e.Provider == TypeOpenAI {
			advice += " (for OpenAI-compatible servers it usually ends in /v1)"
		} else {
			advice += " (without /v1)"
		}
	case http.StatusTooManyRequests:
		head = fmt.Sprintf("rate limited by %s", e.BaseURL)
	case 0:
		head = fmt.Sprintf("%s failed in the middle of the reply", e.BaseURL)
	default:
		head = fmt.Sprintf("%s answered %d %s", e.BaseURL, e.Status, http.StatusText(e.Status))
	}
	var detail []string
	if e.Status != 0 {
		detail = append(detail, strconv.Itoa(e.Status))
	}
	if e.Type != "" && !strings.Contains(e.Message, e.Type) {
		detail = append(detail, e.Type+":")
	}
	if e.Message != "" && e.Message != http.StatusText(e.Status) {
		detail = append(detail, e.Message)
	}
	s := e.Provider + ": " + head
	if len(detail) > 0 {
		s += " (" + strings.TrimSuffix(strings.Join(detail, " "), ":") + ")"
	}
	if advice != "" {
		s += "; " + advice
	}
	return s
}

// Temporary reports whether the request may succeed if tried again.
func (e *APIError) Temporary() bool {
	if e.noRetry {
		return false
	}
	switch {
	case e.Status == http.StatusRequestTimeout, e.Status == http.StatusConflict,
		e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return true
	}
	return false
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// apiError builds the error of an HTTP answer from its status, headers and
// body, whatever shape the body has: {"error": {"message", "type", "code"}}
// (OpenAI, Anthropic, vLLM), {"error": "…"} (Ollama), {"message": "…"},
// {"detail": "…"}, or plain text.
func (c *client) apiError(status int, h http.Header, body []byte) *APIError {
	e := &APIError{Provider: c.name, Status: status, BaseURL: c.baseURL, Model: c.model, APIKeyEnv: c.keyEnv, noKey: c.key == ""}
	e.Type, e.Message = errorMessage(body)
	e.RetryAfter = retryAfter(h)
	if h.Get("x-should-retry") == "false" {
		e.noRetry = true
	}
	return e
}

// errorMessage extracts the type and the message of an error body.
func errorMessage(body []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var str string
		switch {
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			return "", clip(str)
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			typ = inner.Type
			if c, ok := inner.Code.(string); ok && c != "" {
				typ = c
			}
			return typ, clip(inner.Message)
		case v.Message != "":
			return "", clip(v.Message)
		case v.Detail != nil:
			if s, ok := v.Detail.(string); ok {
				return "", clip(s)
			}
			b, _ := json.Marshal(v.Detail)
			return "", clip(string(b))
		}
	}
	return "", clip(strings.TrimSpace(string(body)))
}

// clip shortens a provider's message to one reasonable line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 500 {
		s = string(r[:500]) + "…"
	}
	return s
}

// retryAfter reads retry-after-ms (OpenAI), else Retry-After in seconds or
// as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); (err == nil || errors.Is(err, strconv.ErrRange)) && ms > 0 {
			return time.Duration(min(ms, float64(math.MaxInt64/int64(time.Millisecond))) * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if s <= 0 || math.IsNaN(s) {
			return 0
		}
		return time.Duration(min(s, float64(math.MaxInt64/int64(time.Second))) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// errIdle is the cause of an attempt cancelled by the idle timeout.
var errIdle = errors.New("idle timeout")

// IdleError is a request or stream that sent nothing for Config.Timeout.
type IdleError struct {
	Provider, BaseURL string
	Timeout           time.Duration
}

func (e *IdleError) Error() string {
	return fmt.Sprintf("%s: no answer from %s for %s; the server may be overloaded or stuck", e.Provider, e.BaseURL, e.Timeout)
}

// ConnError is a request that could not reach the server.
type ConnError struct {
	Provider, BaseURL string
	Err               error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("%s: cannot reach %s: %v; check the base URL and that the server is running", e.Provider, e.BaseURL, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }
