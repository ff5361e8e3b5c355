// Package childenv decides which environment variables may reach a child
// process that a tool runs. The rule is an allow-list plus the tool file's own
// handler.env; this package says which names are never acceptable in either:
// variables that make a toolchain run other code (LD_PRELOAD, GOFLAGS,
// GIT_*, NODE_OPTIONS, …) and anything that looks like a secret.
//
// Build, Pinned and Merge assemble the environment itself: the host's
// allow-listed variables, then handler.env, then the values the host forces
// for a binary (git and go).
//
// It is shared by the host (validating tool files) and the exec plugin
// (building the environment), and imports neither.
package childenv

import (
	"regexp"
	"strings"
)

var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// exact names that let a variable run code or redirect a toolchain.
var codeRunning = map[string]string{
	"PATH":                      "the host builds PATH itself from absolute system directories",
	"NODE_OPTIONS":              "it makes node load arbitrary code",
	"BASH_ENV":                  "bash runs the file it names",
	"ENV":                       "sh runs the file it names",
	"GOFLAGS":                   "it adds flags such as -exec or -toolexec to every go command",
	"GOENV":                     "it points go at another configuration file",
	"GOTOOLCHAIN":               "the host pins GOTOOLCHAIN=local",
	"TAR_OPTIONS":               "it adds options such as --checkpoint-action=exec to tar",
	"RIPGREP_CONFIG_PATH":       "it adds options such as --pre to rg",
	"PYTHONPATH":                "it makes python import arbitrary code",
	"PYTHONSTARTUP":             "python runs the file it names",
	"PERL5OPT":                  "it adds options such as -M to perl",
	"PERL5LIB":                  "it makes perl load arbitrary code",
	"RUBYOPT":                   "it adds options such as -r to ruby",
	"RUBYLIB":                   "it makes ruby load arbitrary code",
	"IFS":                       "it changes how shells split words",
	"PROMPT_COMMAND":            "bash runs it",
	"CARGO_BUILD_RUSTC_WRAPPER": "it makes cargo run another program",
	"RUSTC_WRAPPER":             "it makes cargo run another program",
	"CC":                        "it makes build tools run another compiler",
	"CXX":                       "it makes build tools run another compiler",
	"EDITOR":                    "tools may run it",
	"VISUAL":                    "tools may run it",
	"PAGER":                     "tools may run it",
	"SSH_ASKPASS":               "ssh runs it",
	"HOME":                      "the host sets HOME; another HOME selects other configuration files",
}

// prefixes of names that let a variable run code or change a tool's config.
var codePrefixes = []struct{ prefix, why string }{
	{"LD_", "the dynamic loader obeys it (LD_PRELOAD, LD_LIBRARY_PATH)"},
	{"DYLD_", "the dynamic loader obeys it"},
	{"GIT_", "git reads configuration and programs from it; the host sets the safe GIT_* values itself"},
	{"NPM_CONFIG_", "it changes npm configuration, such as script-shell"},
	{"YARN_", "it changes yarn configuration"},
	{"CARGO_TARGET_", "it can name a runner program for cargo"},
	{"CARGO_HOME", "it points cargo at another configuration"},
	{"OPAIR_", "Opair's own settings are not for tools"},
}

// Forbidden reports why a variable name may never be passed to a child, or
// "" if it may. Names compare case-insensitively for the code-running rules
// (npm reads npm_config_* in any case).
func Forbidden(name string) string {
	if !validName.MatchString(name) {
		return "not a valid environment variable name (letters, digits and _, not starting with a digit)"
	}
	up := strings.ToUpper(name)
	if why, ok := codeRunning[up]; ok {
		return why
	}
	for _, p := range codePrefixes {
		if strings.HasPrefix(up, p.prefix) {
			return p.why
		}
	}
	if IsSecret(name) {
		return "it looks like a secret, and secrets never reach tools"
	}
	return ""
}

// IsSecret reports whether a variable name looks like it holds a credential:
// *_API_KEY, *_TOKEN, *_SECRET, *PASSWORD*, AWS_* and similar.
func IsSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, suffix := range []string{"_API_KEY", "APIKEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY", "_PRIVATE_KEY", "_CREDENTIALS", "_AUTH"} {
		if strings.HasSuffix(up, suffix) {
			return true
		}
	}
	for _, part := range []string{"PASSWORD", "PASSWD", "SECRET", "TOKEN"} {
		if strings.Contains(up, part) {
			return true
		}
	}
	for _, prefix := range []string{"AWS_", "AZURE_", "GOOGLE_APPLICATION_CREDENTIALS", "GCP_", "OPENAI_", "ANTHROPIC_", "GITHUB_", "GH_", "GITLAB_", "HF_", "HUGGING", "SSH_AUTH_SOCK", "GPG_"} {
		if strings.HasPrefix(up, prefix) {
			return true
		}
	}
	return false
}
