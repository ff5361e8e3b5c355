package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
	"github.com/opair-dev/opair/wire"
)

// Logger returns the plugin's logger. Its lines reach the host's log (they
// are written to the stderr the plugin started with, which the host reads).
func Logger() hclog.Logger { return logger }

var logger = hclog.New(&hclog.LoggerOptions{
	Name:       "plugin",
	Level:      hclog.Debug,
	Output:     os.Stderr, // the real stderr, captured before go-plugin redirects it
	JSONFormat: true,
})

// Serve serves the plugin and blocks until the host stops it. Run by hand
// (not by the host), it prints a message and exits.
func Serve(p Plugin) {
	srv := newServer(p)
	go srv.watchParent()
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: wire.PluginSet(srv),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(wire.ServerOptions(opts)...)
		},
		Logger: logger,
	})
	srv.shutdown()
}

// server implements wire.Server over a Plugin.
type server struct {
	pluginv1.UnimplementedHandlerServiceServer
	p Plugin

	mu        sync.Mutex
	broker    *goplugin.GRPCBroker
	host      *hostClient
	root      string
	protected []string

	// ctx is cancelled when the plugin shuts down: every call is cancelled.
	ctx      context.Context
	cancel   context.CancelFunc
	inflight sync.WaitGroup
}

func newServer(p Plugin) *server {
	ctx, cancel := context.WithCancel(context.Background())
	return &server{p: p, ctx: ctx, cancel: cancel}
}

func (s *server) SetBroker(b *goplugin.GRPCBroker) {
	s.mu.Lock()
	s.broker = b
	s.mu.Unlock()
}

// watchParent exits the plugin when the host dies without stopping it: the
// parent changes when the host process is gone. Calls are cancelled first so
// that their child processes are killed.
func (s *server) watchParent() {
	parent := os.Getppid()
	for {
		time.Sleep(250 * time.Millisecond)
		if os.Getppid() != parent {
			logger.Warn("host process is gone; cancelling calls and exiting")
			s.shutdown()
			os.Exit(2)
		}
	}
}

// shutdown cancels every call and waits (boundedly) for them to return.
func (s *server) shutdown() {
	s.cancel()
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	resp := &pluginv1.DescribeResponse{ProtocolMinor: wire.ProtocolMinor, PluginVersion: s.p.Version, NeedsHost: s.p.NeedsHost}
	for _, name := range sortedNames(s.p.Types) {
		resp.HandlerTypes = append(resp.HandlerTypes, &pluginv1.HandlerType{Name: name, Description: s.p.Types[name].Description})
	}
	for _, name := range sortedNames(s.p.Tools) {
		resp.HandlerlessTools = append(resp.HandlerlessTools, &pluginv1.HandlerlessTool{Name: name, Description: s.p.Tools[name].Description})
	}
	return resp, nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.root = req.ProjectRoot
	s.protected = append([]string(nil), req.ProtectedPaths...)
	if req.HostBrokerId != 0 && s.p.NeedsHost {
		if s.broker == nil {
			return nil, status.Error(codes.FailedPrecondition, "no broker to reach the host")
		}
		conn, err := s.broker.DialWithOptions(req.HostBrokerId, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(wire.MaxMessageBytes), grpc.MaxCallSendMsgSize(wire.MaxMessageBytes)))
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "dialing the host's callback service: %v", err)
		}
		s.host = &hostClient{rpc: pluginv1.NewHostServiceClient(conn)}
	}
	return &pluginv1.ConfigureResponse{}, nil
}

func (s *server) ValidateHandler(ctx context.Context, req *pluginv1.ValidateHandlerRequest) (resp *pluginv1.ValidateHandlerResponse, err error) {
	t, ok := s.p.Types[req.HandlerType]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "this plugin does not serve handler type %q", req.HandlerType)
	}
	resp = &pluginv1.ValidateHandlerResponse{}
	if t.Validate == nil {
		return resp, nil
	}
	defer func() {
		if r := recover(); r != nil {
			logger.Error("validator panicked", "type", req.HandlerType, "panic", r, "stack", string(debug.Stack()))
			resp, err = nil, status.Errorf(codes.Internal, "validator of %q panicked: %v", req.HandlerType, r)
		}
	}()
	for _, d := range t.Validate(ctx, &Validation{Type: req.HandlerType, Tool: req.ToolName, Handler: req.HandlerJson}) {
		sev := pluginv1.Severity_SEVERITY_ERROR
		if d.Warning {
			sev = pluginv1.Severity_SEVERITY_WARNING
		}
		resp.Diagnostics = append(resp.Diagnostics, &pluginv1.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, JsonPointer: d.Pointer})
	}
	return resp, nil
}

