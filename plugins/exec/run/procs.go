package run

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// trackEvery is how often a running call records its descendants, so that a
// process whose parent dies later is still known to belong to the call.
const trackEvery = 200 * time.Millisecond

// proc is one line of /proc/<pid>/stat, the fields that matter here.
type proc struct {
	pid, ppid, pgrp, sid int
	state                byte   // 'R', 'S', 'D', 'Z', …
	start                uint64 // start time in clock ticks since boot; with pid, it names a process uniquely
}

type procKey struct {
	pid   int
	start uint64
}

func (p proc) key() procKey { return procKey{p.pid, p.start} }

// readProc reads /proc/<pid>/stat.
func readProc(pid int) (proc, bool) {
	// A stat line is a few hundred bytes; at most (a 64-byte name, 49
	// fields of up to 20 digits) about 1100.
	var buf [2048]byte
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, b)
}

var errTooLong = errors.New("run: file longer than the buffer")

// readSmall reads the whole of a small file into buf with plain system
// calls (an *os.File costs a poller registration attempt, a stat and an
// allocation, which add up over a scan of /proc). It fails if the file does
// not fit.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			return nil, errTooLong
		}
		m, err := unix.Read(fd, buf[n:])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case m == 0:
			return buf[:n], nil
		}
		n += m
	}
}

func openRead(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// parseStat parses "pid (comm) state ppid pgrp session … starttime …". The
// command name may contain spaces and parentheses, so fields are counted
// from the last ')'.
func parseStat(pid int, b []byte) (proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	// The fields after the name, numbered from 0 (field 3 of stat, the
	// state): 0 state, 1 ppid, 2 pgrp, 3 session, 19 starttime.
	var f [20][]byte
	n := 0
	for rest := b[i+1:]; n < len(f); n++ {
		rest = bytes.TrimLeft(rest, " \n")
		if len(rest) == 0 {
			break
		}
		j := bytes.IndexAny(rest, " \n")
		if j < 0 {
			j = len(rest)
		}
		f[n], rest = rest[:j], rest[j:]
	}
	if n < len(f) || len(f[0]) != 1 {
		return proc{}, false
	}
	p := proc{pid: pid, state: f[0][0]}
	var ok1, ok2, ok3, ok4 bool
	p.ppid, ok1 = atoi(f[1])
	p.pgrp, ok2 = atoi(f[2])
	p.sid, ok3 = atoi(f[3])
	p.start, ok4 = atou(f[19])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return proc{}, false
	}
	return p, true
}

