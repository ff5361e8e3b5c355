package childenv

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// How a kept variable's value is checked before it is passed on.
type valueKind int

const (
	anyValue valueKind = iota
	absPath            // one absolute path; anything else drops the variable
	absList            // a ':'-separated list; only its absolute entries are kept
)

// allowed is the allow-list of Build, by exact name. Everything not listed here
// (and not a locale variable, see isLocale) is dropped. Why each one is here:
var allowed = map[string]valueKind{
	// Host-owned. Forbidden() refuses these in handler.env because another
	// value would select other configuration files or binaries; Build passes
	// the host's own values, checked.
	"HOME": absPath, // tools find the user's own caches and configuration under it
	"PATH": absList, // rebuilt from absolute entries only: "", "." and relative entries would resolve inside the project

	// Who and where: harmless, and some tools misbehave without them.
	"USER":    anyValue,
	"LOGNAME": anyValue,
	"TMPDIR":  absPath, // a relative TMPDIR would put temporary files (and go's build scripts) inside the project
	"TZ":      anyValue,

	// Output shape only.
	"TERM":     anyValue, // children have no terminal (stdout is a pipe); TERM only picks escape sequences
	"NO_COLOR": anyValue,
	"CI":       anyValue, // tools turn off interactive behaviour on it
	"COLUMNS":  anyValue, // a width hint for tools that wrap their output

	// Go: locations and target selection. None of these names a program or
	// adds flags. GOFLAGS, GOENV and GOTOOLCHAIN are deliberately absent (the
	// host pins them, see Pinned), and so are GOEXPERIMENT, GOINSECURE and
	// GOWORK: they change what gets built or fetched, and a tool that needs
	// one can set it in handler.env.
	"GOPATH":       absList, // go itself rejects relative entries; drop them here rather than fail
	"GOCACHE":      absPath,
	"GOMODCACHE":   absPath,
	"GOTMPDIR":     absPath,
	"GOROOT":       absPath, // which installed toolchain; a relative value would pick one inside the project
	"GOPROXY":      anyValue,
	"GOSUMDB":      anyValue,
	"GONOSUMDB":    anyValue,
	"GONOSUMCHECK": anyValue,
	"GOPRIVATE":    anyValue,
	"GONOPROXY":    anyValue,
	"GOOS":         anyValue,
	"GOARCH":       anyValue,
	"CGO_ENABLED":  anyValue,

	// Rust: where rustup keeps its toolchains, and output shape. CARGO_HOME
	// is not here: Forbidden() refuses it because $CARGO_HOME/config.toml can
	// name a rustc wrapper or a runner, so cargo falls back to ~/.cargo.
	"RUSTUP_HOME":      absPath,
	"CARGO_TERM_COLOR": anyValue,
	"RUST_BACKTRACE":   anyValue,

	// Caches only (go's default GOCACHE lives under it). XDG_CONFIG_HOME is
	// deliberately absent: it selects configuration files, and configuration
	// is where code hides (git's $XDG_CONFIG_HOME/git/config may set
	// core.pager or core.fsmonitor; go's $XDG_CONFIG_HOME/go/env may set
	// GOFLAGS). Without it, tools read the default ~/.config under HOME,
	// which is the same place unless the user moved it; a tool that really
	// needs it can set it in handler.env.
	"XDG_CACHE_HOME": absPath,
}

// Not passed, though a user might expect them: HTTP_PROXY, HTTPS_PROXY and
// ALL_PROXY (their URLs often carry user:password), SHELL, EDITOR, VISUAL and
// PAGER (programs that tools run), SSH_AUTH_SOCK and GPG_* (access to keys),
// DISPLAY and WAYLAND_DISPLAY (a way to the user's desktop), npm_config_*
// (npm configuration, which can name a script shell).

// isLocale reports whether name is a locale variable: LANG, LANGUAGE or LC_*.
func isLocale(name string) bool {
	return name == "LANG" || name == "LANGUAGE" || strings.HasPrefix(name, "LC_")
}

