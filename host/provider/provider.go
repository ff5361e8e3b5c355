// Package provider talks to model providers: OpenAI-compatible chat
// completions (OpenAI, Ollama, llama.cpp, vLLM, OpenRouter, …) and Anthropic
// messages (SPEC §5). It sends a conversation and the tools' schemas, streams
// the model's text back as it arrives, and returns the final assistant
// message with its tool calls. It knows nothing of what the tools mean, of
// permissions or of sessions, and it imports nothing from the rest of the
// host: package config resolves a role's settings, and the caller hands them
// over as plain values (FromRole).
//
// # Tools are sent exactly as defined
//
// A Tool's Parameters go out as the tool file wrote them: the SDKs' raw-JSON
// escape hatch (param.Override) carries them, so that no keyword is dropped
// and no key is reordered, and Strict is sent only when it is set. Through
// the OpenAI SDK the bytes are the very same (white space aside); the
// Anthropic SDK re-escapes <, > and & in strings as \u003c and so on, which
// is the same JSON.
//
// # Retries
//
// The SDKs' own retries are switched off (MaxRetries 0) and Complete retries
// itself, the same way for both providers: on 408, 409, 429 and 5xx answers
// (and Anthropic's overloaded and rate-limit error events), and on a request
// or stream that stays silent for Config.Timeout, but never once text has
// reached onText (the human has seen it). At most Config.MaxRetries times,
// with exponential backoff and jitter, or after exactly the wait that a
// Retry-After (or retry-after-ms) header asks for, up to MaxRetryAfter. A
// server that sends x-should-retry: false is not retried, nor one that cannot
// be reached at all (*ConnError), nor any other 4xx. The wait is cancelled
// with the context, and Config.OnRetry lets the session say what it is
// waiting for. Doing it here rather than in the SDKs keeps one policy for
// both providers and lets the session see each retry.
//
// # Errors
//
// An HTTP error is an *APIError, whose message says what to do: a 401 names
// the variable the rejected key came from and the base URL, a 404 names the
// model and the base URL; both wrap the provider's own message. Cancelling
// the context stops the request or the stream at once (the response body is
// closed) and Complete returns the context's error.
package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Role is the author of a message.
type Role string

// The roles.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool" // a tool's result
)

// Message is one message of a conversation.
type Message struct {
	Role    Role
	Content string
	// Images go with a user message or a tool result, for multimodal models.
	Images []Image
	// ToolCalls are an assistant message's calls.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool result answers.
	ToolCallID string
	// Name is the tool's name, for a tool result.
	Name string
}

// Image is an image in a message.
type Image struct {
	MIMEType string // image/png, image/jpeg, image/gif or image/webp
	Data     []byte
}

// ToolCall is one call the model asked for. Arguments is the JSON object the
// model wrote, as it wrote it; it may be invalid JSON, which the caller
// reports back to the model.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Tool is a tool offered to the model, as its tool file defines it.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, sent verbatim.
	Parameters json.RawMessage
	// Strict is sent only when set.
	Strict *bool
}

// Request is one completion request.
type Request struct {
	// Model overrides Config.Model when set.
	Model    string
	Messages []Message
	Tools    []Tool
	// Temperature is sent only when set.
	Temperature *float64
	// MaxTokens bounds the reply; 0 leaves it to the provider (Anthropic
	// requires one: DefaultAnthropicMaxTokens).
	MaxTokens int
	// ReasoningEffort is "low", "medium" or "high", or "" for the model's
	// default: OpenAI's reasoning_effort, Anthropic's output_config.effort.
	ReasoningEffort string
}

// Usage is the token count of one completion. InputTokens counts the whole
// prompt, cached tokens included; CachedInputTokens is the part read from the
// provider's prompt cache.
type Usage struct {
	InputTokens, OutputTokens, CachedInputTokens int
}

// The stop reasons, the same for both providers. Others are passed through as
// the provider wrote them.
const (
	StopEnd       = "end"        // the model finished its answer
	StopToolCalls = "tool_calls" // the model asks for tool calls
	StopMaxTokens = "max_tokens" // the reply hit MaxTokens
	StopFiltered  = "filtered"   // the provider's content filter or a refusal
)

// Response is the result of a completion.
type Response struct {
	Message    Message // the assistant's message: its text and tool calls
	Usage      Usage
	StopReason string
}

