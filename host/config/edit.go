package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/internal/strictjson"
)

// AddRules appends permission rules to the user config file at path (the
// human's "always, and save it" answer), creating the file if needed. The
// rest of the file is kept as written: the rules are inserted as text. The
// result is validated before it replaces the file, atomically.
func AddRules(path string, rules []permission.Rule) error {
	if len(rules) == 0 {
		return nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data = []byte("{}\n")
	} else if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	root, perrs := strictjson.Parse(data, strictjson.Limits{MaxBytes: MaxFileBytes, MaxDepth: MaxDepth})
	if root == nil || len(perrs) > 0 || root.Kind != strictjson.Object {
		return fmt.Errorf("%s is not a valid config; fix it before saving approvals into it", path)
	}
	var items []string
	for _, r := range rules {
		items = append(items, "    "+r.JSON())
	}
	var out string
	if m := root.Member("permissions"); m != nil {
		arr := m.Value
		if arr.Kind != strictjson.Array {
			return fmt.Errorf("%s: permissions is not a list", path)
		}
		end := arr.End - 1 // the closing bracket
		head := strings.TrimRight(string(data[:end]), " \t\r\n")
		sep := ",\n"
		if len(arr.Elems) == 0 {
			sep = "\n"
		}
		out = head + sep + strings.Join(items, ",\n") + "\n  " + string(data[end:])
	} else {
		end := root.End - 1 // the closing brace
		head := strings.TrimRight(string(data[:end]), " \t\r\n")
		sep := ",\n"
		if len(root.Members) == 0 {
			sep = "\n"
		}
		out = head + sep + "  \"permissions\": [\n" + strings.Join(items, ",\n") + "\n  ]\n" + string(data[end:])
	}
	return replaceValidated(path, []byte(out))
}

// RemoveRule removes the n-th (1-based) permission rule of the user config
// file at path and returns it.
func RemoveRule(path string, n int) (permission.Rule, error) {
	cfg, err := Load(path, "")
	if err != nil {
		return permission.Rule{}, err
	}
	if n < 1 || n > len(cfg.Permissions) {
		return permission.Rule{}, fmt.Errorf("there is no rule %d: %s has %d rules ('opair permissions list' numbers them)", n, path, len(cfg.Permissions))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return permission.Rule{}, err
	}
	root, _ := strictjson.Parse(data, strictjson.Limits{MaxBytes: MaxFileBytes, MaxDepth: MaxDepth})
	arr := root.Get("permissions")
	el := arr.Elems[n-1]
	start, end := el.Start, el.End
	// Take the separating comma with the element: the one after it, or
	// for the last element the one before it.
	if n < len(arr.Elems) {
		end = arr.Elems[n].Start
	} else if n > 1 {
		start = arr.Elems[n-2].End
	}
	out := append(append([]byte(nil), data[:start]...), data[end:]...)
	if err := replaceValidated(path, out); err != nil {
		return permission.Rule{}, err
	}
	return cfg.Permissions[n-1], nil
}

// replaceValidated writes data over path atomically, after checking that it
// is a valid config.
func replaceValidated(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.json")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if _, err := Load(tmp.Name(), ""); err != nil {
		return fmt.Errorf("the edited config would be invalid, so %s was left as it was: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
