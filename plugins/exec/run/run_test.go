package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var testEnv = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C"}

// script writes an executable /bin/sh script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed", name)
	}
	return path
}

func mustRun(t *testing.T, ctx context.Context, s Spec) Result {
	t.Helper()
	if s.Dir == "" {
		s.Dir = t.TempDir()
	}
	if s.Env == nil {
		s.Env = testEnv
	}
	res, err := Run(ctx, s)
	if err != nil {
		t.Fatalf("Run(%s %q): %v (result %+v)", s.Path, s.Args, err, res)
	}
	return res
}

func TestExitCodeAndInterleaving(t *testing.T) {
	sh := script(t, "echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 3\n")
	res := mustRun(t, context.Background(), Spec{Path: sh})
	if res.ExitCode != 3 || res.Signal != "" || res.TimedOut || res.Canceled {
		t.Fatalf("result %+v, want exit 3", res)
	}
	if got, want := string(res.Output), "out1\nerr1\nout2\nerr2\n"; got != want {
		t.Fatalf("output %q, want %q (one pipe, in order)", got, want)
	}
	if res.TotalBytes != int64(len(res.Output)) || res.Elided != 0 {
		t.Fatalf("TotalBytes %d, Elided %d", res.TotalBytes, res.Elided)
	}
}

func TestSignalResult(t *testing.T) {
	sh := script(t, "echo before; kill -TERM $$; sleep 5\n")
	res := mustRun(t, context.Background(), Spec{Path: sh})
	if res.ExitCode != -1 || res.Signal != "terminated" || res.TimedOut || res.Canceled {
		t.Fatalf("result %+v, want killed by SIGTERM", res)
	}
}

func TestArgsAndDir(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, `printf '%s|' "$0" "$@"; pwd`+"\n")
	res := mustRun(t, context.Background(), Spec{Path: sh, Args: []string{"a b", "-c", "$HOME;x"}, Dir: dir})
	if got, want := string(res.Output), sh+"|a b|-c|$HOME;x|"+dir+"\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestOnOutputStreams(t *testing.T) {
	sh := script(t, "echo first; sleep 0.3; echo second\n")
	type chunk struct {
		at   time.Time
		data string
	}
	var mu sync.Mutex
	var chunks []chunk
	res := mustRun(t, context.Background(), Spec{Path: sh, OnOutput: func(p []byte) {
		mu.Lock()
		chunks = append(chunks, chunk{time.Now(), string(p)})
		mu.Unlock()
	}})
	returned := time.Now()
	mu.Lock()
	defer mu.Unlock()
	if len(chunks) < 2 {
		t.Fatalf("chunks %+v: want the two lines separately", chunks)
	}
	if chunks[0].data != "first\n" {
		t.Fatalf("first chunk %q", chunks[0].data)
	}
	if early := returned.Sub(chunks[0].at); early < 200*time.Millisecond {
		t.Fatalf("first chunk arrived only %v before Run returned: not streamed", early)
	}
	var all strings.Builder
	for _, c := range chunks {
		all.WriteString(c.data)
	}
	if all.String() != "first\nsecond\n" || string(res.Output) != "first\nsecond\n" {
		t.Fatalf("streamed %q, result %q", all.String(), res.Output)
	}
}

func TestStdinIsDevNull(t *testing.T) {
	start := time.Now()
	res := mustRun(t, context.Background(), Spec{Path: lookPath(t, "cat"), Timeout: 5 * time.Second})
	if res.ExitCode != 0 || len(res.Output) != 0 || res.TimedOut {
		t.Fatalf("cat: %+v", res)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cat took %v: stdin is not /dev/null", d)
	}
	sh := script(t, "readlink /proc/self/fd/0; readlink /proc/$$/fd/0\n")
	res = mustRun(t, context.Background(), Spec{Path: sh})
	if got := string(res.Output); got != "/dev/null\n/dev/null\n" {
		t.Fatalf("stdin of the child: %q", got)
	}
	// No controlling terminal either: the child is in a session of its own.
	sh = script(t, "if ( : < /dev/tty ) 2>/dev/null; then echo tty; else echo none; fi\n")
	if got := string(mustRun(t, context.Background(), Spec{Path: sh}).Output); got != "none\n" {
		t.Fatalf("child could open /dev/tty: %q", got)
	}
}

