// Command testplugin is a plugin for the plugin manager's tests: it serves
// the handler type "test", whose arguments choose a behaviour (echo, panic,
// exit mid-call, spawn a child and wait), and the handler-less tool
// "testTool".
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/opair-dev/opair/sdk"
)

type args struct {
	Mode string `json:"mode"`
	Text string `json:"text"`
}

func invoke(ctx context.Context, call *sdk.Call, p sdk.Progress) (*sdk.Result, error) {
	var a args
	if err := call.Decode(&a); err != nil {
		return nil, err
	}
	switch a.Mode {
	case "echo":
		return &sdk.Result{Content: []sdk.Content{{Text: a.Text}}, Summary: "echoed", Details: map[string]string{"tool": call.Tool}}, nil
	case "error":
		return sdk.Errorf("expected failure: %s", a.Text), nil
	case "fail":
		return nil, fmt.Errorf("handler failed: %s", a.Text)
	case "panic":
		panic("test panic: " + a.Text)
	case "exit":
		sdk.Logger().Error("about to exit mid-call", "text", a.Text)
		fmt.Fprintln(os.Stderr, "last words of the test plugin")
		_ = p.Status("exiting")
		time.Sleep(50 * time.Millisecond)
		os.Exit(3)
	case "spawn":
		// A child in its own process group, as an exec handler makes, and
		// a grandchild that starts its own session.
		cmd := exec.Command("/bin/sh", "-c", "setsid sleep 300 & echo $! ; exec sleep 300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Env = os.Environ() // carries the instance marker
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		buf := make([]byte, 64)
		n, _ := out.Read(buf)
		grandchild := strings.TrimSpace(string(buf[:n]))
		sdk.Logger().Info("spawned", "child", cmd.Process.Pid, "grandchild", grandchild)
		_ = p.Status(fmt.Sprintf("plugin=%d child=%d grandchild=%s", os.Getpid(), cmd.Process.Pid, grandchild))
		<-ctx.Done()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, ctx.Err()
	case "progress":
		for i := 0; i < 3; i++ {
			if err := p.Output([]byte(fmt.Sprintf("line %d\n", i))); err != nil {
				return nil, err
			}
		}
		return sdk.Text("done"), nil
	case "ask":
		if call.Host == nil {
			return sdk.Errorf("no host callbacks"), nil
		}
		answer, declined, err := call.Host.AskHuman(ctx, a.Text, []string{"yes", "no"}, false)
		if err != nil {
			return nil, err
		}
		return sdk.Text(fmt.Sprintf("answer=%s declined=%v", answer, declined)), nil
	}
	return sdk.Errorf("unknown mode %q", a.Mode), nil
}

func validate(_ context.Context, v *sdk.Validation) []sdk.Diagnostic {
	var cfg struct {
		Bad bool `json:"bad"`
	}
	if err := v.Config(&cfg); err != nil {
		return []sdk.Diagnostic{{Summary: err.Error(), Pointer: "/config"}}
	}
	if cfg.Bad {
		return []sdk.Diagnostic{{Summary: "config.bad must be false", Pointer: "/config/bad"}}
	}
	return nil
}

func main() {
	sdk.Serve(sdk.Plugin{
		Version:   "0.0.1-test",
		NeedsHost: true,
		Types:     map[string]sdk.Type{"test": {Description: "test behaviours", Handler: sdk.HandlerFunc(invoke), Validate: validate}},
		Tools:     map[string]sdk.Tool{"testTool": {Description: "a handler-less test tool", Handler: sdk.HandlerFunc(invoke)}},
	})
}
