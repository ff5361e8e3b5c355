package childenv

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	host := []string{
		"SOMETHING_API_KEY=sk-1", "GITHUB_TOKEN=ghp", "OPENAI_API_KEY=x", "AWS_PROFILE=p", "DB_PASSWORD=pw",
		"LD_PRELOAD=/tmp/evil.so", "GOFLAGS=-toolexec=/tmp/x", "GIT_DIR=/tmp/other", "GIT_CONFIG_PARAMETERS='core.pager'='x'",
		"NODE_OPTIONS=--require /tmp/x.js", "TAR_OPTIONS=--checkpoint-action=exec=x", "RIPGREP_CONFIG_PATH=/tmp/rg",
		"npm_config_script_shell=/tmp/sh", "EDITOR=vim", "PAGER=less", "BASH_ENV=/tmp/x", "SHELL=/bin/bash",
		"HTTPS_PROXY=http://u:p@proxy", "XDG_CONFIG_HOME=/home/u/.config", "CARGO_HOME=/home/u/.cargo", "GOENV=/tmp/env",
		"GOTOOLCHAIN=auto", "OPAIR_CONFIG=/x", "LC_TOKEN=x", "LC_BAD-NAME=x", "NOEQUALS", "=weird",
		"PATH=/usr/local/bin::.:bin:./node_modules/.bin:/usr/bin:/usr/local/bin:~/bin",
		"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "LANGUAGE=en", "HOME=/home/u", "USER=u", "TERM=xterm",
		"GOPATH=/home/u/go:relative/go", "GOCACHE=cache", "GOMODCACHE=/home/u/go/pkg/mod", "TMPDIR=/tmp",
		"CGO_ENABLED=0", "RUST_BACKTRACE=1", "NO_COLOR=1", "XDG_CACHE_HOME=/home/u/.cache",
	}
	env := Build(host)
	want := []string{
		"CGO_ENABLED=0", "GOMODCACHE=/home/u/go/pkg/mod", "GOPATH=/home/u/go", "HOME=/home/u", "LANG=C.UTF-8",
		"LANGUAGE=en", "LC_ALL=C.UTF-8", "NO_COLOR=1", "PATH=/usr/local/bin:/usr/bin", "RUST_BACKTRACE=1",
		"TERM=xterm", "TMPDIR=/tmp", "USER=u", "XDG_CACHE_HOME=/home/u/.cache",
	}
	if !slices.Equal(env, want) {
		t.Fatalf("Build:\n got %q\nwant %q", env, want)
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name != "PATH" && name != "HOME" && Forbidden(name) != "" {
			t.Errorf("Build passed %s, which Forbidden flags: %s", name, Forbidden(name))
		}
	}
}

func TestBuildPathAndHome(t *testing.T) {
	cases := []struct {
		host []string
		want []string
	}{
		{[]string{"PATH=.:bin:"}, []string{}},                               // nothing absolute: no PATH at all
		{[]string{"PATH=/bin", "PATH=/usr/bin"}, []string{"PATH=/usr/bin"}}, // last wins, as in os/exec
		{[]string{"HOME=/h", "HOME=relative"}, []string{}},                  // the host's last word is bad: dropped
		{[]string{"HOME="}, []string{}},
		{[]string{"TMPDIR=tmp"}, []string{}},
		{[]string{"GOROOT=./go"}, []string{}},
	}
	for _, c := range cases {
		got := Build(c.host)
		if !slices.Equal(got, c.want) {
			t.Errorf("Build(%q) = %q, want %q", c.host, got, c.want)
		}
	}
}

// Every name Build may pass must be acceptable to Forbidden (apart from the
// host-owned PATH and HOME), so the two lists cannot drift apart.
func TestAllowListNotForbidden(t *testing.T) {
	for name := range allowed {
		if name == "PATH" || name == "HOME" {
			continue
		}
		if why := Forbidden(name); why != "" {
			t.Errorf("allow-listed %s is forbidden: %s", name, why)
		}
	}
}

func TestPinned(t *testing.T) {
	if p := Pinned("/usr/bin/rg"); p != nil {
		t.Errorf("rg pinned %q", p)
	}
	goPins := Pinned("/usr/local/go/bin/go")
	for _, kv := range []string{"GOTOOLCHAIN=local", "GOFLAGS=", "GOENV=off"} {
		if !slices.Contains(goPins, kv) {
			t.Errorf("go pins lack %s: %q", kv, goPins)
		}
	}
	git := Pinned("git")
	for _, kv := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + noGitConfig, "GIT_CONFIG_SYSTEM=" + noGitConfig,
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_OPTIONAL_LOCKS=0"} {
		if !slices.Contains(git, kv) {
			t.Errorf("git pins lack %s", kv)
		}
	}
	count, _ := Lookup(git, "GIT_CONFIG_COUNT")
	if count != "16" || len(gitConfigPins) != 16 {
		t.Fatalf("GIT_CONFIG_COUNT=%s for %d pins", count, len(gitConfigPins))
	}
	keys := map[string]string{}
	for i := range gitConfigPins {
		k, ok1 := Lookup(git, "GIT_CONFIG_KEY_"+strconv.Itoa(i))
		v, ok2 := Lookup(git, "GIT_CONFIG_VALUE_"+strconv.Itoa(i))
		if !ok1 || !ok2 {
			t.Fatalf("pin %d missing", i)
		}
		keys[k] = v
	}
	for k, v := range map[string]string{"core.fsmonitor": "false", "core.hooksPath": "/dev/null", "protocol.ext.allow": "never",
		"core.pager": "cat", "diff.external": "", "credential.helper": "", "log.showSignature": "false"} {
		if got, ok := keys[k]; !ok || got != v {
			t.Errorf("pin %s = %q (present %v), want %q", k, got, ok, v)
		}
	}
}

func TestMerge(t *testing.T) {
	base := []string{"A=1", "B=2", "A=3", "bad", "=x"}
	got := Merge(base, []string{"B=4", "C=5"}, []string{"A=6", "C="})
	want := []string{"A=6", "B=4", "C="}
	if !slices.Equal(got, want) {
		t.Fatalf("Merge = %q, want %q", got, want)
	}
	if !slices.Equal(base, []string{"A=1", "B=2", "A=3", "bad", "=x"}) {
		t.Fatalf("Merge modified base: %q", base)
	}
	if got := Merge(nil); got == nil || len(got) != 0 {
		t.Fatalf("Merge(nil) = %#v, want an empty, non-nil slice", got)
	}
}

func TestGitConfigEnv(t *testing.T) {
	got := GitConfigEnv(3, [][2]string{{"a.b", "1"}, {"c.d.e", ""}})
	want := []string{"GIT_CONFIG_COUNT=5", "GIT_CONFIG_KEY_3=a.b", "GIT_CONFIG_VALUE_3=1", "GIT_CONFIG_KEY_4=c.d.e", "GIT_CONFIG_VALUE_4="}
	if !slices.Equal(got, want) {
		t.Fatalf("GitConfigEnv = %q, want %q", got, want)
	}
}
