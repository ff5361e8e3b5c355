package run

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opair-dev/opair/internal/childenv"
)

// PinGitDrivers returns env (which must already hold childenv.Pinned("git"))
// with configuration pins added for the drivers that the repository at dir
// defines, which childenv.Pinned cannot name in advance:
//
//   - filter.<name>.clean, .smudge and .process run on status, diff and blame
//     for every path .gitattributes gives that filter, and no flag turns them
//     off. They are pinned empty (no filter) and .required to false.
//   - diff.<name>.textconv is pinned to cat (the identity conversion), so a
//     blame, or a diff run without --no-textconv, shows the raw text instead
//     of running the repository's program; diff.<name>.command is pinned
//     empty, which fails closed unless --no-ext-diff is given.
//   - remote.<name>.uploadpack and .receivepack are pinned to git's own
//     git-upload-pack and git-receive-pack (a local or ssh fetch or push
//     runs them).
//
// merge.<name>.driver is not pinned (an empty driver silently keeps "ours");
// the exec plugin does not run merges for the model.
//
// It runs `git config --get-regexp` (which runs no repository program) in
// dir with env, through Run. It fails closed: an error when git does not
// honour the GIT_CONFIG_COUNT pins (git older than 2.31), or when the
// configuration cannot be read.
func PinGitDrivers(ctx context.Context, git, dir string, env []string) ([]string, error) {
	const limit = 1 << 20
	res, err := Run(ctx, Spec{
		Path:      git,
		Args:      []string{"config", "--null", "--get-regexp", `^(filter|diff|remote)\.|^core\.hookspath$`},
		Dir:       dir,
		Env:       env,
		Timeout:   30 * time.Second,
		OutputCap: limit,
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("read git configuration in %s: %w", dir, err)
	case res.ExitCode != 0 || res.Elided > 0:
		// Exit 1 means no match at all: not even the core.hooksPath pin,
		// so git did not apply GIT_CONFIG_COUNT.
		status := "exit status " + strconv.Itoa(res.ExitCode)
		if res.Signal != "" {
			status = "signal: " + res.Signal
		}
		return nil, fmt.Errorf("read git configuration in %s: %s: %s", dir, status, strings.TrimSpace(string(res.Output)))
	}
	pairs, hooksPath := driverPins(res.Output)
	if hooksPath != "/dev/null" {
		return nil, fmt.Errorf("git at %s does not apply the GIT_CONFIG_COUNT pins (core.hooksPath is %q); git 2.31 or later is needed", git, hooksPath)
	}
	if len(pairs) == 0 {
		return env, nil
	}
	first := 0
	if v, ok := childenv.Lookup(env, "GIT_CONFIG_COUNT"); ok {
		if first, err = strconv.Atoi(v); err != nil || first < 0 {
			return nil, fmt.Errorf("GIT_CONFIG_COUNT=%q is not a count", v)
		}
	}
	return childenv.Merge(env, childenv.GitConfigEnv(first, pairs)), nil
}

// driverPins turns `git config --null --get-regexp` output ("key\nvalue\0"
// per entry, "key\0" for a key without a value) into the pins PinGitDrivers
// adds, and returns the last core.hooksPath value seen.
func driverPins(out []byte) (pins [][2]string, hooksPath string) {
	filters, diffs, remotes := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, entry := range bytes.Split(out, []byte{0}) {
		if len(entry) == 0 {
			continue
		}
		key, value, _ := strings.Cut(string(entry), "\n")
		if key == "core.hookspath" {
			hooksPath = value
			continue
		}
		// section.subsection.name: the subsection is everything between the
		// first and the last dot, and keeps its case (and may hold dots).
		first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
		if first < 0 || last == first {
			continue // no subsection: diff.external and the like, pinned by childenv
		}
		section, sub, name := key[:first], key[first+1:last], key[last+1:]
		switch {
		case section == "filter":
			filters[sub] = true
		case section == "diff" && (name == "textconv" || name == "command"):
			diffs[sub] = true
		case section == "remote" && (name == "uploadpack" || name == "receivepack"):
			remotes[sub] = true
		}
	}
	for _, sub := range sortedKeys(filters) {
		pins = append(pins,
			[2]string{"filter." + sub + ".clean", ""},
			[2]string{"filter." + sub + ".smudge", ""},
			[2]string{"filter." + sub + ".process", ""},
			[2]string{"filter." + sub + ".required", "false"})
	}
	for _, sub := range sortedKeys(diffs) {
		pins = append(pins,
			[2]string{"diff." + sub + ".textconv", "cat"},
			[2]string{"diff." + sub + ".command", ""})
	}
	for _, sub := range sortedKeys(remotes) {
		pins = append(pins,
			[2]string{"remote." + sub + ".uploadpack", "git-upload-pack"},
			[2]string{"remote." + sub + ".receivepack", "git-receive-pack"})
	}
	return pins, hooksPath
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
