//go:build unix

package pathclass

import (
	"io/fs"
	"syscall"
)

// oNoFollow makes an open fail on a symbolic link in the last component.
const oNoFollow = syscall.O_NOFOLLOW

// linkCount returns the number of hard links to the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
