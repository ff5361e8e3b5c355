package files

import (
	"fmt"

	"github.com/opair-dev/opair/sdk"
)

// maxReadFile is the largest file readFile returns.
const maxReadFile = 256 << 10

type readArgs struct {
	Path string `json:"path"`
}

func readFile(e *env) (*sdk.Result, error) {
	var a readArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	r, res, err := e.resolveExisting(a.Path, wantFile)
	if r == nil {
		return res, err
	}
	name := displayRel(r)
	if size := r.Info.Size(); size > maxReadFile {
		return sdk.Errorf("%s is %d bytes, over readFile's limit of %d bytes: read it in parts with %s", name, size, maxReadFile, sibling(e.call.Tool, "Lines", "readFileLines")), nil
	}
	data, big, res, err := e.readResolved(r, maxReadFile)
	if res != nil || err != nil {
		return res, err
	}
	if big {
		return sdk.Errorf("%s grew over readFile's limit of %d bytes: read it in parts with %s", name, maxReadFile, sibling(e.call.Tool, "Lines", "readFileLines")), nil
	}
	if why := binaryReason(data); why != "" {
		return sdk.Errorf("%s looks binary (%s): read its bytes with %s", name, why, sibling(e.call.Tool, "Bytes", "readFileBytes")), nil
	}
	lines := countLines(data)
	text := string(data)
	if text == "" {
		text = "(empty file)"
	}
	return &sdk.Result{
		Content: []sdk.Content{{Text: text}},
		Summary: fmt.Sprintf("read %s of %s", plural(lines, "line"), name),
		Details: map[string]any{"path": name, "class": r.Class.String(), "bytes": len(data), "lines": lines, "sha256": sha(data)},
	}, nil
}
