package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/opair-dev/opair/host/config"
	"github.com/opair-dev/opair/host/mcpclient"
	"github.com/opair-dev/opair/host/plugin"
	"github.com/opair-dev/opair/host/registry"
	"github.com/opair-dev/opair/internal/childenv"
	"github.com/opair-dev/opair/internal/pathclass"
)

// host is what a command that uses tools sets up: the configuration, the
// plugins and the validated tools.
type host struct {
	root    string
	cfgPath string
	cfg     *config.Config
	plugins *plugin.Manager
	reg     *registry.Registry
	log     hclog.Logger
	missing []string // built-in plugins found nowhere
	paths   *pathclass.Resolver
	mcp     *mcpclient.Set
}

// hostOptions tune setup.
type hostOptions struct {
	project   string // project root; "" = current directory
	callbacks plugin.Callbacks
	logOut    io.Writer
	noTools   bool // start the plugins only; leave the tools directory alone
}

// setupHost loads the configuration (failing closed on any error), starts
// the plugins and validates the tools against what they serve.
func setupHost(ctx context.Context, o hostOptions) (*host, error) {
	root := o.project
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		root = wd
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, usageError{fmt.Errorf("project %s is not a directory", root)}
	}
	cfgPath, err := config.Path()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(cfgPath, root)
	if err != nil {
		return nil, err
	}
	logOut := o.logOut
	if logOut == nil {
		logOut = os.Stderr
	}
	level := hclog.Warn
	if l := os.Getenv("OPAIR_LOG"); l != "" {
		level = hclog.LevelFromString(l)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "opair", Level: level, Output: logOut})

	selfDir := ""
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		selfDir = filepath.Dir(exe)
	}
	pluginsDir, err := plugin.PluginsDir()
	if err != nil {
		return nil, err
	}
	specs, missing := plugin.Discover(selfDir, pluginsDir, cfg.Pins)
	toolsDir, _, err := registry.ToolsDir()
	if err != nil {
		return nil, err
	}
	mgr, err := plugin.Start(ctx, specs, plugin.Options{
		Logger:      log,
		ProjectRoot: root,
		Env:         childenv.Build(os.Environ()),
		Callbacks:   o.callbacks,
		HostTools:   []string{"askQuestion"},
		// Opair's own files: no plugin writes them, wherever they are.
		ProtectedPaths: []string{toolsDir, cfgPath, pluginsDir},
	})
	if err != nil {
		return nil, err
	}
	for _, e := range mgr.StartErrors {
		log.Warn(e.Error())
	}
	h := &host{root: root, cfgPath: cfgPath, cfg: cfg, plugins: mgr, log: log, missing: missing}
	if o.noTools {
		return h, nil
	}
	dir, explicit, err := registry.ToolsDir()
	if err != nil {
		mgr.Close()
		return nil, err
	}
	// Opair's own files are protected wherever they are: no builtin tool
	// writes the tools, the configuration or the plugins.
	h.paths, err = pathclass.New(root, pathclass.Options{Protected: []string{dir, cfgPath, pluginsDir}})
	if err != nil {
		mgr.Close()
		return nil, fmt.Errorf("project %s: %w", root, err)
	}
	status := func(server string) error {
		err := mgr.Status(server)
		if err == nil {
			return nil
		}
		for _, m := range missing {
			if m == server {
				return fmt.Errorf("served by %s, which is installed neither next to opair (%s) nor in %s; install it with `go install ./...`", server, selfDir, pluginsDir)
			}
		}
		return err
	}
	reg, err := registry.Load(registry.Options{Dir: dir, Explicit: explicit, Catalog: plugin.Catalog(mgr), PathEnv: os.Getenv("PATH"), Status: status})
	if err != nil {
		mgr.Close()
		return nil, err
	}
	h.reg = reg
	if len(cfg.MCPServers) > 0 {
		set, errs := mcpclient.ConnectAll(ctx, cfg.MCPServers, os.Environ(), root)
		for _, err := range errs {
			log.Warn(err.Error())
		}
		for _, err := range reg.AddExternal(set.Tools()) {
			log.Warn(err.Error())
		}
		h.mcp = set
	}
	return h, nil
}

func (h *host) close() {
	h.mcp.Close()
	h.plugins.Close()
	if h.paths != nil {
		_ = h.paths.Close()
	}
}
