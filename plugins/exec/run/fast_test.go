package run

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFastPathTaken checks that a call that starts nothing but its child
// skips the scans of /proc. That needs nothing else on the machine to start
// a process or thread during the call, so it tries up to 500 calls.
func TestFastPathTaken(t *testing.T) {
	if !fastPathOK() {
		t.Skip("no fast path here (not a subreaper, or no /proc/<pid>/task/<tid>/children)")
	}
	truePath := lookPath(t, "true")
	counts := func() (int, int) {
		fastCount.Lock()
		defer fastCount.Unlock()
		return fastCount.cleanups, fastCount.sweeps
	}
	cleanups, sweeps := counts()
	for i := range 500 {
		res := mustRun(t, context.Background(), Spec{Path: truePath})
		if res.ExitCode != 0 {
			t.Fatalf("true: %+v", res)
		}
		if c, s := counts(); c > cleanups && s > sweeps {
			t.Logf("fast cleanup and sweep after %d calls", i+1)
			return
		}
	}
	c, s := counts()
	t.Fatalf("500 calls of true: %d fast cleanups, %d fast sweeps; want some of each", c-cleanups, s-sweeps)
}

// TestQuietSeesOrphans checks both proofs of the fast path on a call whose
// child left an orphan behind: the last pid handed out is no longer the
// child's, and even if it were (as after a privileged clone3 with set_tid),
// the orphan is among this process's children.
func TestQuietSeesOrphans(t *testing.T) {
	if !fastPathOK() {
		t.Skip("no fast path here")
	}
	dir := t.TempDir()
	cmd := exec.Command("/bin/sh", "-c", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$1/orphan.pid"`, "sh", dir)
	cmd.Env = testEnv
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := waitExit(pid); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	b, err := os.ReadFile(filepath.Join(dir, "orphan.pid"))
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = unix.Kill(orphan, unix.SIGKILL)
		reap(orphan)
	}()
	// The orphan reparents to this process (a subreaper) once sh is gone.
	for i := 0; ; i++ {
		if p, ok := readProc(orphan); ok && p.ppid == os.Getpid() {
			break
		}
		if i == 200 {
			t.Fatalf("orphan %d never reparented to the test process", orphan)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := newCall(pid, "0123456789abcdef0123456789abcdef")
	if c.quiet() {
		t.Fatal("quiet with an orphan of the call alive (and pids handed out since the child)")
	}
	if c.alone(pid) {
		t.Fatal("alone, with the last pid the child's, while an orphan of the call is a child of this process")
	}
	if err := unix.Kill(orphan, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; !reapedZombie(orphan); i++ {
		if i == 200 {
			t.Fatalf("orphan %d not reaped", orphan)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !c.alone(pid) {
		t.Fatal("not alone with nothing left of the call but its zombie")
	}
}

// reapedZombie reaps pid if it is a zombie, and reports whether it is gone.
func reapedZombie(pid int) bool {
	var ws unix.WaitStatus
	got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	return got == pid || err != nil
}
