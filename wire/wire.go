// Package wire is the go-plugin glue that both sides of the plugin boundary
// share: the handshake, the plugin set, and the GRPCPlugin that registers
// HandlerService on the plugin side and dials it on the host side. The host
// (host/plugin) and the SDK (sdk/) both import it; it imports neither.
//
// Nothing here decides permissions or does a handler's work.
package wire

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
)

// ProtocolVersion is the major version of the plugin protocol: the suffix of
// the proto package (opair.plugin.v1) and go-plugin's app protocol version.
// A breaking change makes a v2 package and bumps it.
const ProtocolVersion = 1

// ProtocolMinor counts additive changes inside ProtocolVersion.
const ProtocolMinor = 0

// PluginName is the name under which the handler service is dispensed.
const PluginName = "handler"

// MaxMessageBytes bounds one gRPC message in either direction. Output is
// streamed in smaller chunks; this only has to fit a result.
const MaxMessageBytes = 64 << 20

// Handshake is go-plugin's handshake. The cookie only tells a plugin binary
// run by hand that it is not meant to be; it is not a security measure.
// Never change it; change ProtocolVersion instead.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "OPAIR_PLUGIN_COOKIE",
	MagicCookieValue: "5f1b0c3e8d2a4f6b9e7c1d3a5b7f9e2c",
}

// ServerOptions are the gRPC options of both sides' servers.
func ServerOptions(opts []grpc.ServerOption) []grpc.ServerOption {
	return append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes))
}

// Server is what a plugin implements: the handler service, plus a hook that
// receives the broker so that it can dial the host's callback service.
type Server interface {
	pluginv1.HandlerServiceServer
	SetBroker(*goplugin.GRPCBroker)
}

// HandlerPlugin is the go-plugin GRPCPlugin for HandlerService.
type HandlerPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	// Impl is set on the plugin side only.
	Impl Server
}

// GRPCServer registers the handler service (plugin side).
func (p *HandlerPlugin) GRPCServer(b *goplugin.GRPCBroker, s *grpc.Server) error {
	p.Impl.SetBroker(b)
	pluginv1.RegisterHandlerServiceServer(s, p.Impl)
	return nil
}

// GRPCClient returns a *Client (host side). ctx is cancelled by go-plugin
// when the plugin process exits.
func (p *HandlerPlugin) GRPCClient(ctx context.Context, b *goplugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &Client{Handler: pluginv1.NewHandlerServiceClient(cc), Broker: b, Exited: ctx.Done()}, nil
}

// Client is the host's view of one plugin process.
type Client struct {
	Handler pluginv1.HandlerServiceClient
	Broker  *goplugin.GRPCBroker
	// Exited is closed when the plugin process has exited.
	Exited <-chan struct{}
}

// PluginSet is the set both sides use, keyed by protocol version.
func PluginSet(impl Server) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{ProtocolVersion: {PluginName: &HandlerPlugin{Impl: impl}}}
}