var markerRe = regexp.MustCompile(`^OPAIR_CALL_ID=[0-9a-f]{32}$`)

func TestEnvIsExactlySpecEnv(t *testing.T) {
	envBin := lookPath(t, "env")
	cases := []struct {
		env  []string
		want []string
	}{
		{[]string{"A=1", "B=two words", "EMPTY="}, []string{"A=1", "B=two words", "EMPTY="}},
		{[]string{}, nil},
		{[]string{"OPAIR_CALL_ID=spoofed", "C=3"}, []string{"C=3"}},
	}
	for _, c := range cases {
		res := mustRun(t, context.Background(), Spec{Path: envBin, Env: c.env})
		lines := strings.Split(strings.TrimSuffix(string(res.Output), "\n"), "\n")
		if len(lines) == 0 || !markerRe.MatchString(lines[len(lines)-1]) {
			t.Fatalf("env %q: no marker last in %q", c.env, lines)
		}
		if got := lines[:len(lines)-1]; !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Fatalf("env %q: child saw %q, want %q", c.env, got, c.want)
		}
	}
	// nil means empty, never the plugin's own environment.
	t.Setenv("RUN_TEST_SECRET_TOKEN", "x")
	res, err := Run(context.Background(), Spec{Path: envBin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(res.Output)), "\n"); len(lines) != 1 || !markerRe.MatchString(lines[0]) {
		t.Fatalf("nil Env: child saw %q", lines)
	}
}

func TestOutputCap(t *testing.T) {
	const total = 1 << 20
	sh := script(t, "yes 0123456789abcdef | head -c 1048576\n")
	res := mustRun(t, context.Background(), Spec{Path: sh, OutputCap: 1024})
	full := bytes.Repeat([]byte("0123456789abcdef\n"), total/17+1)[:total]
	want := string(full[:512]) + fmt.Sprintf("\n… [%d bytes elided] …\n", total-1024) + string(full[total-512:])
	if string(res.Output) != want {
		t.Fatalf("output:\n%q\nwant\n%q", res.Output, want)
	}
	if res.TotalBytes != total || res.Elided != total-1024 || res.ExitCode != 0 {
		t.Fatalf("TotalBytes %d, Elided %d, exit %d", res.TotalBytes, res.Elided, res.ExitCode)
	}
	// The default cap, with output under it: whole.
	res = mustRun(t, context.Background(), Spec{Path: script(t, "yes x | head -c 60000\n")})
	if len(res.Output) != 60000 || res.Elided != 0 {
		t.Fatalf("60000 bytes under the default cap: got %d, elided %d", len(res.Output), res.Elided)
	}
}

// escapeScript starts, besides a foreground sleep: a plain background
// sleeper, one in a session of its own, one in its own session with a clean
// environment (no marker), and one in its own session whose parent exits
// at once (an orphan at once). It records their pids and the call marker in
// $1, and "ready" when all are running.
const escapeScript = `d=$1
echo "$OPAIR_CALL_ID" > "$d/marker"
echo $$ > "$d/main.pid"
sleep 300 & echo $! > "$d/bg.pid"
setsid sh -c 'echo $$ > "$1/setsid.pid"; exec sleep 300' sh "$d" &
setsid env -i /bin/sh -c 'echo $$ > "$1/clean.pid"; exec sleep 300' sh "$d" &
setsid sh -c 'sleep 300 & echo $! > "$1/orphan.pid"' sh "$d"
setsid sh -c 'env -i sleep 300 & echo $! > "$1/cleanorphan.pid"' sh "$d"
for f in bg setsid clean orphan cleanorphan; do
	while [ ! -s "$d/$f.pid" ]; do sleep 0.01; done
done
echo ready > "$d/ready"
`

