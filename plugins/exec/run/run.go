// Package run runs one child process for the exec plugin: in its own session
// (so its own process group, and no controlling terminal), stdin /dev/null,
// stdout and stderr interleaved on one pipe, output streamed to a callback and
// capped for the result, and killed as a whole, descendants included, on
// cancellation or timeout.
//
// It must never leave a process behind. When a call ends, however it ends,
// every process of the call is killed and reaped: the process group and
// session, the descendants of the child (followed through the parent-process
// tree, which a scan of /proc records every 200 ms while the call runs, so a
// grandchild that called setsid is still found after its parent died), and
// every process whose environment carries the call's OPAIR_CALL_ID marker.
// The plugin process is a child subreaper (Init), so orphans reparent to it
// rather than to init, and their zombies are reaped here. When the last call
// in flight ends, any remaining child of the plugin in a session of its own
// (an orphan that left the session, dropped the marker and lost its parent
// before a scan saw it) is killed too. What can still outlive a call: such an
// escaped process while other calls are in flight (it dies when the last of
// them ends), a process that changed its user id, and, if Init failed,
// escaped orphans adopted by init. Only a PID namespace or a cgroup closes
// those gaps. A consequence of the sweep: the plugin must not start
// children of its own in a new session outside Run, or they count as escaped.
//
// The scans are skipped when they provably have nothing to find: Run holds
// the child's zombie unreaped until the cleanup is done, and when no
// process at all has been created since the child (the last pid the kernel
// handed out is still the child's) and the plugin has no child that could
// belong to a call, nothing of the call is left (see quiet in procs.go).
// That is the common case of a short command that starts nothing, and it
// spares two reads of every process's stat file per call.
//
// The package decides nothing: the caller has resolved the binary, checked
// the arguments and built the environment.
package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultOutputCap is the number of output bytes a Result keeps when
// Spec.OutputCap is zero.
const DefaultOutputCap = 64 << 10

// MarkerVar is the variable that Run appends to every child's environment,
// with a random value per call, to find the call's processes later.
const MarkerVar = "OPAIR_CALL_ID"

const (
	// killBound bounds the kill-and-reap loop after a call ends.
	killBound = 2 * time.Second
	// drainGrace is how long Run waits for the output pipe to reach EOF
	// once every process of the call is dead; a process that escaped the
	// scan and holds the pipe open is cut off after it.
	drainGrace = 300 * time.Millisecond
	// readChunk is the size of one read from the output pipe, and so the
	// largest chunk OnOutput receives.
	readChunk = 32 << 10
)

// Spec says what to run.
type Spec struct {
	Path      string        // absolute path of the binary (already resolved by the caller)
	Args      []string      // argv after argv[0] (argv[0] is Path)
	Dir       string        // working directory (the project root); must be absolute
	Env       []string      // the complete environment (the caller builds it); nil means empty, never inherited
	Timeout   time.Duration // 0 = none
	OutputCap int           // bytes of output kept for the result (head and tail halves); 0 = DefaultOutputCap

	// OnOutput is called with output chunks as they arrive (stdout and
	// stderr interleaved, one pipe), for progress. It is called from one
	// goroutine, in order; p is only valid during the call. A slow OnOutput
	// slows the child down (the pipe fills), it loses nothing. May be nil.
	OnOutput func(p []byte)
}

// Result is what happened.
type Result struct {
	ExitCode int    // the exit status; -1 when the child was killed by a signal
	Signal   string // the signal that killed the child, e.g. "killed"; "" if it exited
	TimedOut bool   // Spec.Timeout elapsed and Run killed the call
	Canceled bool   // the context ended and Run killed the call

	// Output is stdout and stderr interleaved. When it is longer than the
	// cap, the middle is cut: head + "\n… [N bytes elided] …\n" + tail (the
	// cut points are moved off split UTF-8 sequences, and N counts exactly
	// the bytes left out). Whole when it fits.
	Output     []byte
	TotalBytes int64 // bytes the call wrote in all
	Elided     int64 // bytes left out of Output
	Duration   time.Duration
}

