package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/opair-dev/opair/sdk"
)

type chmodArgs struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
}

// parseMode parses an octal permission string ("755", "0644", "0o600").
// Only the nine permission bits may be set.
func parseMode(s string) (fs.FileMode, *sdk.Result) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
	if t == "" || len(t) > 6 {
		return 0, sdk.Errorf("mode %q is not an octal permission string such as \"0755\" or \"0644\"", s)
	}
	v, err := strconv.ParseUint(t, 8, 32)
	if err != nil || v > 0o7777 {
		return 0, sdk.Errorf("mode %q is not an octal permission string such as \"0755\" or \"0644\"", s)
	}
	if v&^0o777 != 0 {
		return 0, sdk.Errorf("refused: mode %q sets setuid, setgid or sticky bits; only the permission bits (read, write, execute for owner, group and others, 0000-0777) can be set", s)
	}
	return fs.FileMode(v), nil
}

func chmodFile(e *env) (*sdk.Result, error) {
	var a chmodArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	mode, res := parseMode(a.Mode)
	if res != nil {
		return res, nil
	}
	r, res, err := e.resolveWrite(a.Path, true)
	if r == nil {
		return res, err
	}
	dir, err := e.pinDir(r.Rel, false)
	if err != nil {
		return writeErr(r, err)
	}
	defer dir.Close()
	base := path.Base(r.Rel)
	// Open the file itself and change the mode through the descriptor, so
	// that the file changed is the one checked.
	f, err := dir.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return writeErr(r, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(fi, r.Info) || !fi.Mode().IsRegular() {
		return writeErr(r, errChanged)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return writeErr(r, errChanged)
	}
	data, big, err := readAll(f, maxWriteFile)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.Rel, err)
	}
	sum := ""
	if !big {
		sum = sha(data)
	}
	want, hasWant := e.expected()
	if hasWant && (big || checkExpected(want, hasWant, r.Rel, a.Path, sum) != nil) {
		return staleResult(r.Rel), nil
	}
	oldMode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	newMode := mode
	diff := ""
	if oldMode != newMode {
		diff = fmt.Sprintf("diff --git a/%s b/%s\nold mode %s\nnew mode %s\n", r.Rel, r.Rel, gitMode(oldMode), gitMode(newMode))
	}
	files := []FileChange{{Path: r.Rel, BeforeSHA256: sum, AfterSHA256: sum}}
	extra := map[string]any{"path": r.Rel, "oldMode": fmt.Sprintf("%04o", uint32(oldMode.Perm())|specialBits(oldMode)), "newMode": fmt.Sprintf("%04o", uint32(newMode))}
	summary := fmt.Sprintf("chmod %04o %s", uint32(newMode), r.Rel)
	if oldMode == newMode {
		return writeResult(e.call.DryRun, fmt.Sprintf("%s already has mode %04o; nothing to change.", r.Rel, uint32(newMode)), summary, "", files, extra), nil
	}
	if e.call.DryRun {
		return writeResult(true, fmt.Sprintf("Would change the mode of %s from %04o to %04o.", r.Rel, uint32(oldMode.Perm())|specialBits(oldMode), uint32(newMode)), summary, diff, files, extra), nil
	}
	if err := f.Chmod(newMode); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return sdk.Errorf("permission denied changing the mode of %s", r.Rel), nil
		}
		return nil, fmt.Errorf("changing the mode of %s: %w", r.Rel, err)
	}
	return writeResult(false, fmt.Sprintf("Changed the mode of %s from %04o to %04o.", r.Rel, uint32(oldMode.Perm())|specialBits(oldMode), uint32(newMode)), summary, diff, files, extra), nil
}

// specialBits returns the setuid, setgid and sticky bits of m in octal
// position.
func specialBits(m fs.FileMode) uint32 {
	var v uint32
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// gitMode formats a regular file's mode as git does ("100755").
func gitMode(m fs.FileMode) string {
	return fmt.Sprintf("10%04o", uint32(m.Perm())|specialBits(m))
}
