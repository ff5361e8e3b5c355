package toolfile

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opair-dev/opair/internal/strictjson"
)

// Set is the validated tools of one tools directory, sorted by name.
type Set struct {
	Dir   string // where they came from ("embedded defaults" for the defaults)
	Tools []*Tool
}

// Lookup returns the tool of that name, or nil.
func (s *Set) Lookup(name string) *Tool {
	i := sort.Search(len(s.Tools), func(i int) bool { return s.Tools[i].Name >= name })
	if i < len(s.Tools) && s.Tools[i].Name == name {
		return s.Tools[i]
	}
	return nil
}

// LoadDir validates every *.json file in dir (not in subdirectories). It
// returns the set, or Errors holding every diagnostic of every file.
func LoadDir(dir string, cat Catalog) (*Set, error) {
	s, err := LoadFS(os.DirFS(dir), ".", cat, func(name string) string { return filepath.Join(dir, name) })
	if s != nil {
		s.Dir = dir
	}
	return s, err
}

// LoadFS is LoadDir over a file system. display turns a file name into the
// name shown in diagnostics.
func LoadFS(fsys fs.FS, dir string, cat Catalog, display func(string) string) (*Set, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading tools directory: %w", err)
	}
	var diags Errors
	var tools []*Tool
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || e.IsDir() {
			continue
		}
		shown := display(name)
		data, rerr := readTool(fsys, path.Join(dir, name))
		if rerr != nil {
			diags = append(diags, Diagnostic{File: shown, Line: 1, Col: 1, Msg: rerr.Error(), Hint: "make it a readable regular file under 1 MiB, or remove it"})
			continue
		}
		t, errs := Parse(shown, data, cat)
		diags = append(diags, errs...)
		if t != nil {
			tools = append(tools, t)
		}
	}
	diags = append(diags, crossCheck(tools)...)
	if len(diags) > 0 {
		return nil, diags
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return &Set{Tools: tools}, nil
}

// ReadFile reads one tool file the way LoadDir does: a regular file of at
// most MaxFileBytes.
func ReadFile(path string) ([]byte, error) {
	return readTool(os.DirFS(filepath.Dir(path)), filepath.Base(path))
}

func readTool(fsys fs.FS, name string) ([]byte, error) {
	return strictjson.ReadFile(fsys, name, MaxFileBytes)
}

// crossCheck applies the rules that span files: unique tool names and
// unique slash commands. Both files of a clash are named.
func crossCheck(tools []*Tool) Errors {
	var diags Errors
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].File < tools[j].File })
	names := map[string]*Tool{}
	slash := map[string]*Tool{}
	for _, t := range tools {
		if first, ok := names[t.Name]; ok {
			diags = append(diags, Diagnostic{File: t.File, Line: 1, Col: 1,
				Msg:  fmt.Sprintf("tool name %q is also defined by %s", t.Name, first.File),
				Hint: "tool names must be unique; rename or remove one"})
		} else {
			names[t.Name] = t
		}
		if t.SlashCommand == "" {
			continue
		}
		if first, ok := slash[t.SlashCommand]; ok {
			diags = append(diags, Diagnostic{File: t.File, Line: t.slashLine, Col: t.slashCol,
				Msg:  fmt.Sprintf("slashCommand %q is already used by %s (%s)", t.SlashCommand, first.Name, first.File),
				Hint: "slash commands must be unique across tools; pick another"})
		} else {
			slash[t.SlashCommand] = t
		}
	}
	return diags
}