// Provider is a model provider.
type Provider interface {
	// Complete streams one completion: onText (which may be nil) gets text
	// deltas as they arrive, in order, on the calling goroutine; the final
	// assistant message (text and tool calls) is returned.
	Complete(ctx context.Context, req Request, onText func(string)) (*Response, error)
	// Name is the provider type: "openai" or "anthropic".
	Name() string
}

// The provider types.
const (
	TypeOpenAI    = "openai"
	TypeAnthropic = "anthropic"
)

// Defaults.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultMaxRetries       = 4
	DefaultRetryDelay       = 500 * time.Millisecond
	// MaxRetryDelay caps the exponential backoff.
	MaxRetryDelay = 30 * time.Second
	// MaxRetryAfter is the longest Retry-After that is waited for; a server
	// that asks for more gets its error returned instead.
	MaxRetryAfter = 2 * time.Minute
	// DefaultTimeout is the default idle timeout.
	DefaultTimeout = 10 * time.Minute
	// DefaultAnthropicMaxTokens is sent when a Request has no MaxTokens.
	DefaultAnthropicMaxTokens = 8192
)

// Config configures a provider.
type Config struct {
	// BaseURL is the API's root: DefaultOpenAIBaseURL (…/v1, as
	// OpenAI-compatible servers want it, e.g. http://localhost:11434/v1 for
	// Ollama) or DefaultAnthropicBaseURL when empty.
	BaseURL string
	// APIKey is sent as the bearer token; "" sends no key (local servers).
	APIKey string
	// APIKeyEnv names the variable the key came from, for error messages.
	APIKeyEnv string
	// Model is used when a Request names none.
	Model string
	// HTTPClient makes the requests; nil uses a client of its own. Its
	// Timeout, if any, bounds a whole streamed reply: prefer Timeout.
	HTTPClient *http.Client
	// MaxRetries: 0 means DefaultMaxRetries; negative means no retries.
	MaxRetries int
	// RetryDelay is the first backoff, doubled on each retry up to
	// MaxRetryDelay, with jitter: 0 means DefaultRetryDelay.
	RetryDelay time.Duration
	// Timeout is an idle timeout: the longest wait for the response or for
	// the next piece of the stream, so a long reply that keeps coming is
	// never cut. 0 means DefaultTimeout; negative means none.
	Timeout time.Duration
	// NoStream (OpenAI only) asks for a single non-streamed completion, for
	// servers that cannot stream tool calls: onText gets the text at once.
	NoStream bool
	// OnRetry, if set, is called before each wait for a retry.
	OnRetry func(attempt int, wait time.Duration, err error)
}

// Spec is what FromRole needs: a role's provider settings as plain values
// (the fields of config.Role of the same names), so that this package does
// not import config, nor config this one.
type Spec struct {
	ProviderType string // TypeOpenAI or TypeAnthropic
	BaseURL      string // "" for the type's default
	APIKeyEnv    string // the variable holding the key; "" sends none
	Model        string
}

// FromRole returns the provider of a resolved role, reading its key from
// the variable it names with env (os.Getenv in production):
//
//	r, err := cfg.Role("driver", os.Getenv)
//	p, err := provider.FromRole(provider.Spec{ProviderType: r.ProviderType,
//		BaseURL: r.BaseURL, APIKeyEnv: r.APIKeyEnv, Model: r.Model}, os.Getenv)
//
// The role's options (temperature, max tokens, reasoning effort) go in each
// Request.
func FromRole(s Spec, env func(string) string) (Provider, error) {
	cfg := Config{BaseURL: s.BaseURL, APIKeyEnv: s.APIKeyEnv, Model: s.Model}
	if s.APIKeyEnv != "" {
		cfg.APIKey = env(s.APIKeyEnv)
		if cfg.APIKey == "" {
			return nil, fmt.Errorf("%s is not set: it holds the API key for %s; export %s=<your key>", s.APIKeyEnv, baseOr(s), s.APIKeyEnv)
		}
	}
	if s.Model == "" {
		return nil, fmt.Errorf("no model named for %s", baseOr(s))
	}
	switch s.ProviderType {
	case TypeOpenAI:
		return NewOpenAI(cfg), nil
	case TypeAnthropic:
		return NewAnthropic(cfg), nil
	}
	return nil, fmt.Errorf("unknown provider type %q: use %q or %q", s.ProviderType, TypeOpenAI, TypeAnthropic)
}

func baseOr(s Spec) string {
	switch {
	case s.BaseURL != "":
		return s.BaseURL
	case s.ProviderType == TypeAnthropic:
		return DefaultAnthropicBaseURL
	}
	return DefaultOpenAIBaseURL
}