func (s *server) Invoke(req *pluginv1.InvokeRequest, stream grpc.ServerStreamingServer[pluginv1.InvokeResponse]) error {
	var h Handler
	if req.HandlerType != "" {
		t, ok := s.p.Types[req.HandlerType]
		if !ok {
			return status.Errorf(codes.NotFound, "this plugin does not serve handler type %q", req.HandlerType)
		}
		h = t.Handler
	} else {
		t, ok := s.p.Tools[req.ToolName]
		if !ok {
			return status.Errorf(codes.NotFound, "this plugin does not serve the tool %q", req.ToolName)
		}
		h = t.Handler
	}
	if h == nil {
		return status.Errorf(codes.Unimplemented, "no handler for %q", req.ToolName)
	}
	s.inflight.Add(1)
	defer s.inflight.Done()
	// The call's context ends when the host cancels the stream or the
	// plugin shuts down.
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	call := &Call{
		ID: req.CallId, Tool: req.ToolName, Type: req.HandlerType,
		Handler: json.RawMessage(req.HandlerJson), Args: json.RawMessage(req.ArgumentsJson),
		ProjectRoot: req.ProjectRoot, DryRun: req.DryRun,
	}
	if len(call.Handler) == 0 {
		call.Handler = json.RawMessage("{}")
	}
	if len(call.Args) == 0 {
		call.Args = json.RawMessage("{}")
	}
	if l := req.Limits; l != nil {
		call.Timeout = time.Duration(l.TimeoutMs) * time.Millisecond
		call.OutputCap = int(l.OutputCapBytes)
	}
	if c := req.Command; c != nil {
		call.Command, call.Env, call.ModelArgsStart = c.Argv, c.Env, int(c.ModelArgsStart)
	}
	s.mu.Lock()
	if s.host != nil {
		call.Host = s.host.forCall(req.CallId)
	}
	call.ProtectedPaths = s.protected
	s.mu.Unlock()

	prog := &streamProgress{ctx: ctx, send: func(p *pluginv1.Progress) error {
		return stream.Send(&pluginv1.InvokeResponse{Event: &pluginv1.InvokeResponse_Progress{Progress: p}})
	}}
	res, err := safeInvoke(ctx, h, call, prog)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return status.FromContextError(ctx.Err()).Err()
		}
		return status.Error(codes.Unknown, err.Error())
	}
	if res == nil {
		return status.Errorf(codes.Internal, "handler of %q returned neither a result nor an error", req.ToolName)
	}
	pr, err := toProtoResult(res)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return stream.Send(&pluginv1.InvokeResponse{Event: &pluginv1.InvokeResponse_Result{Result: pr}})
}

// safeInvoke runs a handler, turning a panic into an error.
func safeInvoke(ctx context.Context, h Handler, call *Call, p Progress) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			logger.Error("handler panicked", "tool", call.Tool, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("handler of %s panicked: %v", call.Tool, r)
		}
	}()
	return h.Invoke(ctx, call, p)
}

func toProtoResult(r *Result) (*pluginv1.Result, error) {
	out := &pluginv1.Result{IsError: r.IsError, Summary: r.Summary}
	for _, c := range r.Content {
		if c.Image != nil {
			out.Content = append(out.Content, &pluginv1.Content{Kind: &pluginv1.Content_Image{Image: &pluginv1.Image{MimeType: c.Image.MIMEType, Data: c.Image.Data}}})
		} else {
			out.Content = append(out.Content, &pluginv1.Content{Kind: &pluginv1.Content_Text{Text: c.Text}})
		}
	}
	if r.Details != nil {
		b, err := json.Marshal(r.Details)
		if err != nil {
			return nil, fmt.Errorf("encoding result details: %w", err)
		}
		out.DetailsJson = b
	}
	return out, nil
}

