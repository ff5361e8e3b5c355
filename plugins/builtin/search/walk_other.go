//go:build !linux

package search

import (
	"os"

	"golang.org/x/sys/unix"
)

// readDir lists a directory into out (without "." and ".."), through a
// duplicate of its descriptor.
func readDir(fd int, _ []byte, out []dirent) ([]dirent, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return out, err
	}
	f := os.NewFile(uintptr(dup), ".")
	defer f.Close()
	entries, err := f.ReadDir(-1)
	for _, de := range entries {
		typ := uint8(unix.DT_UNKNOWN)
		switch t := de.Type(); {
		case t.IsDir():
			typ = unix.DT_DIR
		case t.IsRegular():
			typ = unix.DT_REG
		case t&os.ModeSymlink != 0:
			typ = unix.DT_LNK
		default:
			typ = unix.DT_FIFO // anything else: not walked
		}
		out = append(out, dirent{name: de.Name(), typ: typ})
	}
	return out, err
}
