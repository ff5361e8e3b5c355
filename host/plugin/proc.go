package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/opair-dev/opair/internal/proctree"
	pluginv1 "github.com/opair-dev/opair/proto/opair/plugin/v1"
	"github.com/opair-dev/opair/wire"
)

// InstanceVar is the environment variable that marks every process a plugin
// instance starts: after a crash, the host kills whatever still carries it.
const InstanceVar = "OPAIR_PLUGIN_INSTANCE"

// proc is one plugin binary and its current process, if any.
type proc struct {
	m    *Manager
	spec Spec

	mu       sync.Mutex
	client   *goplugin.Client
	conn     *wire.Client
	instance string // marker value of the current process
	desc     *pluginv1.DescribeResponse
	tail     *tailBuffer
	crashes  []time.Time
	failed   error // set after too many crashes, or a start error that cannot heal
	starting chan struct{}
}

func newProc(m *Manager, s Spec) *proc {
	return &proc{m: m, spec: s, tail: newTailBuffer(20)}
}

// get returns a live connection, starting or restarting the process.
func (p *proc) get(ctx context.Context) (*wire.Client, error) {
	for {
		p.mu.Lock()
		if p.failed != nil {
			err := p.failed
			p.mu.Unlock()
			return nil, err
		}
		if p.conn != nil {
			select {
			case <-p.conn.Exited:
				// Died between calls: clean up and start anew.
				p.reapLocked()
			default:
				c := p.conn
				p.mu.Unlock()
				return c, nil
			}
		}
		if p.starting != nil {
			ch := p.starting
			p.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		p.starting = ch
		p.mu.Unlock()
		err := p.start(ctx)
		p.mu.Lock()
		p.starting = nil
		close(ch)
		if err != nil && isPermanent(err) {
			p.failed = err
		}
		p.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// permanentError is a start failure that retrying cannot fix.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

func isPermanent(err error) bool {
	var pe permanentError
	return errors.As(err, &pe)
}

var versionMismatch = regexp.MustCompile(`Plugin version: (\d+), Client versions: \[([\d ]+)\]`)

func (p *proc) start(ctx context.Context) error {
	var instance [8]byte
	_, _ = io.ReadFull(randReader, instance[:])
	inst := hex.EncodeToString(instance[:])
	cmd := exec.Command(p.spec.Path)
	cmd.Env = append(slices.Clone(p.m.opts.Env),
		"PLUGIN_UNIX_SOCKET_DIR="+p.m.sockDir,
		InstanceVar+"="+inst,
	)
	var secure *goplugin.SecureConfig
	if p.spec.Pin != "" {
		sum, err := hex.DecodeString(p.spec.Pin)
		if err != nil || len(sum) != sha256.Size {
			return permanentError{fmt.Errorf("plugin %s: the pin %q is not a SHA-256 in hex", p.spec.Name, p.spec.Pin)}
		}
		secure = &goplugin.SecureConfig{Checksum: sum, Hash: sha256.New()} // a fresh hash per start
	}
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		VersionedPlugins: wire.PluginSet(nil),
		Cmd:              cmd,
		SecureConfig:     secure,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     p.m.opts.StartTimeout,
		Logger:           p.m.log,
		Stderr:           p.tail,
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(wire.MaxMessageBytes), grpc.MaxCallSendMsgSize(wire.MaxMessageBytes))},
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return p.startError(err)
	}
	raw, err := rpc.Dispense(wire.PluginName)
	if err != nil {
		client.Kill()
		return fmt.Errorf("plugin %s: %w", p.spec.Name, err)
	}
	conn, ok := raw.(*wire.Client)
	if !ok {
		client.Kill()
		return permanentError{fmt.Errorf("plugin %s: unexpected client type %T", p.spec.Name, raw)}
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	desc, err := conn.Handler.Describe(dctx, &pluginv1.DescribeRequest{HostProtocolMinor: wire.ProtocolMinor})
	if err != nil {
		client.Kill()
		return fmt.Errorf("plugin %s: describe: %w%s", p.spec.Name, err, p.tail.suffix())
	}
	if p.desc != nil && !sameOffer(p.desc, desc) {
		client.Kill()
		return permanentError{fmt.Errorf("plugin %s changed what it serves since start-up; restart opair", p.spec.Name)}
	}
	creq := &pluginv1.ConfigureRequest{ProjectRoot: p.m.opts.ProjectRoot, ProtectedPaths: p.m.opts.ProtectedPaths}
	if desc.NeedsHost && p.m.opts.Callbacks != nil {
		id := conn.Broker.NextId()
		go conn.Broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(wire.ServerOptions(opts)...)
			pluginv1.RegisterHostServiceServer(s, &hostServer{cb: p.m.opts.Callbacks, plugin: p.spec.Name})
			return s
		})
		creq.HostBrokerId = id
	}
	if _, err := conn.Handler.Configure(dctx, creq); err != nil {
		client.Kill()
		return fmt.Errorf("plugin %s: configure: %w%s", p.spec.Name, err, p.tail.suffix())
	}
	p.mu.Lock()
	p.client, p.conn, p.desc, p.instance = client, conn, desc, inst
	p.mu.Unlock()
	p.m.log.Debug("plugin started", "plugin", p.spec.Name, "version", desc.PluginVersion, "pid", client.ReattachConfig().Pid)
	return nil
}

