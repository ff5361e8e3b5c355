package files

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opair-dev/opair/internal/pathclass"
	"github.com/opair-dev/opair/sdk"
)

// maxListEntries bounds the entries one listing looks at and returns.
const (
	maxListEntries = 10000
	maxListShown   = 1000
)

type listArgs struct {
	Path string `json:"path"`
}

// ListEntry is one entry of a listing.
type ListEntry struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // file, dir, symlink, other
	Size int64  `json:"size"`
}

func listDirectory(e *env) (*sdk.Result, error) {
	var a listArgs
	if res := e.decode(&a); res != nil {
		return res, nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	r, res, err := e.resolveExisting(a.Path, wantDir)
	if r == nil {
		return res, err
	}
	d, err := e.open(r)
	if err != nil {
		return openErr(r, err)
	}
	defer d.Close()
	des, err := d.ReadDir(maxListEntries + 1)
	if err != nil && err != io.EOF && len(des) == 0 {
		return nil, fmt.Errorf("listing %s: %w", show(r), err)
	}
	more := len(des) > maxListEntries
	if more {
		des = des[:maxListEntries]
	}
	slices.SortFunc(des, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })

	var shown []ListEntry
	hidden := 0
	for _, de := range des {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		name := de.Name()
		var child string
		if r.Class == pathclass.External {
			child = filepath.Join(r.Abs, name)
		} else {
			child = path.Join(r.Rel, name)
		}
		cr, err := e.res.Resolve(child)
		if err != nil || !pathclass.Grants(e.scope, cr.Class) {
			hidden++
			continue
		}
		ent := ListEntry{Name: name, Kind: "other"}
		info, err := de.Info() // lstat: a link is listed as a link
		if err != nil {
			hidden++ // removed since the listing
			continue
		}
		switch m := info.Mode(); {
		case m.IsDir():
			ent.Kind = "dir"
		case m.IsRegular():
			ent.Kind, ent.Size = "file", info.Size()
		case m&fs.ModeSymlink != 0:
			ent.Kind = "symlink"
			if cr.Exists && cr.Info.Mode().IsRegular() {
				ent.Size = cr.Info.Size()
			}
		}
		shown = append(shown, ent)
	}
	truncated := 0
	if len(shown) > maxListShown {
		truncated = len(shown) - maxListShown
		shown = shown[:maxListShown]
	}

	var sb strings.Builder
	name := displayRel(r)
	for _, ent := range shown {
		switch ent.Kind {
		case "dir":
			fmt.Fprintf(&sb, "dir      %12s  %s/\n", "-", ent.Name)
		default:
			fmt.Fprintf(&sb, "%-8s %12d  %s\n", ent.Kind, ent.Size, ent.Name)
		}
	}
	if len(shown) == 0 {
		sb.WriteString("(no entries shown)\n")
	}
	if truncated > 0 {
		fmt.Fprintf(&sb, "(listing cut: %s not shown; use findInProject with a glob to narrow it)\n", plural(truncated, "more entry"))
	}
	if more {
		fmt.Fprintf(&sb, "(the directory has more than %d entries; only %d of them were looked at)\n", maxListEntries, maxListEntries)
	}
	if hidden > 0 {
		fmt.Fprintf(&sb, "(%s hidden: outside this tool's scope, %s)\n", plural(hidden, "entry"), e.scope)
	}
	return &sdk.Result{
		Content: []sdk.Content{{Text: sb.String()}},
		Summary: fmt.Sprintf("listed %s: %s", name, plural(len(shown), "entry")),
		Details: map[string]any{"path": name, "class": r.Class.String(), "entries": shown, "hidden": hidden, "truncated": truncated > 0 || more},
	}, nil
}
