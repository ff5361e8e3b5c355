package plugin

import (
	"context"
	"crypto/rand"
	"encoding/json"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

var randReader = rand.Reader

// Callbacks is what the host offers plugins through HostService. The session
// implements it: nested tool calls pass the same gate as the model's own,
// questions reach the human, completions use the host's credentials.
type Callbacks interface {
	AskHuman(ctx context.Context, callID, question string, options []string, allowCustom bool) (answer string, declined bool, err error)
	CallTool(ctx context.Context, callID, tool string, args json.RawMessage, onProgress func(*pluginv1.Progress)) (*pluginv1.Result, error)
	Complete(ctx context.Context, callID, role string, messages json.RawMessage, tools []string, onText func(string)) (json.RawMessage, error)
}

// hostServer serves HostService to one plugin.
type hostServer struct {
	pluginv1.UnimplementedHostServiceServer
	cb     Callbacks
	plugin string
}

func (h *hostServer) AskHuman(ctx context.Context, req *pluginv1.AskHumanRequest) (*pluginv1.AskHumanResponse, error) {
	answer, declined, err := h.cb.AskHuman(ctx, req.CallId, req.Question, req.Options, req.AllowCustom)
	if err != nil {
		return nil, status.Error(codes.Unknown, err.Error())
	}
	return &pluginv1.AskHumanResponse{Answer: answer, Declined: declined}, nil
}

func (h *hostServer) CallTool(req *pluginv1.CallToolRequest, stream grpc.ServerStreamingServer[pluginv1.CallToolResponse]) error {
	res, err := h.cb.CallTool(stream.Context(), req.CallId, req.ToolName, req.ArgumentsJson, func(p *pluginv1.Progress) {
		_ = stream.Send(&pluginv1.CallToolResponse{Event: &pluginv1.CallToolResponse_Progress{Progress: p}})
	})
	if err != nil {
		return status.Error(codes.Unknown, err.Error())
	}
	return stream.Send(&pluginv1.CallToolResponse{Event: &pluginv1.CallToolResponse_Result{Result: res}})
}

func (h *hostServer) Complete(req *pluginv1.CompleteRequest, stream grpc.ServerStreamingServer[pluginv1.CompleteResponse]) error {
	msg, err := h.cb.Complete(stream.Context(), req.CallId, req.Role, req.MessagesJson, req.Tools, func(s string) {
		_ = stream.Send(&pluginv1.CompleteResponse{Event: &pluginv1.CompleteResponse_TextDelta{TextDelta: s}})
	})
	if err != nil {
		return status.Error(codes.Unknown, err.Error())
	}
	return stream.Send(&pluginv1.CompleteResponse{Event: &pluginv1.CompleteResponse_MessageJson{MessageJson: msg}})
}
