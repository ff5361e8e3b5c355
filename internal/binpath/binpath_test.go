package binpath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeExe(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/true\n"), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLookupIgnoresRelativePathEntries(t *testing.T) {
	abs := t.TempDir()
	rel := t.TempDir()
	want := writeExe(t, abs, "tool", 0o755)
	writeExe(t, rel, "tool", 0o755)
	writeExe(t, rel, "onlyhere", 0o755)
	t.Chdir(rel)
	pathEnv := strings.Join([]string{".", "", "sub", abs}, string(os.PathListSeparator))
	got, err := Lookup("tool", pathEnv)
	if err != nil || got != want {
		t.Fatalf("Lookup(tool) = %q, %v; want %q", got, err, want)
	}
	if _, err := Lookup("onlyhere", pathEnv); !errors.Is(err, ErrNotFound) {
		t.Fatalf("found a binary through a relative PATH entry: %v", err)
	}
}

func TestLookupChecks(t *testing.T) {
	dir := t.TempDir()
	writeExe(t, dir, "noexec", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"noexec", "adir", "missing"} {
		if _, err := Lookup(bin, dir); err == nil {
			t.Errorf("Lookup(%q) succeeded", bin)
		}
	}
	exe := writeExe(t, dir, "ok", 0o755)
	if got, err := Lookup(exe, ""); err != nil || got != exe {
		t.Errorf("absolute bin: %q %v", got, err)
	}
	for _, bin := range []string{"", "./x", "a/b", "x\n", "go test"} {
		if CheckName(bin) == "" {
			t.Errorf("CheckName(%q) accepted", bin)
		}
	}
}

func TestRunner(t *testing.T) {
	for _, bin := range []string{"sh", "/bin/bash", "env", "xargs", "python3", "python3.11", "node", "npx", "busybox", "sudo", "npm", "perl", "find", "sed"} {
		if Runner(bin) == "" {
			t.Errorf("%s is not flagged as running other programs", bin)
		}
	}
	for _, bin := range []string{"go", "git", "gofmt", "cargo", "/usr/bin/rg", "pythonic-linter"} {
		if why := Runner(bin); why != "" {
			t.Errorf("%s flagged: %s", bin, why)
		}
	}
}