// Build returns the environment that tool plugins and their children start
// from: the allow-listed variables of hostEnv ("NAME=value" entries, as from
// os.Environ), sorted by name, the last entry winning when a name repeats.
// Nothing Forbidden or IsSecret flags is passed, except the host-owned PATH
// and HOME, whose values Build checks itself. A path-valued variable whose
// value is not absolute is dropped; PATH and GOPATH keep only their absolute
// entries (and are dropped when none is left).
//
// The caller adds the tool's handler.env and then Pinned(bin), in that order,
// with Merge.
func Build(hostEnv []string) []string {
	values := map[string]string{}
	for _, kv := range hostEnv {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		kind, listed := allowed[name]
		if !listed && !isLocale(name) {
			continue
		}
		if name != "PATH" && name != "HOME" && Forbidden(name) != "" {
			continue // e.g. LC_TOKEN or LC_X-Y: a locale-looking name is not enough
		}
		v, keep := checkValue(kind, value)
		if !keep {
			delete(values, name) // a later bad value cancels an earlier good one: the host's last word counts
			continue
		}
		values[name] = v
	}
	out := make([]string, 0, len(values))
	for name, v := range values {
		out = append(out, name+"="+v)
	}
	sort.Strings(out)
	return out
}

func checkValue(kind valueKind, value string) (string, bool) {
	switch kind {
	case absPath:
		if !filepath.IsAbs(value) {
			return "", false
		}
		return value, true
	case absList:
		var keep []string
		seen := map[string]bool{}
		for _, dir := range strings.Split(value, string(filepath.ListSeparator)) {
			if !filepath.IsAbs(dir) || seen[dir] {
				continue
			}
			seen[dir] = true
			keep = append(keep, dir)
		}
		if len(keep) == 0 {
			return "", false
		}
		return strings.Join(keep, string(filepath.ListSeparator)), true
	}
	return value, true
}

// gitConfigPins are the git configuration values the host forces, passed as
// GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n (git 2.31+). That is
// git's "command" scope, which wins over the repository's .git/config. Each
// one stops a repository setting from running a program:
var gitConfigPins = [][2]string{
	{"core.fsmonitor", "false"},     // it runs on every status and diff
	{"core.hooksPath", "/dev/null"}, // no hook runs (post-index-change fires on a status that refreshes the index)
	{"core.pager", "cat"},           // children have no terminal, so git pages nothing anyway; belt and braces
	{"core.sshCommand", "ssh"},      // the plain ssh from PATH, not a repository-chosen command
	{"core.askPass", ""},            // empty means none (git checks *askpass); see also GIT_ASKPASS in Pinned
	{"credential.helper", ""},       // an empty value clears the helper list
	{"protocol.ext.allow", "never"}, // ext:: URLs run a command

	// Fails closed: a diff that would use an external driver errors out
	// ("cannot run") instead of running it. The plugin passes --no-ext-diff
	// (GitArgs), with which diff works.
	{"diff.external", ""},

	// git log runs gpg.program on every signed commit when
	// log.showSignature is set. An explicit --show-signature or a %G?
	// format still verifies, but with the real programs (git's defaults),
	// not repository-chosen ones. Signing is off, so the signing-only
	// gpg.ssh.defaultKeyCommand never runs either.
	{"log.showSignature", "false"},
	{"gpg.program", "gpg"},
	{"gpg.openpgp.program", "gpg"},
	{"gpg.x509.program", "gpgsm"},
	{"gpg.ssh.program", "ssh-keygen"},
	{"gpg.ssh.defaultKeyCommand", ""},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
}

// noGitConfig is where GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM point: a path
// that cannot exist, so reading finds nothing (git ignores a missing file)
// and writing fails for everyone, root included. Not /dev/null itself: git
// writes configuration by creating <file>.lock and renaming it over <file>,
// and as root `git config --global k v` with GIT_CONFIG_GLOBAL=/dev/null
// replaces the system's /dev/null with a regular file (seen happen).
const noGitConfig = "/dev/null/opair-no-git-config"