// recorded returns the pids the script wrote into dir, and the call marker.
func recorded(t *testing.T, dir string) (map[string]int, string) {
	t.Helper()
	pids := map[string]int{}
	for _, name := range []string{"main", "bg", "setsid", "clean", "orphan", "cleanorphan"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s.pid: %q", name, b)
		}
		pids[name] = pid
	}
	marker, _ := os.ReadFile(filepath.Join(dir, "marker"))
	return pids, strings.TrimSpace(string(marker))
}

// assertNoneLeft checks that none of the pids exists any more (not even as
// a zombie) and that no process carries the marker.
func assertNoneLeft(t *testing.T, pids map[string]int, marker string) {
	t.Helper()
	if len(marker) != 32 {
		t.Fatalf("marker %q not recorded", marker)
	}
	for name, pid := range pids {
		if p, ok := readProc(pid); ok {
			t.Errorf("%s (pid %d) still exists: state %c, ppid %d", name, pid, p.state, p.ppid)
		}
	}
	procs, err := scan(0)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte(MarkerVar + "=" + marker)
	for _, p := range procs {
		if hasMarker(p.pid, want) {
			t.Errorf("pid %d still carries the call's marker", p.pid)
		}
	}
}

func TestTimeoutKillsEveryProcess(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, escapeScript+"sleep 300\n")
	start := time.Now()
	res := mustRun(t, context.Background(), Spec{Path: sh, Args: []string{dir}, Timeout: 500 * time.Millisecond})
	took := time.Since(start)
	if !res.TimedOut || res.Canceled || res.ExitCode != -1 || res.Signal != "killed" {
		t.Fatalf("result %+v, want timed out and killed", res)
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("Run took %v after a 500ms timeout", took)
	}
	if _, err := os.Stat(filepath.Join(dir, "ready")); err != nil {
		t.Fatalf("the script did not get to start all its processes: %v", err)
	}
	pids, marker := recorded(t, dir)
	if len(pids) != 6 {
		t.Fatalf("recorded pids %v", pids)
	}
	assertNoneLeft(t, pids, marker)
}

func TestCancelKillsEveryProcess(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, escapeScript+"sleep 300\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	canceled := make(chan time.Time, 1)
	go func() {
		// Cancel once the script is ready (or after 2 s at most).
		for i := 0; i < 200; i++ {
			if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		canceled <- time.Now()
		cancel()
	}()
	res := mustRun(t, ctx, Spec{Path: sh, Args: []string{dir}})
	if d := time.Since(<-canceled); d > time.Second {
		t.Fatalf("Run returned %v after the cancellation", d)
	}
	if !res.Canceled || res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("result %+v, want canceled", res)
	}
	pids, marker := recorded(t, dir)
	if len(pids) != 6 {
		t.Fatalf("recorded pids %v", pids)
	}
	assertNoneLeft(t, pids, marker)
}

func TestCancelReturnsPromptly(t *testing.T) {
	// A child that ignores SIGTERM and a grandchild that holds the pipe.
	sh := script(t, "trap '' TERM; (trap '' TERM; sleep 300) & sleep 300\n")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := mustRun(t, ctx, Spec{Path: sh})
	if d := time.Since(start); d > 1300*time.Millisecond {
		t.Fatalf("Run took %v after a 300ms cancellation", d)
	}
	if !res.Canceled {
		t.Fatalf("result %+v", res)
	}
}

func TestNormalExitKillsLeftovers(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, escapeScript+"echo done; exit 0\n")
	start := time.Now()
	res := mustRun(t, context.Background(), Spec{Path: sh, Args: []string{dir}})
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Run took %v: it waited for the leftovers", d)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Canceled || string(res.Output) != "done\n" {
		t.Fatalf("result %+v (output %q)", res, res.Output)
	}
	pids, marker := recorded(t, dir)
	if len(pids) != 6 {
		t.Fatalf("recorded pids %v", pids)
	}
	assertNoneLeft(t, pids, marker)
}

