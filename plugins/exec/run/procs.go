package run

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
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
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, b)
}

// parseStat parses "pid (comm) state ppid pgrp session … starttime …". The
// command name may contain spaces and parentheses, so fields are counted
// from the last ')'.
func parseStat(pid int, b []byte) (proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return proc{}, false
	}
	p := proc{pid: pid, state: f[0][0]}
	var err1, err2, err3, err4 error
	p.ppid, err1 = strconv.Atoi(f[1])
	p.pgrp, err2 = strconv.Atoi(f[2])
	p.sid, err3 = strconv.Atoi(f[3])
	p.start, err4 = strconv.ParseUint(f[19], 10, 64) // field 22 of stat; f[0] is field 3
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return proc{}, false
	}
	return p, true
}

// scan lists the processes in /proc that started at or after since (older
// ones cannot belong to a call that started later).
func scan(since uint64) ([]proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
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
// cleanup, for the orphan sweep.
var inFlight struct {
	sync.Mutex
	n        int
	since    uint64 // the earliest start time of a child in the current busy period
	sinceSet bool
}

// enter registers a call before its child starts. While the last call of a
// busy period sweeps (leave), enter waits, so no new call's processes exist
// during the sweep.
func enter() {
	inFlight.Lock()
	inFlight.n++
	inFlight.Unlock()
}

// started records a call's child start time.
func started(start uint64) {
	inFlight.Lock()
	if !inFlight.sinceSet || start < inFlight.since {
		inFlight.since, inFlight.sinceSet = start, true
	}
	inFlight.Unlock()
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
	return killLoop(since, exclude, killBound, func(procs []proc) []proc {
		mine := map[int]bool{}
		children := map[int][]int{}
		for _, p := range procs {
			children[p.ppid] = append(children[p.ppid], p.pid)
			if p.ppid == self && p.sid != ownSid && p.pid != exclude {
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
