package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

const anthropicID = "msg_providertest"

func anthropicStop(rep Reply) string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func anthropicCallID(c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("toolu_%02d", i+1)
}

func anthropicUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens - u.CachedInputTokens,
		"cache_read_input_tokens":     u.CachedInputTokens,
		"cache_creation_input_tokens": 0,
		"output_tokens":               u.OutputTokens,
	}
}

// anthropicStream answers stream: true with the messages event sequence:
// message_start, a ping, for the text and each tool call a
// content_block_start, its content_block_delta events (text_delta per word,
// input_json_delta pieces cut in the middle of the JSON) and a
// content_block_stop, then message_delta with the stop reason and the output
// usage, and message_stop.
func (s *Server) anthropicStream(w http.ResponseWriter, r *http.Request, rep Reply, model string, usage Usage) {
	e := newSSE(w)
	start := anthropicUsage(usage)
	start["output_tokens"] = 1
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": anthropicID, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start,
	}})
	if rep.StreamError != "" {
		e.send("error", map[string]any{"type": "error", "error": map[string]any{"type": rep.StreamError, "message": "providertest: " + rep.StreamError}})
		return
	}
	e.send("ping", map[string]any{"type": "ping"})
	type event struct {
		name string
		data map[string]any
	}
	var events []event
	index := 0
	if rep.Text != "" {
		events = append(events, event{"content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}}})
		for _, p := range pieces(rep.Text) {
			events = append(events, event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": p}}})
		}
		events = append(events, event{"content_block_stop", map[string]any{"type": "content_block_stop", "index": index}})
		index++
	}
	for i, c := range rep.ToolCalls {
		events = append(events, event{"content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": anthropicCallID(c, i), "name": c.Name, "input": map[string]any{}}}})
		events = append(events, event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": ""}}})
		for _, p := range splitJSON(args(c)) {
			events = append(events, event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}})
		}
		events = append(events, event{"content_block_stop", map[string]any{"type": "content_block_stop", "index": index}})
		index++
	}
	for i, ev := range events {
		e.send(ev.name, ev.data)
		if rep.Hang && (i > 0 || len(events) == 1) {
			break
		}
	}
	if rep.Hang {
		s.hang(r)
		return
	}
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStop(rep), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage.OutputTokens}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicOnce answers stream: false with one message object.
func (s *Server) anthropicOnce(w http.ResponseWriter, r *http.Request, rep Reply, model string, usage Usage) {
	if rep.Hang {
		s.hang(r)
		return
	}
	content := []any{}
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	for i, c := range rep.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": anthropicCallID(c, i), "name": c.Name, "input": json.RawMessage(args(c))})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": anthropicID, "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": anthropicStop(rep), "stop_sequence": nil, "usage": anthropicUsage(usage),
	})
}
