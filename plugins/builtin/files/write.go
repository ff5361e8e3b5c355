package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/opair-dev/opair/internal/pathclass"
	"github.com/opair-dev/opair/sdk"
)

// maxWriteFile bounds a file a writer reads or writes.
const maxWriteFile = 16 << 20

// resolveWrite resolves the target of a write: granted by the scope, not
// protected, not through a dangling link, not special, not hard-linked, in
// the project. mustExist asks for an existing regular file.
func (e *env) resolveWrite(p string, mustExist bool) (*pathclass.Resolved, *sdk.Result, error) {
	r, res, err := e.resolve(p)
	if r == nil {
		return nil, res, err
	}
	if res := checkWritable(r, mustExist); res != nil {
		return nil, res, nil
	}
	return r, nil, nil
}

func checkWritable(r *pathclass.Resolved, mustExist bool) *sdk.Result {
	switch {
	case r.Protected != "":
		return sdk.Errorf("refused: %s is protected (%s): no builtin tool writes it, whatever its scope", show(r), r.Protected)
	case r.Class == pathclass.External:
		return sdk.Errorf("refused: %s is outside the project; builtin tools write only inside it", show(r))
	case r.Dangling:
		return sdk.Errorf("refused: %s is a symbolic link whose target does not exist; writing through it is refused", show(r))
	case r.Rel == "." || r.Rel == "":
		return sdk.Errorf("refused: %s is the project root", show(r))
	case r.Exists && r.Special:
		return sdk.Errorf("refused: %s is a %s, not a regular file", show(r), specialKind(r.Info))
	case r.Exists && r.Info.IsDir():
		return sdk.Errorf("%s is a directory; this tool works on files only", show(r))
	case r.Exists && r.MayLeadOutside:
		return sdk.Errorf("refused: %s has several hard links, so it may be the same file as one outside the project; it is not changed", show(r))
	case mustExist && !r.Exists:
		return sdk.Errorf("no such file: %s", show(r))
	}
	return nil
}

// errChanged reports a target that changed between its resolution and the
// write, or since the approved diff.
var errChanged = errors.New("changed during the call")

// pinDir opens the directory holding rel through the project root, walking
// its real components without following any link, and checks each opened
// directory against what was looked up. With create, missing directories
// are made (mode 0755 before umask). What the resolver classified is the
// path rel, whose components are links resolved; a component that is now a
// link was swapped in, and is refused.
func (e *env) pinDir(rel string, create bool) (*os.Root, error) {
	dir := path.Dir(rel)
	cur, err := e.res.Root().OpenRoot(".")
	if err != nil {
		return nil, err
	}
	if dir == "." {
		return cur, nil
	}
	for _, comp := range strings.Split(dir, "/") {
		fi, err := cur.Lstat(comp)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err := cur.Mkdir(comp, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				cur.Close()
				return nil, err
			}
			fi, err = cur.Lstat(comp)
		}
		if err != nil {
			cur.Close()
			return nil, err
		}
		if !fi.IsDir() {
			cur.Close()
			if fi.Mode()&fs.ModeSymlink != 0 {
				return nil, errChanged
			}
			return nil, &fs.PathError{Op: "open", Path: comp, Err: syscall.ENOTDIR}
		}
		next, err := cur.OpenRoot(comp)
		if err != nil {
			cur.Close()
			return nil, err
		}
		cur.Close()
		st, err := next.Stat(".")
		if err != nil || !os.SameFile(st, fi) {
			next.Close()
			return nil, errChanged
		}
		cur = next
	}
	return cur, nil
}

// current reads the file base in the pinned directory dir, checking that it
// is still the file that was resolved (info; nil when it did not exist).
// It returns nil data and exists=false when there is no file.
func current(dir *os.Root, base string, info fs.FileInfo) (data []byte, exists bool, err error) {
	f, err := dir.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0) // os.Root follows a link inside dir: SameFile below catches it
	if errors.Is(err, fs.ErrNotExist) {
		if info != nil {
			return nil, false, errChanged
		}
		return nil, false, nil
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, false, errChanged
		}
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if info == nil || !os.SameFile(fi, info) || !fi.Mode().IsRegular() {
		return nil, true, errChanged
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return nil, true, errChanged
	}
	data, big, err := readAll(f, maxWriteFile)
	if err != nil {
		return nil, true, err
	}
	if big {
		return nil, true, errTooBig
	}
	return data, true, nil
}

