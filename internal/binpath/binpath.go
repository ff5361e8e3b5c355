// Package binpath finds the executables that exec tools name, the safe way:
// only in absolute PATH directories (never ".", "" or a relative entry), and
// says which executables run other programs (shells, interpreters, command
// runners, package managers), which Opair always treats as untrusted.
//
// Shared by the host (availability at start-up) and the exec plugin
// (resolution at call time); it imports neither.
package binpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrNotFound is returned when no absolute PATH directory holds the binary.
var ErrNotFound = errors.New("not found on PATH")

// CheckName reports what is wrong with a bin value of a tool file, or "".
// A bin is a bare command name looked up on PATH, or an absolute path.
func CheckName(bin string) string {
	switch {
	case bin == "":
		return "is empty"
	case strings.ContainsAny(bin, "\x00\n\r"):
		return "contains a NUL or newline character"
	case strings.TrimSpace(bin) != bin || strings.ContainsAny(bin, " \t"):
		return "contains white space; put fixed words in subcommand"
	case filepath.IsAbs(bin):
		return ""
	case strings.ContainsRune(bin, '/'):
		return "is a relative path, which would resolve inside the project; use a bare name looked up on PATH, or an absolute path"
	}
	return ""
}

// Dirs returns the absolute directories of a PATH value, in order, without
// duplicates. Empty, "." and relative entries are dropped: they would resolve
// against the project directory, which the model may write.
func Dirs(pathEnv string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// Lookup resolves bin to an absolute path of an executable regular file.
// An absolute bin is checked as it is; a bare name is searched in the
// absolute directories of pathEnv.
func Lookup(bin, pathEnv string) (string, error) {
	if why := CheckName(bin); why != "" {
		return "", fmt.Errorf("bin %q %s", bin, why)
	}
	if filepath.IsAbs(bin) {
		if err := executable(bin); err != nil {
			return "", fmt.Errorf("bin %q: %w", bin, err)
		}
		return bin, nil
	}
	for _, d := range Dirs(pathEnv) {
		p := filepath.Join(d, bin)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: %w", bin, ErrNotFound)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", p)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s: %w", p, fs.ErrPermission)
	}
	return nil
}

var runnerPattern = regexp.MustCompile(`^(python|pypy|ruby|perl|php|lua|node|nodejs|deno|bun|java|pwsh|tclsh|wish|Rscript|julia|guile|ocaml|ghci|erl|elixir|iex|osascript)[0-9.]*$`)

var runners = map[string]string{
	"sh": "a shell", "bash": "a shell", "dash": "a shell", "zsh": "a shell", "ksh": "a shell",
	"mksh": "a shell", "fish": "a shell", "csh": "a shell", "tcsh": "a shell", "ash": "a shell", "busybox": "a shell",
	"env": "a command runner", "xargs": "a command runner", "sudo": "a command runner", "doas": "a command runner",
	"su": "a command runner", "nice": "a command runner", "nohup": "a command runner", "timeout": "a command runner",
	"time": "a command runner", "stdbuf": "a command runner", "setsid": "a command runner", "chroot": "a command runner",
	"unshare": "a command runner", "nsenter": "a command runner", "flock": "a command runner", "watch": "a command runner",
	"script": "a command runner", "strace": "a command runner", "ltrace": "a command runner", "gdb": "a command runner",
	"parallel": "a command runner", "ssh": "a remote command runner", "make": "a command runner (recipes are shell commands)",
	"just": "a command runner", "task": "a command runner", "awk": "an interpreter", "gawk": "an interpreter",
	"mawk": "an interpreter", "sed": "an interpreter (s///e runs commands)", "find": "a command runner (-exec)",
	"npm": "a package manager that runs package scripts", "npx": "a package runner", "pnpm": "a package manager that runs package scripts",
	"pnpx": "a package runner", "yarn": "a package manager that runs package scripts", "corepack": "a package manager shim",
	"mise": "a tool manager that runs tasks", "asdf": "a tool manager", "rustup": "a toolchain installer",
	"conan": "a package manager that runs Python recipes", "pip": "a package installer", "pip3": "a package installer",
	"pipx": "a package runner", "uv": "a package runner", "uvx": "a package runner", "poetry": "a package manager",
	"gem": "a package installer", "bundle": "a package manager", "composer": "a package manager",
}

// Runner reports why a binary runs other programs (a shell, an interpreter,
// a command runner or a package manager that executes scripts), or "".
// Only the base name counts, so /usr/bin/bash and bash are the same.
func Runner(bin string) string {
	base := filepath.Base(bin)
	if why, ok := runners[base]; ok {
		return why
	}
	if runnerPattern.MatchString(base) {
		return "an interpreter"
	}
	return ""
}
