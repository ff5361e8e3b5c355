// Command v2plugin speaks a plugin protocol version this host does not: the
// manager must refuse it with an error naming both versions.
package main

import (
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
	"github.com/opair-dev/opair/wire"
)

type server struct {
	pluginv1.UnimplementedHandlerServiceServer
}

func (server) SetBroker(*goplugin.GRPCBroker) {}

func main() {
	hs := wire.Handshake
	hs.ProtocolVersion = 2
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  hs,
		VersionedPlugins: map[int]goplugin.PluginSet{2: {wire.PluginName: &wire.HandlerPlugin{Impl: server{}}}},
		GRPCServer:       func(opts []grpc.ServerOption) *grpc.Server { return grpc.NewServer(opts...) },
	})
}