var errTooBig = fmt.Errorf("file is larger than the %d-byte limit of the writing tools", maxWriteFile)

// writeOptions tune writeAtomic.
type writeOptions struct {
	mode      fs.FileMode // kept from the old file; 0 for a new file (0666 before umask)
	uid, gid  int         // the old file's owner, kept when possible; -1: none
	noClobber bool        // fail with fs.ErrExist instead of replacing a file
	// check runs just before the rename and may veto it (compare-and-swap
	// on the current content).
	check func() error
}

// writeAtomic writes data to base in the pinned directory dir: a temporary
// file in the same directory, written, synced, given the old mode, then
// renamed over base (or linked to it for noClobber), and the directory
// synced. A failure leaves base as it was and removes the temporary file.
func writeAtomic(dir *os.Root, base string, data []byte, o writeOptions) (err error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := ".opair-tmp-" + hex.EncodeToString(rnd[:])
	perm := fs.FileMode(0o600)
	if o.mode == 0 {
		perm = 0o666 // a new file: the umask decides, as for any new file
	}
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", base, err)
	}
	placed := false
	defer func() {
		if f != nil {
			f.Close()
		}
		if !placed || o.noClobber {
			dir.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", base, err)
	}
	if o.uid >= 0 && o.gid >= 0 && (o.uid != os.Getuid() || o.gid != os.Getgid()) {
		_ = f.Chown(o.uid, o.gid) // best effort: only root may give a file away
	}
	if o.mode != 0 {
		// After the chown, which clears setuid and setgid bits.
		if err := f.Chmod(o.mode); err != nil {
			return fmt.Errorf("setting the mode of %s: %w", base, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", base, err)
	}
	if err := f.Close(); err != nil {
		f = nil
		return fmt.Errorf("closing %s: %w", base, err)
	}
	f = nil
	if o.check != nil {
		if err := o.check(); err != nil {
			return err
		}
	}
	if o.noClobber {
		err := dir.Link(tmp, base)
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		if err != nil {
			// No hard links on this file system: check, then rename.
			if _, lerr := dir.Lstat(base); lerr == nil {
				return fs.ErrExist
			}
			if err := dir.Rename(tmp, base); err != nil {
				return fmt.Errorf("placing %s: %w", base, err)
			}
		}
	} else if err := dir.Rename(tmp, base); err != nil {
		return fmt.Errorf("placing %s: %w", base, err)
	}
	placed = true
	return syncDir(dir)
}

// syncDir makes a rename or removal in dir durable.
func syncDir(dir *os.Root) error {
	d, err := dir.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("syncing the directory: %w", err)
	}
	return nil
}

// owner returns a file's owner, or -1s.
func owner(fi fs.FileInfo) (int, int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

// keptMode is the part of a file's mode a rewrite keeps.
func keptMode(fi fs.FileMode) fs.FileMode {
	return fi & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// writeErr turns a write-path error into a model result or a Go error.
func writeErr(r *pathclass.Resolved, err error) (*sdk.Result, error) {
	switch {
	case errors.Is(err, errChanged):
		return sdk.Errorf("refused: %s changed on disk during the call (a file or link was replaced); read it again and retry", show(r)), nil
	case errors.Is(err, errStale):
		return staleResult(r.Rel), nil
	case errors.Is(err, errTooBig):
		return sdk.Errorf("refused: %s is larger than %d bytes, the limit of the writing tools", show(r), maxWriteFile), nil
	case errors.Is(err, fs.ErrPermission):
		return sdk.Errorf("permission denied: %s", show(r)), nil
	case errors.Is(err, syscall.ENOTDIR):
		return sdk.Errorf("a parent of %s is a file, not a directory", show(r)), nil
	case errors.Is(err, syscall.ENOSPC):
		return sdk.Errorf("no space left on the device writing %s; nothing was changed", show(r)), nil
	case errors.Is(err, syscall.EROFS):
		return sdk.Errorf("%s is on a read-only file system", show(r)), nil
	case errors.Is(err, syscall.ENAMETOOLONG):
		return sdk.Errorf("a name in %s is too long for the file system", show(r)), nil
	}
	return nil, fmt.Errorf("%s: %w", show(r), err)
}