var (
	initOnce sync.Once
	errInit  error
)

// Init makes the calling process a child subreaper
// (prctl PR_SET_CHILD_SUBREAPER), so that a process whose parent dies while
// a call runs (a daemon that double-forked, a grandchild of a killed child)
// reparents to this process, where Run finds and reaps it, instead of to
// init. The exec plugin's main calls it once at start-up; Run calls it too.
// The setting is process-wide and permanent; it is not inherited by children.
//
// Pdeathsig: Run also asks the kernel to SIGKILL each direct child when the
// thread that started it dies. Go never retires a thread unless a goroutine
// exits while locked to it, and Run starts every child from a fresh, unlocked
// goroutine, so in practice the signal fires when the plugin process dies
// (crash, kill -9 from the host), which is the case it is meant for. It is
// deliberately not combined with runtime.LockOSThread: a locked goroutine
// that returned without unlocking would end its thread and kill the child
// early. Grandchildren do not inherit the setting: if the plugin process
// dies, a grandchild outlives it (each call is in a session of its own, so
// killing the plugin's process group does not reach it either). They still
// carry their call's OPAIR_CALL_ID marker.
func Init() error {
	initOnce.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			errInit = fmt.Errorf("run: cannot become a child subreaper: %w", err)
		}
	})
	return errInit
}

