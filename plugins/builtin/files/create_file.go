package files

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/opair-dev/opair/sdk"
)

type createArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func createFile(e *env) (*sdk.Result, error) {
	var a createArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	if len(a.Content) > maxWriteFile {
		return sdk.Errorf("content is %d bytes, over the %d-byte limit of %s", len(a.Content), maxWriteFile, e.call.Tool), nil
	}
	r, res, err := e.resolveWrite(a.Path, false)
	if r == nil {
		return res, err
	}
	if r.Exists {
		return sdk.Errorf("%s already exists: change it with an editFile tool (editProjectFile), or delete it first", show(r)), nil
	}
	want, hasWant := e.expected()
	if err := checkExpected(want, hasWant, r.Rel, a.Path, ""); err != nil {
		return staleResult(r.Rel), nil
	}
	data := []byte(a.Content)
	lines := countLines(data)
	diff := diffFor(r.Rel, nil, data, false, true)
	files := []FileChange{{Path: r.Rel, BeforeSHA256: "", AfterSHA256: sha(data)}}
	summary := fmt.Sprintf("created %s (%s)", r.Rel, plural(lines, "line"))
	if e.call.DryRun {
		return writeResult(true, fmt.Sprintf("Would create %s (%s, %d bytes).", r.Rel, plural(lines, "line"), len(data)), summary, diff, files, nil), nil
	}
	dir, err := e.pinDir(r.Rel, true)
	if err != nil {
		return writeErr(r, err)
	}
	defer dir.Close()
	err = writeAtomic(dir, path.Base(r.Rel), data, writeOptions{uid: -1, gid: -1, noClobber: true})
	if errors.Is(err, fs.ErrExist) {
		return sdk.Errorf("%s already exists (it was created during the call): change it with an editFile tool", show(r)), nil
	}
	if err != nil {
		return writeErr(r, err)
	}
	return writeResult(false, fmt.Sprintf("Created %s (%s, %d bytes).", r.Rel, plural(lines, "line"), len(data)), summary, diff, files, nil), nil
}
