package search

import (
	"bytes"
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// readDir lists a directory with getdents64 into out (without "." and
// "..").
func readDir(fd int, buf []byte, out []dirent) ([]dirent, error) {
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return out, errors.New("getdents: bad record")
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) > 0 && !(name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.')) {
				out = append(out, dirent{name: string(name), typ: b[18]})
			}
			b = b[reclen:]
		}
	}
}