func TestDaemonAfterExit(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, `echo "$OPAIR_CALL_ID" > "$1/marker"; setsid sleep 300 > /dev/null 2>&1 & echo $! > "$1/bg.pid"; exit 0`+"\n")
	res := mustRun(t, context.Background(), Spec{Path: sh, Args: []string{dir}})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	pids, marker := recorded(t, dir)
	if len(pids) != 1 {
		t.Fatalf("recorded pids %v", pids)
	}
	assertNoneLeft(t, pids, marker)
}

func TestConcurrentRuns(t *testing.T) {
	const n = 20
	sh := script(t, `echo "out-$1"; echo "err-$1" >&2
(setsid sleep 300 &)
sleep 0.$(( $1 % 4 ))
echo "end-$1"
if [ $(( $1 % 5 )) -eq 4 ]; then sleep 300; fi
exit $1
`)
	var wg sync.WaitGroup
	results := make([]Result, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := Spec{Path: sh, Args: []string{strconv.Itoa(i)}, Dir: t.TempDir(), Env: testEnv}
			if i%5 == 4 {
				s.Timeout = 800 * time.Millisecond
			}
			results[i], errs[i] = Run(context.Background(), s)
		}()
	}
	wg.Wait()
	for i := range n {
		res := results[i]
		if errs[i] != nil {
			t.Errorf("run %d: %v", i, errs[i])
			continue
		}
		want := fmt.Sprintf("out-%d\nerr-%d\nend-%d\n", i, i, i)
		if string(res.Output) != want {
			t.Errorf("run %d: output %q, want %q", i, res.Output, want)
		}
		if i%5 == 4 {
			if !res.TimedOut || res.ExitCode != -1 {
				t.Errorf("run %d: %+v, want timed out", i, res)
			}
		} else if res.ExitCode != i || res.TimedOut {
			t.Errorf("run %d: %+v, want exit %d", i, res, i)
		}
	}
	// Every setsid sleeper of every call is gone, and no zombie is left.
	procs, err := scan(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.ppid == os.Getpid() {
			t.Errorf("pid %d (state %c) is still a child of the test process", p.pid, p.state)
		}
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Run(context.Background(), Spec{Path: "sh", Dir: dir}); err == nil {
		t.Error("relative Path accepted")
	}
	if _, err := Run(context.Background(), Spec{Path: "/bin/sh", Dir: "relative"}); err == nil {
		t.Error("relative Dir accepted")
	}
	if _, err := Run(context.Background(), Spec{Path: filepath.Join(dir, "missing"), Dir: dir}); err == nil {
		t.Error("missing binary: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, Spec{Path: "/bin/sh", Dir: dir})
	if err == nil || !res.Canceled {
		t.Errorf("canceled context: %+v, %v", res, err)
	}
}

// TestParentDeathKillsChild kills a process that is running a call (as the
// host would kill a hung plugin) and checks that the call's child dies with
// it (Pdeathsig).
func TestParentDeathKillsChild(t *testing.T) {
	if dir := os.Getenv("RUN_TEST_HELPER_DIR"); dir != "" {
		sh := script(t, `echo $$ > "$1/child.pid"; exec sleep 300`+"\n")
		_, _ = Run(context.Background(), Spec{Path: sh, Args: []string{dir}, Dir: dir, Env: testEnv})
		os.Exit(3) // not reached: the test kills this process
	}
	if err := Init(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestParentDeathKillsChild$")
	helper.Env = append(os.Environ(), "RUN_TEST_HELPER_DIR="+dir)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for i := 0; i < 500 && pid == 0; i++ {
		b, _ := os.ReadFile(filepath.Join(dir, "child.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 {
		_ = helper.Process.Kill()
		t.Fatal("the helper's child never started")
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	// The child dies; as an orphan it reparents to this process (a
	// subreaper), which reaps it.
	for i := 0; ; i++ {
		p, ok := readProc(pid)
		if !ok {
			break
		}
		if p.state == 'Z' && p.ppid == os.Getpid() {
			reap(pid)
			break
		}
		if i == 100 {
			t.Fatalf("child %d still alive (state %c) 1 s after its parent was killed", pid, p.state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