// Run starts s.Path and waits for it and for every process it started.
//
// The error is for a child that could not be started (bad Spec, missing
// binary, context already done) and for internal failures (a process of the
// call that would not die); a non-zero exit, a timeout or a cancellation is a
// Result. When the context ends, Run kills the call, waits for it and returns
// (with Canceled set) within about a second.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := check(s); err != nil {
		return Result{ExitCode: -1}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1, Canceled: true}, fmt.Errorf("run: %s not started: %w", s.Path, err)
	}
	// Best effort: without a subreaper, orphans go to init, where the
	// marker and session scans still find and kill them (but cannot reap).
	_ = Init()

	marker, err := newMarker()
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("run: open %s: %w", os.DevNull, err)
	}
	defer devnull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("run: output pipe: %w", err)
	}
	defer pr.Close()

	cmd := &exec.Cmd{
		Path:   s.Path,
		Args:   append([]string{s.Path}, s.Args...),
		Env:    childEnv(s.Env, marker),
		Dir:    s.Dir,
		Stdin:  devnull,
		Stdout: pw, // the same *os.File twice: the child gets one pipe on fds 1 and 2,
		Stderr: pw, // so output interleaves exactly as written, with no copying goroutine
		SysProcAttr: &syscall.SysProcAttr{
			// A new session is a new process group whose id is the
			// child's pid (what Setpgid gives), and also detaches the
			// child from the user's terminal: /dev/tty cannot be opened,
			// so nothing (ssh, gpg) can prompt on the terminal behind the
			// host's back. Setpgid cannot be combined with it (a session
			// leader may not change its group), and is not needed.
			Setsid:    true,
			Pdeathsig: syscall.SIGKILL, // see Init
		},
	}

	enter()
	startErr := make(chan error, 1)
	go func() { startErr <- cmd.Start() }() // a fresh, unlocked goroutine: see Init on Pdeathsig
	err = <-startErr
	pw.Close() // the children hold the write end now; EOF comes when the last of them is gone
	if err != nil {
		return Result{ExitCode: -1}, errors.Join(fmt.Errorf("run: start %s: %w", s.Path, err), leave(0))
	}
	startTime := time.Now()
	c := newCall(cmd.Process.Pid, marker)
	started(c.start, c.pid)

	outputCap := s.OutputCap
	if outputCap <= 0 {
		outputCap = DefaultOutputCap
	}
	out := newCapture(outputCap)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, readChunk)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				out.write(buf[:n])
				if s.OnOutput != nil {
					s.OnOutput(buf[:n])
				}
			}
			if err != nil {
				return
			}
		}
	}()

	// The child is waited for without being reaped: until cmd.Wait reaps
	// it, its zombie keeps its pid (and so its process group and session
	// ids) from being reused, which the cleanup, and quiet, rely on.
	exitDone := make(chan exitState, 1)
	go func() {
		if waitExit(c.pid) == nil {
			exitDone <- exitState{}
			return
		}
		// waitid cannot wait without reaping here: wait the ordinary way.
		exitDone <- exitState{reaped: true, err: cmd.Wait()}
	}()
	stopTracking := c.track()

	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}

	var res Result
	var exit exitState
	exited := false
	select {
	case exit = <-exitDone:
		exited = true
	case <-timeout:
		res.TimedOut = true
	case <-ctx.Done():
		res.Canceled = true
	}
	stopTracking()
	var errs []error
	// Kill whatever is left of the call: everything on timeout or
	// cancellation, the leftovers (a background daemon) after a normal exit,
	// unless quiet proves there are none.
	if !exited || exit.reaped || !c.quiet() {
		if err := c.cleanup(killBound); err != nil {
			errs = append(errs, err)
		}
	}
	if !exited {
		select {
		case exit = <-exitDone:
			exited = true
		case <-time.After(killBound):
			errs = append(errs, fmt.Errorf("run: %s (pid %d) did not exit after SIGKILL", s.Path, c.pid))
		}
	}
	waitErr := exit.err
	if exited {
		if !exit.reaped {
			waitErr = cmd.Wait() // the child is a zombie: this only reaps it
		}
		reaped(c.pid)
	} else {
		go func() { // reap it if it ever dies
			if !(<-exitDone).reaped {
				_ = cmd.Wait()
			}
			reaped(c.pid)
		}()
	}
	res.Duration = time.Since(startTime)

	// The last call in flight also kills what escaped every call's scans.
	exclude := 0
	if !exited {
		exclude = c.pid
	}
	if err := leave(exclude); err != nil {
		errs = append(errs, err)
	}

	// Every writer is dead, so EOF is immediate unless a process escaped the
	// scan and still holds the pipe: cut it off after a short grace.
	select {
	case <-readDone:
	case <-time.After(drainGrace):
		_ = pr.SetReadDeadline(time.Now())
		<-readDone
	}
	res.Output, res.Elided = out.result()
	res.TotalBytes = out.total

	res.ExitCode = -1
	if exited {
		if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) {
			errs = append(errs, fmt.Errorf("run: wait for %s: %w", s.Path, waitErr))
		}
		if st := cmd.ProcessState; st != nil {
			if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				res.Signal = ws.Signal().String()
			} else {
				res.ExitCode = st.ExitCode()
			}
		}
	}
	return res, errors.Join(errs...)
}

func check(s Spec) error {
	switch {
	case s.Path == "" || !filepath.IsAbs(s.Path):
		return fmt.Errorf("run: binary path %q is not absolute (the caller resolves binaries once, absolutely)", s.Path)
	case s.Dir == "" || !filepath.IsAbs(s.Dir):
		return fmt.Errorf("run: working directory %q is not absolute", s.Dir)
	}
	return nil
}

// childEnv is env without any inherited marker, plus this call's marker.
func childEnv(env []string, marker string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name == MarkerVar {
			continue
		}
		out = append(out, kv)
	}
	return append(out, MarkerVar+"="+marker)
}

func newMarker() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("run: call marker: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// exitState is how the child's exit was waited for: reaped, with cmd.Wait's
// error, or (normally) not reaped yet.
type exitState struct {
	reaped bool
	err    error
}

// waitExit blocks until the child pid has exited, without reaping it.
func waitExit(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				return fmt.Errorf("waitid: %w", err)
			}
			return nil
		}
	}
}