// Pinned returns the variables the host forces for the binary bin (a name or
// a path; only its base name counts), whatever the tool file and the host's
// environment say. Merge them last. Binaries other than go and git get none.
//
// go: GOTOOLCHAIN=local (a go.mod "toolchain" line must not download and run
// another toolchain), GOFLAGS= (no -exec/-toolexec from outside), GOENV=off
// (the user's `go env -w` file, which may set GOFLAGS, is not read, and
// `go env -w` cannot persist anything).
//
// git: GIT_CONFIG_NOSYSTEM=1, and GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM
// set to paths below /dev/null (see noGitConfig), so git reads only the
// repository's configuration and the pins above it. Dropping the user's
// global configuration loses their identity, aliases, colours and
// safe.directory exceptions; the tools Opair runs through git are read-only
// and need none of them, and in exchange nothing in ~/.gitconfig (hooksPath,
// fsmonitor, a pager, includes) changes what a tool does, and
// `git config --global` or `--system` cannot write anywhere (Not a
// directory). A tool that commits would need an identity: the host
// would add user.name and user.email pins (GitConfigEnv) read from the
// user's configuration. Also: GIT_TERMINAL_PROMPT=0,
// GIT_ASKPASS= (empty: no askpass program, not even core.askPass),
// GIT_EDITOR=: and GIT_SEQUENCE_EDITOR=: (":" is git's "no editor"),
// GIT_PAGER=cat, PAGER=cat, GIT_OPTIONAL_LOCKS=0 (status does not write the
// index, so no index hook or lock), GIT_PROXY_COMMAND= (empty: no
// core.gitProxy program), and the configuration pins listed in
// gitConfigPins. Repository-defined drivers (filter.<name>.clean,
// diff.<name>.textconv) cannot be pinned without knowing their names: the
// exec plugin adds them per repository (see plugins/exec/run.PinGitDrivers)
// and adds --no-ext-diff --no-textconv to diff-like subcommands.
func Pinned(bin string) []string {
	name := strings.TrimSuffix(filepath.Base(bin), ".exe")
	switch name {
	case "go":
		return []string{"GOTOOLCHAIN=local", "GOFLAGS=", "GOENV=off"}
	case "git":
		env := []string{
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + noGitConfig,
			"GIT_CONFIG_SYSTEM=" + noGitConfig,
			"GIT_TERMINAL_PROMPT=0",
			"GIT_ASKPASS=",
			"GIT_EDITOR=:",
			"GIT_SEQUENCE_EDITOR=:",
			"GIT_PAGER=cat",
			"PAGER=cat",
			"GIT_OPTIONAL_LOCKS=0",
			"GIT_PROXY_COMMAND=",
		}
		return append(env, GitConfigEnv(0, gitConfigPins)...)
	}
	return nil
}

// GitConfigEnv returns the GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n entries for
// pairs (key, value), numbered from first, and GIT_CONFIG_COUNT set to
// first+len(pairs). Use first = the current GIT_CONFIG_COUNT to add pins
// after existing ones (git applies them in order, so later ones win).
func GitConfigEnv(first int, pairs [][2]string) []string {
	env := make([]string, 0, 2*len(pairs)+1)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(first+len(pairs)))
	for i, p := range pairs {
		n := strconv.Itoa(first + i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+p[0], "GIT_CONFIG_VALUE_"+n+"="+p[1])
	}
	return env
}

// Lookup returns the value of name in env (the last entry wins, as in Merge).
func Lookup(env []string, name string) (string, bool) {
	value, found := "", false
	for _, kv := range env {
		if n, v, ok := strings.Cut(kv, "="); ok && n == name {
			value, found = v, true
		}
	}
	return value, found
}

// Merge returns base with every entry of overrides applied in order: the last
// entry for a name wins, and each name appears once, in the position of its
// first appearance. Entries without "=" or with an empty name are dropped.
// The result is a new slice; base is not modified.
func Merge(base []string, overrides ...[]string) []string {
	var out []string
	index := map[string]int{}
	add := func(kv string) {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return
		}
		if i, seen := index[name]; seen {
			out[i] = kv
			return
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		add(kv)
	}
	for _, o := range overrides {
		for _, kv := range o {
			add(kv)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}