// FromProtoResult converts a protocol result to the SDK's plain type.
func fromProtoResult(r *pluginv1.Result) *Result {
	out := &Result{IsError: r.IsError, Summary: r.Summary}
	for _, c := range r.Content {
		switch k := c.Kind.(type) {
		case *pluginv1.Content_Text:
			out.Content = append(out.Content, Content{Text: k.Text})
		case *pluginv1.Content_Image:
			out.Content = append(out.Content, Content{Image: &Image{MIMEType: k.Image.MimeType, Data: k.Image.Data}})
		}
	}
	if len(r.DetailsJson) > 0 {
		out.Details = json.RawMessage(r.DetailsJson)
	}
	return out
}

// maxChunk bounds one streamed output message.
const maxChunk = 256 << 10

type streamProgress struct {
	ctx  context.Context
	mu   sync.Mutex
	send func(*pluginv1.Progress) error
}

func (p *streamProgress) Status(msg string) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.send(&pluginv1.Progress{Message: msg})
}

func (p *streamProgress) Output(b []byte) error {
	for len(b) > 0 {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		n := min(len(b), maxChunk)
		p.mu.Lock()
		err := p.send(&pluginv1.Progress{Output: append([]byte(nil), b[:n]...)})
		p.mu.Unlock()
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// hostClient is the plugin side of HostService.
type hostClient struct {
	rpc pluginv1.HostServiceClient
}

func (h *hostClient) forCall(id string) Host { return &callHost{h: h, id: id} }

type callHost struct {
	h  *hostClient
	id string
}

func (c *callHost) AskHuman(ctx context.Context, question string, options []string, allowCustom bool) (string, bool, error) {
	resp, err := c.h.rpc.AskHuman(ctx, &pluginv1.AskHumanRequest{CallId: c.id, Question: question, Options: options, AllowCustom: allowCustom})
	if err != nil {
		return "", false, fmt.Errorf("asking the human through the host: %w", err)
	}
	return resp.Answer, resp.Declined, nil
}

func (c *callHost) CallTool(ctx context.Context, tool string, args any, p Progress) (*Result, error) {
	raw, ok := args.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("encoding the arguments of %s: %w", tool, err)
		}
		raw = b
	}
	stream, err := c.h.rpc.CallTool(ctx, &pluginv1.CallToolRequest{CallId: c.id, ToolName: tool, ArgumentsJson: raw})
	if err != nil {
		return nil, fmt.Errorf("calling %s through the host: %w", tool, err)
	}
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return nil, fmt.Errorf("calling %s through the host: the stream ended without a result", tool)
		}
		if err != nil {
			return nil, fmt.Errorf("calling %s through the host: %w", tool, err)
		}
		switch e := ev.Event.(type) {
		case *pluginv1.CallToolResponse_Progress:
			if p != nil {
				if e.Progress.Message != "" {
					_ = p.Status(e.Progress.Message)
				}
				if len(e.Progress.Output) > 0 {
					_ = p.Output(e.Progress.Output)
				}
			}
		case *pluginv1.CallToolResponse_Result:
			return fromProtoResult(e.Result), nil
		}
	}
}

func (c *callHost) Complete(ctx context.Context, role string, messages json.RawMessage, tools []string, onText func(string)) (json.RawMessage, error) {
	stream, err := c.h.rpc.Complete(ctx, &pluginv1.CompleteRequest{CallId: c.id, Role: role, MessagesJson: messages, Tools: tools})
	if err != nil {
		return nil, fmt.Errorf("model completion through the host: %w", err)
	}
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return nil, errors.New("model completion through the host: the stream ended without a message")
		}
		if err != nil {
			return nil, fmt.Errorf("model completion through the host: %w", err)
		}
		switch e := ev.Event.(type) {
		case *pluginv1.CompleteResponse_TextDelta:
			if onText != nil {
				onText(e.TextDelta)
			}
		case *pluginv1.CompleteResponse_MessageJson:
			return json.RawMessage(e.MessageJson), nil
		}
	}
}
