// Package proctree finds and kills processes by a marker in their
// environment. Opair gives every child of a tool call a marker variable; a
// process that escaped its process group (setsid) or outlived its parent (a
// plugin that was killed) still carries it, so a scan of /proc finds it.
//
// Linux only; elsewhere the functions find nothing. It imports neither the
// host nor the plugins.
package proctree

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// WithEnv returns the pids of processes whose environment holds the exact
// entry kv ("NAME=value"), excluding the calling process.
func WithEnv(kv string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	want := []byte(kv)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, entry := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(entry, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// KillEnv SIGKILLs every process carrying kv, repeating until none is left
// or the deadline passes (a dying process can fork once more). It returns
// how many it killed.
func KillEnv(kv string, within time.Duration) int {
	deadline := time.Now().Add(within)
	killed := 0
	for {
		pids := WithEnv(kv)
		alive := 0
		for _, pid := range pids {
			if isZombie(pid) {
				continue
			}
			alive++
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
		if alive == 0 || time.Now().After(deadline) {
			return killed
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone
	}
	// The state follows the command name, which is in parentheses and may
	// contain spaces: take the field after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}
