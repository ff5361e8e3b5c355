package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/opair-dev/opair/sdk"
)

type deleteArgs struct {
	Path string `json:"path"`
}

func deleteFile(e *env) (*sdk.Result, error) {
	var a deleteArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	r, res, err := e.resolveWrite(a.Path, true)
	if r == nil {
		return res, err
	}
	if link := e.isLink(a.Path); link {
		return sdk.Errorf("refused: %s is a symbolic link (to %s); deleteFile deletes regular files, not links or what they point to", a.Path, r.Rel), nil
	}
	dir, err := e.pinDir(r.Rel, false)
	if err != nil {
		return writeErr(r, err)
	}
	defer dir.Close()
	base := path.Base(r.Rel)
	before, _, err := current(dir, base, r.Info)
	if errors.Is(err, errTooBig) {
		before, err = nil, nil // no diff body for a huge file; its hash is still checked below
	}
	if err != nil {
		return writeErr(r, err)
	}
	beforeSum := ""
	if before != nil {
		beforeSum = sha(before)
	}
	want, hasWant := e.expected()
	if hasWant && (before == nil || checkExpected(want, hasWant, r.Rel, a.Path, beforeSum) != nil) {
		return staleResult(r.Rel), nil
	}
	var diff string
	if before != nil && binaryReason(before) == "" {
		diff = diffFor(r.Rel, before, nil, true, false)
	} else {
		diff = fmt.Sprintf("--- a/%s\n+++ /dev/null\nBinary or large file %s deleted (%d bytes)\n", r.Rel, r.Rel, r.Info.Size())
	}
	files := []FileChange{{Path: r.Rel, BeforeSHA256: beforeSum, AfterSHA256: ""}}
	summary := "deleted " + r.Rel
	if e.call.DryRun {
		return writeResult(true, fmt.Sprintf("Would delete %s (%d bytes).", r.Rel, r.Info.Size()), summary, diff, files, map[string]any{"path": r.Rel}), nil
	}
	// Compare and remove: the entry must still be the file that was read.
	fi, err := dir.Lstat(base)
	if err != nil || !os.SameFile(fi, r.Info) {
		return writeErr(r, errChanged)
	}
	if before != nil {
		now, _, err := current(dir, base, r.Info)
		if err != nil {
			return writeErr(r, err)
		}
		if sha(now) != beforeSum {
			return writeErr(r, errChanged)
		}
	}
	if err := dir.Remove(base); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return writeErr(r, errChanged)
		}
		return writeErr(r, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	return writeResult(false, fmt.Sprintf("Deleted %s (%d bytes).", r.Rel, r.Info.Size()), summary, diff, files, map[string]any{"path": r.Rel}), nil
}

// isLink reports whether the path the model named is itself a symbolic
// link inside the project (its last component, looked up without following
// it).
func (e *env) isLink(p string) bool {
	rel := p
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(e.res.RootPath(), p)
		if err != nil || !filepath.IsLocal(r) {
			return false
		}
		rel = r
	}
	if !filepath.IsLocal(rel) {
		return false
	}
	fi, err := e.res.Root().Lstat(rel)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
