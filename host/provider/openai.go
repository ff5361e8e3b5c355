package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

type openAI struct {
	c        *client
	svc      openai.ChatCompletionService
	noStream bool
	// maxCompletion sends max_completion_tokens (OpenAI's own API, where
	// max_tokens is deprecated and refused by reasoning models) rather than
	// max_tokens (what compatible servers understand).
	maxCompletion bool
}

// NewOpenAI returns a provider for the OpenAI chat-completions API at
// cfg.BaseURL, or any server that speaks it (Ollama, llama.cpp, vLLM,
// OpenRouter, …). It streams with stream_options.include_usage and assembles
// tool calls from their deltas. Nothing is read from the environment: the
// SDK's OPENAI_* defaults are bypassed, so a variable such as OPENAI_ORG_ID
// never reaches another server.
func NewOpenAI(cfg Config) Provider {
	c := newClient(TypeOpenAI, DefaultOpenAIBaseURL, cfg)
	opts := []option.RequestOption{
		option.WithBaseURL(c.baseURL + "/"),
		option.WithHTTPClient(c.http),
		option.WithMaxRetries(0),
		option.WithMiddleware(c.middleware),
	}
	if c.key != "" {
		opts = append(opts, option.WithAPIKey(c.key))
	}
	p := &openAI{c: c, svc: openai.NewChatCompletionService(opts...), noStream: cfg.NoStream}
	if u, err := url.Parse(c.baseURL); err == nil && u.Hostname() == "api.openai.com" {
		p.maxCompletion = true
	}
	return p
}

func (p *openAI) Name() string { return TypeOpenAI }

func (p *openAI) Complete(ctx context.Context, req Request, onText func(string)) (*Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	return p.c.complete(ctx, p.c.modelFor(req), onText, func(ctx context.Context, emit func(string)) (*Response, error) {
		if p.noStream {
			return p.once(ctx, params, emit)
		}
		return p.stream(ctx, params, emit)
	})
}

// params converts a Request to the SDK's parameters.
func (p *openAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	model := p.c.modelFor(req)
	if model == "" {
		return openai.ChatCompletionNewParams{}, fmt.Errorf("%s: no model named", TypeOpenAI)
	}
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	var pending []Message // tool results with images, shown after the run of tool results
	flush := func() {
		if len(pending) == 0 {
			return
		}
		var parts []openai.ChatCompletionContentPartUnionParam
		for _, m := range pending {
			parts = append(parts, openai.TextContentPart(fmt.Sprintf("The images of the result of %s (call %s):", m.Name, m.ToolCallID)))
			parts = append(parts, imageParts(m.Images)...)
		}
		params.Messages = append(params.Messages, openai.UserMessage(parts))
		pending = nil
	}
	for i, m := range req.Messages {
		if m.Role != ToolRole {
			flush()
		}
		switch m.Role {
		case System:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case User:
			if len(m.Images) == 0 {
				params.Messages = append(params.Messages, openai.UserMessage(m.Content))
				break
			}
			var parts []openai.ChatCompletionContentPartUnionParam
			if m.Content != "" {
				parts = append(parts, openai.TextContentPart(m.Content))
			}
			params.Messages = append(params.Messages, openai.UserMessage(append(parts, imageParts(m.Images)...)))
		case Assistant:
			var a openai.ChatCompletionAssistantMessageParam
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: argumentsText(tc.Arguments)},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case ToolRole:
			params.Messages = append(params.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
			if len(m.Images) > 0 {
				pending = append(pending, m)
			}
		default:
			return params, fmt.Errorf("%s: message %d has unknown role %q", TypeOpenAI, i, m.Role)
		}
	}
	flush()
	for _, t := range req.Tools {
		raw, err := toolJSON(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, param.Override[openai.ChatCompletionToolUnionParam](raw))
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if p.maxCompletion {
			params.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			params.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	if req.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	return params, nil
}

func imageParts(images []Image) []openai.ChatCompletionContentPartUnionParam {
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, im := range images {
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
			URL: "data:" + im.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(im.Data),
		}))
	}
	return parts
}

// argumentsText is a call's arguments as the API wants them: a string, "{}"
// for none.
func argumentsText(a json.RawMessage) string {
	if len(strings.TrimSpace(string(a))) == 0 {
		return "{}"
	}
	return string(a)
}

// toolJSON writes a tool in the chat-completions form, with its parameters
// verbatim and strict only when set.
func toolJSON(t Tool) (json.RawMessage, error) {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	}
	if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
		return nil, fmt.Errorf("tool %s: parameters are not valid JSON", t.Name)
	}
	return marshalVerbatim(struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}{"function", function(t)})
}

