package pathclass

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrChanged means the file system changed between Resolve and the open: the
// file opened is not the one Resolve examined (a component or the target
// was swapped).
var ErrChanged = errors.New("the path changed after it was checked")

// Open opens a resolved, existing path for reading, following the package
// contract: a project path through Root() with Rel, an external one by Abs;
// with O_NONBLOCK, so a FIFO swapped in cannot block the open; and then
// checks that the opened file is the one Resolve examined (os.SameFile with
// Info, the same kind of file, and MayLeadOutside still the same, which
// catches a hard link added since), failing with ErrChanged otherwise.
// Policy (scope, Special, MayLeadOutside) stays with the caller.
func (r *Resolver) Open(res *Resolved) (*os.File, error) {
	if !res.Exists || res.Info == nil {
		return nil, fmt.Errorf("path %q: %w", res.Input, os.ErrNotExist)
	}
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	var f *os.File
	var err error
	if res.Class == External {
		f, err = os.OpenFile(res.Abs, flags|oNoFollow, 0)
	} else {
		f, err = r.root.OpenFile(res.Rel, flags, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", res.Input, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("path %q: %w", res.Input, err)
	}
	mayLeadOutside := st.Mode().IsRegular() && linkCount(st) > 1
	if !os.SameFile(st, res.Info) || st.Mode().Type() != res.Info.Mode().Type() || mayLeadOutside != res.MayLeadOutside {
		f.Close()
		return nil, fmt.Errorf("path %q: %w", res.Input, ErrChanged)
	}
	return f, nil
}
