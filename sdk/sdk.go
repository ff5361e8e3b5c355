// Package sdk is what a third party imports to ship an Opair handler plugin:
// a program named opair-plugin-<name> that serves one or more handler types
// (and, optionally, handler-less tools) to the Opair host.
//
// A plugin is a plain Go program whose main calls Serve:
//
//	func main() {
//		sdk.Serve(sdk.Plugin{
//			Version: "1.0.0",
//			Types: map[string]sdk.Type{
//				"httpStatus": {Description: "…", Handler: sdk.HandlerFunc(check), Validate: validate},
//			},
//		})
//	}
//
// The host decides permissions, asks the human, and holds every credential;
// a plugin only does the work of a call it is given, streams progress, honours
// cancellation (ctx is cancelled when the human or the host cancels the call),
// and returns a Result. An expected failure the model should see and correct
// is a Result with IsError (see Errorf); a returned error means the call
// itself failed. A panic in a handler is recovered and reported as a failed
// call; it never takes the plugin down.
//
// The package hides the generated protocol code and go-plugin: handlers see
// only the plain types of this package. It never imports the host.
package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Handler does the work of one call.
type Handler interface {
	Invoke(ctx context.Context, call *Call, p Progress) (*Result, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, call *Call, p Progress) (*Result, error)

// Invoke calls f.
func (f HandlerFunc) Invoke(ctx context.Context, call *Call, p Progress) (*Result, error) {
	return f(ctx, call, p)
}

// Type is one handler type a plugin serves.
type Type struct {
	Description string
	Handler     Handler
	// Validate checks a tool file's handler block when the host loads it;
	// each returned Diagnostic becomes a validation error of that file.
	// Optional.
	Validate func(ctx context.Context, v *Validation) []Diagnostic
}

// Tool is a handler-less tool a plugin serves under its name: a tool file
// with no handler block and this name is routed to it.
type Tool struct {
	Description string
	Handler     Handler
}

// Plugin is everything a plugin binary serves.
type Plugin struct {
	Version string
	Types   map[string]Type
	Tools   map[string]Tool
	// NeedsHost asks the host for the callback service (Call.Host).
	NeedsHost bool
}

// Validation is a handler block to check.
type Validation struct {
	Type    string
	Tool    string
	Handler json.RawMessage // the whole handler block
}

// Config decodes the handler block's "config" object into v.
func (v *Validation) Config(dst any) error { return decodeConfig(v.Handler, dst) }

// Diagnostic is one problem found by Validate.
type Diagnostic struct {
	Summary string
	Detail  string
	Pointer string // JSON pointer into the handler block, e.g. "/config/url"
	Warning bool
}

// Call is one invocation.
type Call struct {
	ID          string
	Tool        string
	Type        string          // the handler type; empty for handler-less tools
	Handler     json.RawMessage // the tool file's handler block ("{}" when none)
	Args        json.RawMessage // the model's arguments, validated against the tool's schema
	ProjectRoot string
	// ProtectedPaths are absolute paths the host says no handler may write
	// (Opair's tools directory, configuration and plugins).
	ProtectedPaths []string
	Timeout        time.Duration // 0: the plugin's default
	OutputCap      int           // 0: the plugin's default
	DryRun         bool          // preview only: change nothing
	// Command is, for exec calls, the exact argv the gate approved
	// (Command[0] an absolute path), Env the complete environment, and
	// ModelArgsStart the index of the first model-supplied argument.
	Command        []string
	Env            []string
	ModelArgsStart int
	// Host is the host's callback service, or nil unless the plugin set
	// NeedsHost.
	Host Host
}

// Decode decodes the call's arguments into v.
func (c *Call) Decode(v any) error {
	if err := json.Unmarshal(c.Args, v); err != nil {
		return fmt.Errorf("decoding the arguments of %s: %w", c.Tool, err)
	}
	return nil
}

// Config decodes the handler block's "config" object into v.
func (c *Call) Config(v any) error { return decodeConfig(c.Handler, v) }

func decodeConfig(handler json.RawMessage, v any) error {
	var h struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(handler, &h); err != nil {
		return fmt.Errorf("decoding the handler block: %w", err)
	}
	if len(h.Config) == 0 {
		h.Config = []byte("{}")
	}
	if err := json.Unmarshal(h.Config, v); err != nil {
		return fmt.Errorf("decoding handler.config: %w", err)
	}
	return nil
}

// Progress reports on a running call. Both methods return the context's
// error once the call is cancelled; a handler should then stop.
type Progress interface {
	// Status sets the one-line status the human sees.
	Status(msg string) error
	// Output streams output as it arrives.
	Output(p []byte) error
}

// Result ends a call.
type Result struct {
	Content []Content
	Details any  // structured details for the UI and the session log; JSON-encoded
	IsError bool // an expected failure the model should see
	Summary string
}

// Content is one block of a result: text or an image.
type Content struct {
	Text  string
	Image *Image
}

// Image is image content for multimodal models.
type Image struct {
	MIMEType string
	Data     []byte
}

// Text returns a result holding one text block.
func Text(s string) *Result { return &Result{Content: []Content{{Text: s}}} }

// Errorf returns an expected-failure result the model sees, e.g. "no such
// issue: 42".
func Errorf(format string, args ...any) *Result {
	r := Text(fmt.Sprintf(format, args...))
	r.IsError = true
	return r
}

// ImageResult returns a result holding one image.
func ImageResult(mimeType string, data []byte) *Result {
	return &Result{Content: []Content{{Image: &Image{MIMEType: mimeType, Data: data}}}}
}

// Host is the host's callback service, for plugins that run nested work
// (sub-agents). Every nested tool call passes the host's permission gate.
type Host interface {
	// AskHuman asks the human; declined is true when they would not answer
	// or nobody can be asked.
	AskHuman(ctx context.Context, question string, options []string, allowCustom bool) (answer string, declined bool, err error)
	// CallTool runs a tool through the host's gate and plugins.
	CallTool(ctx context.Context, tool string, args any, p Progress) (*Result, error)
	// Complete runs one model completion for a role; onText receives the
	// streamed text; the final assistant message is returned as JSON.
	Complete(ctx context.Context, role string, messages json.RawMessage, tools []string, onText func(string)) (json.RawMessage, error)
}