// marshalVerbatim is json.Marshal without the escaping of <, > and &, so
// that a schema's patterns and descriptions go out as written.
func marshalVerbatim(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// stream runs one streamed request.
func (p *openAI) stream(ctx context.Context, params openai.ChatCompletionNewParams, emit func(string)) (*Response, error) {
	params.StreamOptions.IncludeUsage = param.NewOpt(true)
	s := p.svc.NewStreaming(ctx, params)
	defer s.Close()
	var (
		text   strings.Builder
		calls  callBuilder
		usage  Usage
		finish string
	)
	for s.Next() {
		ch := s.Current()
		if ch.JSON.Usage.Valid() {
			usage = openAIUsage(ch.Usage)
		}
		for _, choice := range ch.Choices {
			if choice.Index != 0 {
				continue
			}
			d := choice.Delta
			for _, piece := range []string{d.Content, d.Refusal} {
				if piece != "" {
					text.WriteString(piece)
					emit(piece)
				}
			}
			for _, tc := range d.ToolCalls {
				calls.add(int(tc.Index), tc.ID, tc.Function.Name, tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, p.streamError(err, string(params.Model))
	}
	if finish == "" {
		return nil, &APIError{Provider: TypeOpenAI, BaseURL: p.c.baseURL, Model: string(params.Model), Message: "the stream ended before the reply was complete"}
	}
	return p.response(text.String(), calls.calls(), finish, usage), nil
}

// streamError converts an error event of the stream ({"error": …} in a data
// line) to an *APIError.
func (p *openAI) streamError(err error, model string) error {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		typ, msg := errorMessage(se.Event.Data)
		return &APIError{Provider: TypeOpenAI, BaseURL: p.c.baseURL, Model: model, APIKeyEnv: p.c.keyEnv, Type: typ, Message: msg}
	}
	return err
}

// once runs one non-streamed request.
func (p *openAI) once(ctx context.Context, params openai.ChatCompletionNewParams, emit func(string)) (*Response, error) {
	res, err := p.svc.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(res.Choices) == 0 {
		return nil, &APIError{Provider: TypeOpenAI, BaseURL: p.c.baseURL, Model: string(params.Model), Message: "the reply has no choices"}
	}
	m := res.Choices[0].Message
	content := m.Content
	if content == "" {
		content = m.Refusal
	}
	emit(content)
	var calls []ToolCall
	for i, tc := range m.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		calls = append(calls, ToolCall{ID: id, Name: tc.Function.Name, Arguments: json.RawMessage(argumentsText(json.RawMessage(tc.Function.Arguments)))})
	}
	var usage Usage
	if res.JSON.Usage.Valid() {
		usage = openAIUsage(res.Usage)
	}
	return p.response(content, calls, res.Choices[0].FinishReason, usage), nil
}

func openAIUsage(u openai.CompletionUsage) Usage {
	return Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens), CachedInputTokens: int(u.PromptTokensDetails.CachedTokens)}
}

func (p *openAI) response(text string, calls []ToolCall, finish string, usage Usage) *Response {
	switch finish {
	case "stop", "":
		finish = StopEnd
		if len(calls) > 0 { // some servers (Ollama) say stop after tool calls
			finish = StopToolCalls
		}
	case "tool_calls", "function_call":
		finish = StopToolCalls
	case "length":
		finish = StopMaxTokens
	case "content_filter":
		finish = StopFiltered
	}
	return &Response{Message: Message{Role: Assistant, Content: text, ToolCalls: calls}, Usage: usage, StopReason: finish}
}

// callBuilder assembles tool calls from stream deltas: the first delta of a
// call has its index, id and name, the next ones pieces of its arguments.
// A delta with a new id at a used index starts a new call (servers that send
// every call at index 0).
type callBuilder struct {
	list    []*partialCall
	byIndex map[int]int
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

func (b *callBuilder) add(index int, id, name, args string) {
	if b.byIndex == nil {
		b.byIndex = map[int]int{}
	}
	i, ok := b.byIndex[index]
	if !ok || (id != "" && b.list[i].id != "" && id != b.list[i].id) {
		i = len(b.list)
		b.list = append(b.list, &partialCall{})
		b.byIndex[index] = i
	}
	c := b.list[i]
	if id != "" {
		c.id = id
	}
	if name != "" && c.name == "" {
		c.name = name
	}
	c.args.WriteString(args)
}

func (b *callBuilder) calls() []ToolCall {
	var out []ToolCall
	for i, c := range b.list {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out = append(out, ToolCall{ID: id, Name: c.name, Arguments: json.RawMessage(argumentsText(json.RawMessage(c.args.String())))})
	}
	return out
}
