package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/opair-dev/opair/internal/pathclass"
	"github.com/opair-dev/opair/sdk"
)

// describe explains a class to the model.
func describe(c pathclass.Class) string {
	switch c {
	case pathclass.Project:
		return "a project path"
	case pathclass.ProjectDot:
		return "a dot path (project-dot: a file or directory whose name starts with \".\")"
	case pathclass.ProjectIgnore:
		return "a path git ignores (project-ignore)"
	case pathclass.External:
		return "outside the project (external)"
	}
	return "of class " + c.String()
}

// show is how a resolved path is named to the model: relative for project
// paths, absolute for external ones, with the link it was reached through.
func show(r *pathclass.Resolved) string {
	name := r.Abs
	if r.Class != pathclass.External {
		name = r.Rel
	}
	// Name the input too when it differs from the target other than
	// lexically: it went through a link.
	lexical, target := filepath.Clean(r.Input), r.Abs
	if !filepath.IsAbs(r.Input) {
		lexical, target = filepath.ToSlash(lexical), r.Rel
		if r.Class == pathclass.External {
			target = r.Abs
		}
	}
	if r.Input != "" && lexical != target {
		return fmt.Sprintf("%s (reached from %s)", name, r.Input)
	}
	return name
}

// displayRel is the path used in results and details: slash-separated and
// relative to the root for project paths, absolute for external ones.
func displayRel(r *pathclass.Resolved) string {
	if r.Class == pathclass.External {
		return r.Abs
	}
	return r.Rel
}

// resolve resolves a path argument and checks that the scope grants its
// class. A refusal is returned as a model-facing result.
func (e *env) resolve(path string) (*pathclass.Resolved, *sdk.Result, error) {
	if path == "" {
		return nil, sdk.Errorf("path is required"), nil
	}
	r, err := e.res.Resolve(path)
	if err != nil {
		return nil, sdk.Errorf("refused: %v", err), nil // the error names the path
	}
	if !pathclass.Grants(e.scope, r.Class) {
		hint := ""
		switch {
		case e.scope == pathclass.External:
			hint = " Use a project tool for paths inside the project."
		case r.Class == pathclass.External:
			hint = " Paths are relative to the project root; links that leave the project lead outside it."
		}
		return nil, sdk.Errorf("refused: %s is %s, which %s cannot reach (its scope is %s).%s", show(r), describe(r.Class), e.call.Tool, e.scope, hint), nil
	}
	return r, nil, nil
}

// kindWant is what a handler expects a path to be.
type kindWant int

const (
	wantFile kindWant = iota
	wantDir
)

// resolveExisting resolves a path to read: it must exist, be granted, and
// be a regular file (or a directory for wantDir) that cannot lead outside.
func (e *env) resolveExisting(path string, want kindWant) (*pathclass.Resolved, *sdk.Result, error) {
	r, res, err := e.resolve(path)
	if r == nil {
		return nil, res, err
	}
	if res := checkReadable(r, want); res != nil {
		return nil, res, nil
	}
	return r, nil, nil
}

func checkReadable(r *pathclass.Resolved, want kindWant) *sdk.Result {
	switch {
	case r.Dangling:
		return sdk.Errorf("refused: %s is a symbolic link whose target does not exist", show(r))
	case !r.Exists:
		return sdk.Errorf("no such file or directory: %s", show(r))
	case r.Special:
		return sdk.Errorf("refused: %s is a %s, not a regular file; only regular files and directories are read", show(r), specialKind(r.Info))
	case r.MayLeadOutside:
		return sdk.Errorf("refused: %s has several hard links, so it may be the same file as one outside the project; it is not read", show(r))
	case want == wantFile && r.Info.IsDir():
		return sdk.Errorf("%s is a directory: list it with a listDirectory tool (listProjectDirectory), or search it with findInProject", show(r))
	case want == wantDir && !r.Info.IsDir():
		return sdk.Errorf("%s is a file, not a directory: read it with a readFile tool (readProjectFile)", show(r))
	}
	return nil
}

func specialKind(fi fs.FileInfo) string {
	if fi == nil {
		return "special file"
	}
	m := fi.Mode()
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// errSwapped is returned when what was opened is not what was resolved.
var errSwapped = errors.New("changed while it was being opened")

// swapped is the model-facing result for errSwapped.
func swapped(r *pathclass.Resolved) *sdk.Result {
	return sdk.Errorf("refused: %s changed while it was being opened (a file or link was replaced); check it and try again", show(r))
}

// open opens a resolved, existing path for reading: a project path through
// the project's os.Root with its resolved relative path, an external one by
// its resolved absolute path without following a final link. The opened
// file must be the one resolved (os.SameFile), else errSwapped. It never
// blocks on a FIFO swapped in.
func (e *env) open(r *pathclass.Resolved) (*os.File, error) {
	var f *os.File
	var err error
	if r.Class == pathclass.External {
		f, err = os.OpenFile(r.Abs, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	} else {
		f, err = e.res.Root().OpenFile(filepath.FromSlash(r.Rel), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, errSwapped
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if r.Info == nil || !os.SameFile(fi, r.Info) || fi.Mode().Type() != r.Info.Mode().Type() {
		f.Close()
		return nil, errSwapped
	}
	// The resolved path itself must still be the opened object, not a link
	// to it: this holds even if the file was swapped before the resolver
	// took its Info.
	var li os.FileInfo
	if r.Class == pathclass.External {
		li, err = os.Lstat(r.Abs)
	} else {
		li, err = e.res.Root().Lstat(filepath.FromSlash(r.Rel))
	}
	if err != nil || li.Mode()&fs.ModeSymlink != 0 || !os.SameFile(li, fi) {
		f.Close()
		return nil, errSwapped
	}
	if fi.Mode().IsRegular() {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			f.Close()
			return nil, errSwapped // a link was added since the resolve
		}
	}
	return f, nil
}

// openErr turns an open error into a model result or a Go error.
func openErr(r *pathclass.Resolved, err error) (*sdk.Result, error) {
	switch {
	case errors.Is(err, errSwapped):
		return swapped(r), nil
	case errors.Is(err, fs.ErrNotExist):
		return sdk.Errorf("no such file or directory: %s (it was removed during the call)", show(r)), nil
	case errors.Is(err, fs.ErrPermission):
		return sdk.Errorf("permission denied: %s", show(r)), nil
	}
	return nil, fmt.Errorf("opening %s: %w", show(r), err)
}

// readAll reads f up to limit bytes; big reports that there was more.
func readAll(f *os.File, limit int64) (data []byte, big bool, err error) {
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

// readResolved opens and reads a resolved file, at most limit bytes.
func (e *env) readResolved(r *pathclass.Resolved, limit int64) (data []byte, big bool, res *sdk.Result, err error) {
	f, err := e.open(r)
	if err != nil {
		res, err := openErr(r, err)
		return nil, false, res, err
	}
	defer f.Close()
	data, big, err = readAll(f, limit)
	if err != nil {
		return nil, false, nil, fmt.Errorf("reading %s: %w", show(r), err)
	}
	return data, big, nil, nil
}
