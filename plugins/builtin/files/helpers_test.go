package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opair-dev/opair/sdk"
)

// tree describes files to create: a path ending in "/" is a directory; a
// value starting with "->" makes a symbolic link to the rest.
type tree map[string]string

// newProject makes a project directory holding t.
func newProject(t *testing.T, files tree) string {
	t.Helper()
	root := t.TempDir()
	// Resolve the temp dir itself (it may sit behind a link).
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, files)
	return root
}

func write(t *testing.T, root string, files tree) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := files[n]
		p := filepath.Join(root, n)
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(v, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// opts are the optional parts of a test call.
type opts struct {
	dryRun         bool
	includeHidden  bool
	includeIgnored bool
	tool           string
}

// invoke runs one handler type on a project, as the plugin would.
func invoke(t *testing.T, root, typ, scope string, args any, o ...opts) (*sdk.Result, error) {
	t.Helper()
	var op opts
	if len(o) > 0 {
		op = o[0]
	}
	h := map[string]any{"type": typ}
	if scope != "" {
		h["scope"] = scope
	}
	if op.includeHidden {
		h["includeHidden"] = true
	}
	if op.includeIgnored {
		h["includeIgnored"] = true
	}
	hb, _ := json.Marshal(h)
	var ab []byte
	switch a := args.(type) {
	case string:
		ab = []byte(a)
	default:
		ab, _ = json.Marshal(a)
	}
	tool := op.tool
	if tool == "" {
		tool = "test" + strings.ToUpper(typ[:1]) + typ[1:]
	}
	call := &sdk.Call{ID: "t", Tool: tool, Type: typ, Handler: hb, Args: ab, ProjectRoot: root, DryRun: op.dryRun}
	return handler(typ).Invoke(context.Background(), call, nil)
}

// mustOK runs a call that must succeed and returns its text.
func mustOK(t *testing.T, root, typ, scope string, args any, o ...opts) (string, *sdk.Result) {
	t.Helper()
	res, err := invoke(t, root, typ, scope, args, o...)
	if err != nil {
		t.Fatalf("%s %v: error %v", typ, args, err)
	}
	if res.IsError {
		t.Fatalf("%s %v: error result: %s", typ, args, text(res))
	}
	return text(res), res
}

// mustRefuse runs a call that must fail with an IsError result (not a Go
// error) whose text holds every want.
func mustRefuse(t *testing.T, root, typ, scope string, args any, want ...string) string {
	t.Helper()
	res, err := invoke(t, root, typ, scope, args)
	if err != nil {
		t.Fatalf("%s %v: Go error %v, want an error result", typ, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v: succeeded, want an error result: %s", typ, args, text(res))
	}
	got := text(res)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s %v: error %q does not contain %q", typ, args, got, w)
		}
	}
	return got
}

// treeHash hashes a whole directory tree: names, kinds, modes, link
// targets and contents, so that any change shows.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00%v\x00", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, "->%s\x00", target)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%d\x00", len(b))
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func details(t *testing.T, r *sdk.Result) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.Details)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
