package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

type anthropicProvider struct {
	c   *client
	svc anthropic.MessageService
}

// NewAnthropic returns a provider for the Anthropic messages API at
// cfg.BaseURL (the API's root, without /v1). It streams; the system messages
// become the request's system field, tool calls are tool_use blocks and tool
// results tool_result blocks. Nothing is read from the environment (the
// SDK's ANTHROPIC_* defaults and profiles are switched off).
//
// The API version this SDK speaks has no temperature: Request.Temperature is
// not sent. ReasoningEffort is sent as output_config.effort.
func NewAnthropic(cfg Config) Provider {
	c := newClient(TypeAnthropic, DefaultAnthropicBaseURL, cfg)
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(c.baseURL + "/"),
		option.WithHTTPClient(c.http),
		option.WithMaxRetries(0),
		option.WithMiddleware(c.middleware),
	}
	if c.key != "" {
		opts = append(opts, option.WithAPIKey(c.key))
	}
	cl := anthropic.NewClient(opts...)
	return &anthropicProvider{c: c, svc: cl.Messages}
}

func (p *anthropicProvider) Name() string { return TypeAnthropic }

func (p *anthropicProvider) Complete(ctx context.Context, req Request, onText func(string)) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	return p.c.complete(ctx, p.c.modelFor(req), onText, func(ctx context.Context, emit func(string)) (*Response, error) {
		return p.stream(ctx, params, emit)
	})
}

// params converts a Request to the SDK's parameters. Consecutive messages of
// one side are merged into one (tool results and the user's next words go
// in one user message, as the API wants).
func (p *anthropicProvider) params(req Request) (anthropic.MessageNewParams, error) {
	model := p.c.modelFor(req)
	if model == "" {
		return anthropic.MessageNewParams{}, fmt.Errorf("%s: no model named", TypeAnthropic)
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: DefaultAnthropicMaxTokens}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	add := func(assistant bool, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(params.Messages); n > 0 {
			last := &params.Messages[n-1]
			if assistant && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				return
			}
			if !assistant && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				return
			}
		}
		if assistant {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case System:
			if m.Content != "" {
				params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			}
		case User:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, im := range m.Images {
				blocks = append(blocks, anthropic.NewImageBlockBase64(im.MIMEType, base64.StdEncoding.EncodeToString(im.Data)))
			}
			add(false, blocks...)
		case Assistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
			}
			add(true, blocks...)
		case ToolRole:
			r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Content != "" || len(m.Images) == 0 {
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: nonEmpty(m.Content)}})
			}
			for _, im := range m.Images {
				img := anthropic.NewImageBlockBase64(im.MIMEType, base64.StdEncoding.EncodeToString(im.Data))
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
			}
			add(false, anthropic.ContentBlockParamUnion{OfToolResult: &r})
		default:
			return params, fmt.Errorf("%s: message %d has unknown role %q", TypeAnthropic, i, m.Role)
		}
	}
	for _, t := range req.Tools {
		raw, err := anthropicToolJSON(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, param.Override[anthropic.ToolUnionParam](raw))
	}
	if req.ReasoningEffort != "" {
		params.OutputConfig.Effort = anthropic.OutputConfigEffort(req.ReasoningEffort)
	}
	return params, nil
}

// nonEmpty stands in for an empty tool result, which the API refuses.
func nonEmpty(s string) string {
	if s == "" {
		return "(no output)"
	}
	return s
}

// toolInput is a call's arguments as a tool_use block's input, which must be
// a JSON object: arguments that are not one (the model wrote broken JSON)
// are sent as {}.
func toolInput(a json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(a, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return a
}

// anthropicToolJSON writes a tool in the messages form, with its parameters
// verbatim as the input schema and strict only when set.
func anthropicToolJSON(t Tool) (json.RawMessage, error) {
	schema := t.Parameters
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	} else if !json.Valid(schema) {
		return nil, fmt.Errorf("tool %s: parameters are not valid JSON", t.Name)
	}
	return marshalVerbatim(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
		Strict      *bool           `json:"strict,omitempty"`
	}{t.Name, t.Description, schema, t.Strict})
}

// block is a content block being streamed.
type block struct {
	typ, id, name string
	json          strings.Builder
}

// stream runs one streamed request.
func (p *anthropicProvider) stream(ctx context.Context, params anthropic.MessageNewParams, emit func(string)) (*Response, error) {
	s := p.svc.NewStreaming(ctx, params)
	defer s.Close()
	var (
		text    strings.Builder
		blocks  = map[int64]*block{}
		usage   Usage
		stop    string
		stopped bool
	)
	setUsage := func(in, cacheRead, cacheWrite, out int64) {
		if in+cacheRead+cacheWrite > 0 {
			usage.InputTokens = int(in + cacheRead + cacheWrite)
			usage.CachedInputTokens = int(cacheRead)
		}
		if out > 0 {
			usage.OutputTokens = int(out)
		}
	}
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			setUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
		case "content_block_start":
			cb := ev.ContentBlock
			blocks[ev.Index] = &block{typ: cb.Type, id: cb.ID, name: cb.Name}
			if cb.Type == "text" && cb.Text != "" {
				text.WriteString(cb.Text)
				emit(cb.Text)
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				text.WriteString(ev.Delta.Text)
				emit(ev.Delta.Text)
			case "input_json_delta":
				if b := blocks[ev.Index]; b != nil {
					b.json.WriteString(ev.Delta.PartialJSON)
				}
			}
		case "message_delta":
			stop = string(ev.Delta.StopReason)
			u := ev.Usage
			setUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
		case "message_stop":
			stopped = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, p.streamError(err, string(params.Model))
	}
	if !stopped && stop == "" {
		return nil, &APIError{Provider: TypeAnthropic, BaseURL: p.c.baseURL, Model: string(params.Model), Message: "the stream ended before the reply was complete"}
	}
	var idx []int64
	for i, b := range blocks {
		if b.typ == "tool_use" {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	var calls []ToolCall
	for _, i := range idx {
		b := blocks[i]
		calls = append(calls, ToolCall{ID: b.id, Name: b.name, Arguments: json.RawMessage(argumentsText(json.RawMessage(b.json.String())))})
	}
	switch stop {
	case "end_turn", "stop_sequence", "":
		stop = StopEnd
	case "tool_use":
		stop = StopToolCalls
	case "max_tokens":
		stop = StopMaxTokens
	case "refusal":
		stop = StopFiltered
	}
	return &Response{Message: Message{Role: Assistant, Content: text.String(), ToolCalls: calls}, Usage: usage, StopReason: stop}, nil
}

// streamError converts an error event of the stream to an *APIError, with
// the status its type stands for, so that overloaded and rate-limit errors
// are retried like their HTTP answers.
func (p *anthropicProvider) streamError(err error, model string) error {
	var raw string
	var ae *anthropic.Error
	switch {
	case errors.As(err, &ae):
		raw = ae.RawJSON()
	default:
		var ok bool
		if raw, ok = strings.CutPrefix(err.Error(), "received error while streaming: "); !ok {
			return err
		}
	}
	typ, msg := errorMessage([]byte(raw))
	e := &APIError{Provider: TypeAnthropic, BaseURL: p.c.baseURL, Model: model, APIKeyEnv: p.c.keyEnv, Type: typ, Message: msg}
	switch typ {
	case "overloaded_error":
		e.Status = 529
	case "rate_limit_error":
		e.Status = http.StatusTooManyRequests
	case "api_error":
		e.Status = http.StatusInternalServerError
	}
	return e
}
