package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

const openAIID = "chatcmpl-providertest"

func openAIFinish(rep Reply) string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func openAIUsage(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens":         u.InputTokens,
		"completion_tokens":     u.OutputTokens,
		"total_tokens":          u.InputTokens + u.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedInputTokens},
	}
}

func openAICallID(c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d", i+1)
}

// openAIStream answers stream: true: a chunk with the role, a chunk per word
// of the text, for each tool call a chunk with its id and name then its
// arguments in pieces, a chunk with the finish_reason, the usage chunk if
// include_usage was asked for, and [DONE].
func (s *Server) openAIStream(w http.ResponseWriter, r *http.Request, rep Reply, model string, usage Usage, includeUsage bool) {
	e := newSSE(w)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": openAIID, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
	}
	if rep.StreamError != "" {
		e.send("", map[string]any{"error": map[string]any{"type": rep.StreamError, "message": "providertest: " + rep.StreamError, "code": nil}})
		return
	}
	e.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	var deltas []map[string]any
	for _, p := range pieces(rep.Text) {
		deltas = append(deltas, map[string]any{"content": p})
	}
	for i, c := range rep.ToolCalls {
		deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": openAICallID(c, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}})
		for _, p := range splitJSON(args(c)) {
			deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}})
		}
	}
	for _, d := range deltas {
		e.send("", chunk(d, nil))
		if rep.Hang {
			break
		}
	}
	if rep.Hang {
		s.hang(r)
		return
	}
	e.send("", chunk(map[string]any{}, openAIFinish(rep)))
	if includeUsage {
		e.send("", map[string]any{
			"id": openAIID, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": openAIUsage(usage),
		})
	}
	e.send("", "[DONE]")
}

// openAIOnce answers stream: false with one chat.completion object.
func (s *Server) openAIOnce(w http.ResponseWriter, r *http.Request, rep Reply, model string, usage Usage) {
	if rep.Hang {
		s.hang(r)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if rep.Text != "" {
		msg["content"] = rep.Text
	}
	if len(rep.ToolCalls) > 0 {
		var calls []any
		for i, c := range rep.ToolCalls {
			calls = append(calls, map[string]any{
				"id": openAICallID(c, i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": args(c)},
			})
		}
		msg["tool_calls"] = calls
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": openAIID, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": openAIFinish(rep)}},
		"usage":   openAIUsage(usage),
	})
}