func sameOffer(a, b *pluginv1.DescribeResponse) bool {
	names := func(d *pluginv1.DescribeResponse) string {
		var s []string
		for _, t := range d.HandlerTypes {
			s = append(s, "t:"+t.Name)
		}
		for _, t := range d.HandlerlessTools {
			s = append(s, "h:"+t.Name)
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	return names(a) == names(b)
}

// startError turns go-plugin's start errors into ones that say what to do.
func (p *proc) startError(err error) error {
	if errors.Is(err, goplugin.ErrChecksumsDoNotMatch) {
		actual := "unknown"
		if b, rerr := os.ReadFile(p.spec.Path); rerr == nil {
			sum := sha256.Sum256(b)
			actual = hex.EncodeToString(sum[:])
		}
		return permanentError{fmt.Errorf("plugin %s: refusing to start it: its SHA-256 is %s, but the config pins %s (if you updated it on purpose, update the pin in plugins.pins)", p.spec.Name, actual, p.spec.Pin)}
	}
	if m := versionMismatch.FindStringSubmatch(err.Error()); m != nil {
		return permanentError{fmt.Errorf("plugin %s speaks plugin protocol version %s, but this opair speaks version %s: install a version of the plugin built for protocol %d", p.spec.Name, m[1], strings.TrimSpace(m[2]), wire.ProtocolVersion)}
	}
	return fmt.Errorf("plugin %s (%s) failed to start: %w%s", p.spec.Name, p.spec.Path, err, p.tail.suffix())
}

// invoke runs one call and classifies its failure.
func (p *proc) invoke(ctx context.Context, req *pluginv1.InvokeRequest, onProgress func(*pluginv1.Progress)) (*pluginv1.Result, error) {
	conn, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	stream, err := conn.Handler.Invoke(ctx, req)
	if err != nil {
		return nil, p.callError(ctx, conn, err)
	}
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return nil, fmt.Errorf("plugin %s ended the call of %s without a result", p.spec.Name, req.ToolName)
		}
		if err != nil {
			return nil, p.callError(ctx, conn, err)
		}
		switch e := ev.Event.(type) {
		case *pluginv1.InvokeResponse_Progress:
			if onProgress != nil {
				onProgress(e.Progress)
			}
		case *pluginv1.InvokeResponse_Result:
			return e.Result, nil
		}
	}
}

// callError says whether a failed call was cancelled, crashed its plugin,
// or failed in the plugin.
func (p *proc) callError(ctx context.Context, conn *wire.Client, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("call cancelled: %w", ctx.Err())
	}
	st, _ := status.FromError(err)
	if st.Code() == codes.Unavailable || st.Code() == codes.Canceled {
		// The process may be dying: give go-plugin a moment to notice.
		select {
		case <-conn.Exited:
		case <-time.After(time.Second):
		}
	}
	select {
	case <-conn.Exited:
		return p.crashed(conn, err)
	default:
	}
	if st.Code() == codes.Unknown {
		return fmt.Errorf("%s: %s", p.spec.Name, st.Message())
	}
	return fmt.Errorf("%s: %w", p.spec.Name, err)
}

// crashed records a crash, cleans up what the dead process left behind, and
// returns the error for the calls in flight.
func (p *proc) crashed(conn *wire.Client, err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	tail := p.tail.lines()
	if p.conn == conn {
		p.reapLocked()
		now := time.Now()
		p.crashes = append(p.crashes, now)
		recent := p.crashes[:0]
		for _, t := range p.crashes {
			if now.Sub(t) <= p.m.opts.CrashWindow {
				recent = append(recent, t)
			}
		}
		p.crashes = recent
		if len(recent) >= p.m.opts.CrashLimit {
			p.failed = fmt.Errorf("%w: %s crashed %d times within %s and is off for the rest of this session; its last stderr lines:\n  %s",
				ErrFailed, p.spec.Name, len(recent), p.m.opts.CrashWindow, strings.Join(tail, "\n  "))
		}
	}
	return &CrashError{Plugin: p.spec.Name, Tail: tail, Err: err}
}

// reapLocked kills the current process (if still alive) and every process
// it started that outlived it.
func (p *proc) reapLocked() {
	if p.client != nil {
		p.client.Kill()
	}
	if p.instance != "" {
		if n := proctree.KillEnv(InstanceVar+"="+p.instance, 2*time.Second); n > 0 {
			p.m.log.Warn("killed processes left behind by a dead plugin", "plugin", p.spec.Name, "count", n)
		}
	}
	p.client, p.conn, p.instance = nil, nil, ""
}

func (p *proc) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reapLocked()
}

func (p *proc) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed != nil {
		return p.failed
	}
	if p.desc == nil {
		return fmt.Errorf("plugin %s is not running", p.spec.Name)
	}
	return nil
}

func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil || p.client.Exited() {
		return 0
	}
	if rc := p.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// tailBuffer keeps the last lines a plugin wrote to stderr. hclog JSON lines
// are reduced to their message.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	partial []byte
	buf     []string
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.add(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 4096 {
		t.add(string(t.partial))
		t.partial = nil
	}
	return len(b), nil
}

func (t *tailBuffer) add(line string) {
	line = strings.TrimRight(line, "\r")
	if strings.HasPrefix(line, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if msg, ok := m["@message"].(string); ok {
				lvl, _ := m["@level"].(string)
				line = fmt.Sprintf("[%s] %s", strings.ToUpper(lvl), msg)
				for k, v := range m {
					if !strings.HasPrefix(k, "@") {
						line += fmt.Sprintf(" %s=%v", k, v)
					}
				}
			}
		}
	}
	if line == "" {
		return
	}
	t.buf = append(t.buf, line)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
}

func (t *tailBuffer) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := slices.Clone(t.buf)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	return out
}

func (t *tailBuffer) suffix() string {
	l := t.lines()
	if len(l) == 0 {
		return ""
	}
	if len(l) > 8 {
		l = l[len(l)-8:]
	}
	return "; its last stderr lines:\n  " + strings.Join(l, "\n  ")
}