// atou parses a decimal number of up to 19 digits without allocating.
func atou(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// atoi parses a pid (a non-negative decimal number that fits 31 bits).
func atoi(b []byte) (int, bool) {
	n, ok := atou(b)
	if !ok || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// readDirNames lists the directory at path with plain system calls, using
// buf for the directory entries.
func readDirNames(path string, buf []byte) ([]string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var names []string
	for {
		n, err := unix.ReadDirent(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// scan lists the processes in /proc that started at or after since (older
// ones cannot belong to a call that started later).
func scan(since uint64) ([]proc, error) {
	names, err := readDirNames("/proc", make([]byte, 8192))
	if err != nil {
		return nil, err
	}
	procs := make([]proc, 0, len(names)/2)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if p, ok := readProc(pid); ok && p.start >= since {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// hasMarker reports whether the environment of pid holds the entry want
// ("OPAIR_CALL_ID=<hex>"). A process of another user, or a zombie, has no
// readable environment.
func hasMarker(pid int, want []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(env) > 0 {
		entry, rest, _ := bytes.Cut(env, []byte{0})
		if bytes.Equal(entry, want) {
			return true
		}
		env = rest
	}
	return false
}

// call is one running child and what is known of its descendants.
type call struct {
	pid    int    // the direct child: also its process group and session id
	start  uint64 // its start time; 0 if it was gone before it could be read
	marker []byte // "OPAIR_CALL_ID=<hex>"
	self   int    // this process

	mu    sync.Mutex
	known map[procKey]bool // processes seen to belong to the call
}

func newCall(pid int, marker string) *call {
	c := &call{pid: pid, marker: []byte(MarkerVar + "=" + marker), self: os.Getpid(), known: map[procKey]bool{}}
	// The child cannot have been reaped yet (Wait has not been called), so
	// its stat is readable, as a zombie at worst.
	if p, ok := readProc(pid); ok {
		c.start = p.start
		c.known[p.key()] = true
	}
	return c
}

// attribute returns the processes among procs that belong to the call, and
// records them as known. A process belongs to the call if it is known from
// an earlier scan, is in the call's session or process group, carries the
// marker (when withEnviron; reading every environment is the expensive
// part, so the periodic tracker skips it), or descends from one that does.
func (c *call) attribute(procs []proc, withEnviron bool) []proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	mine := map[int]bool{}
	children := map[int][]int{}
	for _, p := range procs {
		if p.pid == c.self || p.start < c.start {
			continue // older than the call: not of the call
		}
		children[p.ppid] = append(children[p.ppid], p.pid)
		switch {
		case c.known[p.key()]:
		case p.sid == c.pid || p.pgrp == c.pid:
		case withEnviron && p.state != 'Z' && hasMarker(p.pid, c.marker):
		default:
			continue
		}
		mine[p.pid] = true
	}
	// Descendants by the parent tree: a child of a process of the call
	// belongs to the call even if it left the session and dropped the marker.
	out := closure(procs, mine, children)
	for _, p := range out {
		c.known[p.key()] = true
	}
	return out
}

// tracker scans /proc every trackEvery while calls run, one scan for all of
// them, so that each call knows its descendants before their parents die.
var tracker struct {
	sync.Mutex
	calls   map[*call]bool
	running bool
}

// track registers the call with the tracker until the returned function is
// called.
func (c *call) track() (stop func()) {
	tracker.Lock()
	if tracker.calls == nil {
		tracker.calls = map[*call]bool{}
	}
	tracker.calls[c] = true
	if !tracker.running {
		tracker.running = true
		go trackLoop()
	}
	tracker.Unlock()
	return func() {
		tracker.Lock()
		delete(tracker.calls, c)
		tracker.Unlock()
	}
}

func trackLoop() {
	t := time.NewTicker(trackEvery)
	defer t.Stop()
	for range t.C {
		tracker.Lock()
		if len(tracker.calls) == 0 {
			tracker.running = false
			tracker.Unlock()
			return
		}
		calls := make([]*call, 0, len(tracker.calls))
		since := uint64(0)
		for c := range tracker.calls {
			if len(calls) == 0 || c.start < since {
				since = c.start
			}
			calls = append(calls, c)
		}
		tracker.Unlock()
		procs, err := scan(since)
		if err != nil {
			continue
		}
		for _, c := range calls {
			c.attribute(procs, false)
		}
	}
}

// cleanup kills every process of the call and reaps those that became this
// process's children, until none is left or bound has passed. The direct
// child is killed but not reaped here: its Wait does that.
func (c *call) cleanup(bound time.Duration) error {
	return killLoop(c.start, c.pid, bound, func(procs []proc) []proc {
		mine := c.attribute(procs, true) // before the group dies, while the parent tree is intact
		_ = unix.Kill(-c.pid, unix.SIGKILL)
		return mine
	})
}

// killLoop kills and reaps the processes pick selects from a fresh scan of
// the processes started at or after since, until pick selects none that is
// alive or reapable, or bound has passed. exclude is a direct child whose
// zombie belongs to its cmd.Wait.
func killLoop(since uint64, exclude int, bound time.Duration, pick func([]proc) []proc) error {
	deadline := time.Now().Add(bound)
	pause := time.Millisecond
	self := os.Getpid()
	for {
		procs, err := scan(since)
		if err != nil {
			return fmt.Errorf("run: scan /proc: %w", err)
		}
		mine := pick(procs)
		alive := map[int]bool{}
		for _, p := range mine {
			if p.state != 'Z' {
				alive[p.pid] = true
			}
		}
		var pending []int
		for _, p := range mine {
			switch {
			case p.state != 'Z':
				kill(p)
				pending = append(pending, p.pid)
			case p.pid == exclude:
				// the direct child's zombie belongs to cmd.Wait
			case p.ppid == self:
				if !reap(p.pid) {
					pending = append(pending, p.pid)
				}
			case alive[p.ppid]:
				// its parent is being killed; it will reparent here
				pending = append(pending, p.pid)
			}
			// Otherwise a zombie whose parent is outside the call (init,
			// when Init failed): not ours to reap.
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			slices.Sort(pending)
			return fmt.Errorf("run: processes still alive after SIGKILL for %v: %v", bound, pending)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// inFlight counts the calls between their start and the end of their
// cleanup, for the orphan sweep, and holds the direct children of calls that
// are not reaped yet.
var inFlight struct {
	sync.Mutex
	n        int
	since    uint64 // the earliest start time of a child in the current busy period
	sinceSet bool
	children map[int]bool // direct children of calls, from their start until cmd.Wait reaps them
}

// enter registers a call before its child starts. While the last call of a
// busy period sweeps (leave), enter waits, so no new call's processes exist
// during the sweep.
func enter() {
	inFlight.Lock()
	inFlight.n++
	inFlight.Unlock()
}

// started records a call's child: its start time, and its pid until reaped.
func started(start uint64, pid int) {
	inFlight.Lock()
	if !inFlight.sinceSet || start < inFlight.since {
		inFlight.since, inFlight.sinceSet = start, true
	}
	if inFlight.children == nil {
		inFlight.children = map[int]bool{}
	}
	inFlight.children[pid] = true
	inFlight.Unlock()
}

// reaped records that a call's child has been reaped (its cmd.Wait returned).
func reaped(pid int) {
	inFlight.Lock()
	delete(inFlight.children, pid)
	inFlight.Unlock()
}

// isCallChild reports whether pid is the direct child of a call, not reaped.
func isCallChild(pid int) bool {
	inFlight.Lock()
	defer inFlight.Unlock()
	return inFlight.children[pid]
}

// leave unregisters a call. The last call of a busy period also sweeps:
// with no call in flight, a child of this process in a session of its own
// that started during the busy period can only be an orphan of a call that
// escaped every other test (it left the session, dropped the marker and
// lost its parent before a scan saw it), so it and its descendants are
// killed and reaped. exclude is the call's direct child, if cmd.Wait has
// not reaped it.
func leave(exclude int) error {
	inFlight.Lock()
	defer inFlight.Unlock()
	inFlight.n--
	if inFlight.n > 0 || !inFlight.sinceSet {
		return nil
	}
	since := inFlight.since
	inFlight.sinceSet = false
	self := os.Getpid()
	ownSid, err := unix.Getsid(0)
	if err != nil {
		return fmt.Errorf("run: getsid: %w", err)
	}
	sweeps := func(p proc) bool {
		return p.start >= since && p.ppid == self && p.sid != ownSid && p.pid != exclude
	}
	// The sweep only ever starts from a child of this process, so when the
	// list of this process's children holds none it would start from, it
	// has nothing to do, and the scan of /proc is skipped. The list is only
	// exact while no child of this process is reaped during the reading (a
	// reap can make the kernel skip the next entry), so it is trusted only
	// when no call's child is left to reap: then, with no call in flight
	// and new calls held off by the lock, nothing in this package reaps.
	if exclude == 0 && len(inFlight.children) == 0 && fastPathOK() {
		if kids, ok := ownChildren(); ok && !slices.ContainsFunc(kids, func(pid int) bool {
			p, ok := readProc(pid)
			return !ok || sweeps(p) // a child that cannot be read: scan
		}) {
			noteFast(&fastCount.sweeps)
			return nil
		}
	}
	return killLoop(since, exclude, killBound, func(procs []proc) []proc {
		mine := map[int]bool{}
		children := map[int][]int{}
		for _, p := range procs {
			children[p.ppid] = append(children[p.ppid], p.pid)
			if sweeps(p) {
				mine[p.pid] = true
			}
		}
		return closure(procs, mine, children)
	})
}

// closure adds to mine the descendants of its members (by the parent tree)
// and returns the selected processes.
func closure(procs []proc, mine map[int]bool, children map[int][]int) []proc {
	queue := make([]int, 0, len(mine))
	for pid := range mine {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, child := range children[pid] {
			if !mine[child] {
				mine[child] = true
				queue = append(queue, child)
			}
		}
	}
	out := make([]proc, 0, len(mine))
	for _, p := range procs {
		if mine[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

// kill sends SIGKILL to p, through a pidfd when the kernel has them, after
// checking that the pid still names the same process (start time), so a
// recycled pid is never hit.
func kill(p proc) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return
		}
		_ = unix.Kill(p.pid, unix.SIGKILL) // no pidfds (Linux < 5.3)
		return
	}
	defer unix.Close(fd)
	if q, ok := readProc(p.pid); !ok || q.start != p.start {
		return
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// reap collects the zombie pid, a child of this process. It only ever waits
// for a pid that the scan attributed to the call, so it cannot take the exit
// status another caller is waiting for.
func reap(pid int) bool {
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		// ECHILD: not (or no longer) our child, nothing left to reap.
		return got == pid || errors.Is(err, unix.ECHILD)
	}
}

// The fast path. A full scan of /proc after every call costs a read of
// every process's stat file, and that was most of the runner's overhead on
// a short command. When a call's child has exited and is held unreaped (a
// zombie), quiet can often prove without a scan that no other process of
// the call exists, so that the cleanup scan would find nothing to kill
// (only the zombie, which it leaves to cmd.Wait):
//
//   - Every process the cleanup attributes to a call was created after the
//     call's child: its descendants, the members of its session and
//     process group (only descendants of the child can join them), the
//     processes carrying its marker (only the call's processes know the
//     value, and a process created earlier does not have it in its initial
//     environment) and those the tracker recorded.
//   - The kernel hands out pids in a cycle, and the last field of
//     /proc/loadavg is the last pid handed out in the reader's PID
//     namespace (a process created in a namespace nested in it takes a pid
//     here too). While the zombie holds the child's pid, no new process can
//     be given that pid, so if the last pid handed out is still the
//     child's, no process or thread has been created since the child, by
//     the call or by anyone else (a daemon handed the marker, say), and
//     the call's processes are all dead.
//   - Only a privileged process can get around the cycle: clone3 with
//     set_tid, or a write to ns_last_pid (both for checkpoint/restore). A
//     process of the call created that way is still a descendant of the
//     child, and as this process is a child subreaper, every living
//     descendant of the child hangs below a child of this process that
//     belongs to the call (the child's own children were handed to this
//     process when it died). So quiet also reads this process's list of
//     children, and requires it to hold nothing but the calls' own children
//     and children in this process's own session, which no process of a
//     call can join. (That list can miss an entry if another call reaps its
//     child during the reading; that only matters together with the above.)
//
// Whatever quiet cannot prove goes to the full scan: another process was
// created meanwhile (a call running concurrently, a new runtime thread, any
// process on the machine), /proc/loadavg is not the kernel's (lxcfs
// replaces it), or this process is not a subreaper.

var fast struct {
	once sync.Once
	ok   bool
}

// fastPathOK reports whether the fast path can be used: this process is a
// child subreaper, /proc is a procfs of this PID namespace, and its loadavg
// and the children lists of /proc/<pid>/task/<tid>/children
// (CONFIG_PROC_CHILDREN) can be read.
func fastPathOK() bool {
	fast.once.Do(func() {
		if Init() != nil {
			return
		}
		var st unix.Statfs_t
		if err := unix.Statfs("/proc", &st); err != nil || st.Type != unix.PROC_SUPER_MAGIC {
			return
		}
		if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
			return
		}
		if _, ok := lastPid(); !ok {
			return
		}
		if _, ok := ownChildren(); !ok {
			return
		}
		fast.ok = true
	})
	return fast.ok
}

// fastCount counts the cleanups and sweeps that the fast path proved
// empty, for tests and benchmarks.
var fastCount struct {
	sync.Mutex
	cleanups, sweeps int
}

func noteFast(n *int) {
	fastCount.Lock()
	*n++
	fastCount.Unlock()
}

// lastPid returns the last pid handed out in this PID namespace, the last
// field of /proc/loadavg, provided that the file is the kernel's own.
func lastPid() (int, bool) {
	fd, err := openRead("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil || st.Type != unix.PROC_SUPER_MAGIC {
		return 0, false // lxcfs, say, whose last field need not be the kernel's
	}
	var buf [256]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil || n <= 0 || n == len(buf) || buf[n-1] != '\n' {
		return 0, false // a line of /proc/loadavg comes whole in one read
	}
	b := buf[:n-1]
	return atoi(b[bytes.LastIndexByte(b, ' ')+1:])
}

// ownChildren lists the children of this process, from the children list
// of each of its threads (a child's parent is the thread that started it;
// an orphan is adopted by an alive thread). The kernel builds each list
// under a lock, one entry at a time: an entry can be skipped when a child
// is reaped during the reading.
func ownChildren() ([]int, bool) {
	buf := make([]byte, 4096)
	tids, err := readDirNames("/proc/self/task", buf)
	if err != nil || len(tids) == 0 {
		return nil, false
	}
	var kids []int
	for _, tid := range tids {
		path := "/proc/self/task/" + tid + "/children"
		var b []byte
		for {
			b, err = readSmall(path, buf)
			if !errors.Is(err, errTooLong) || len(buf) >= 1<<22 {
				break
			}
			buf = make([]byte, 4*len(buf)) // thousands of children: again, with a larger buffer
		}
		if err != nil {
			// A thread that ended between the listing and the read has
			// handed its children to another, maybe one already read.
			return nil, false
		}
		for _, f := range bytes.Fields(b) {
			pid, ok := atoi(f)
			if !ok {
				return nil, false
			}
			kids = append(kids, pid)
		}
	}
	return kids, true
}

// quiet reports whether the call is provably over: its direct child has
// exited and is held unreaped by the caller, and no other process of the
// call exists (see the fast path above). Only then may the call skip its
// cleanup scan.
func (c *call) quiet() bool {
	if !fastPathOK() {
		return false
	}
	last, ok := lastPid()
	if !ok || !c.alone(last) {
		return false
	}
	noteFast(&fastCount.cleanups)
	return true
}

// alone reports whether, with last the last pid handed out, the call's
// exited child is all that is left of the call.
func (c *call) alone(last int) bool {
	if last != c.pid {
		return false
	}
	kids, ok := ownChildren()
	if !ok {
		return false
	}
	ownSid, err := unix.Getsid(0)
	if err != nil {
		return false
	}
	for _, pid := range kids {
		if pid == c.pid || isCallChild(pid) {
			continue
		}
		if p, ok := readProc(pid); !ok || p.sid != ownSid {
			return false
		}
	}
	return true
}
