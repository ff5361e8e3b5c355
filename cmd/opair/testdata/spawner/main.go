// Command spawner is a tool binary for the tests: it starts a child in its
// own session (setsid) and one in its own process group, writes the pids of
// both and of itself to the file named by its first argument, prints a line,
// and sleeps. A call that times out or is cancelled must leave none of them.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: spawner PIDFILE [SECONDS]")
		os.Exit(2)
	}
	secs := "300"
	if len(os.Args) > 2 {
		secs = os.Args[2]
	}
	session := exec.Command("sleep", secs)
	session.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	group := exec.Command("sleep", secs)
	group.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	for _, c := range []*exec.Cmd{session, group} {
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	pids := fmt.Sprintf("%d %d %d\n", os.Getpid(), session.Process.Pid, group.Process.Pid)
	if err := os.WriteFile(os.Args[1], []byte(pids), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("spawned", pids)
	d, _ := time.ParseDuration(secs + "s")
	time.Sleep(d)
}
