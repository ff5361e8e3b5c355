// Package config reads the user's configuration file and the project's
// tightening file (SPEC §6) into a Config. It decides nothing itself: the
// permission rules it reads are matched by package permission.
//
// Both files are parsed strictly, as tool files are: unknown fields (with the
// nearest valid field as a hint), keys that differ from a field only by case,
// duplicate keys, invalid UTF-8 and NUL characters are errors, reported all at
// once as file:line:col diagnostics. A malformed or unreadable file is an
// error, never an empty config (fail closed, SPEC §7.11).
//
// The project file <root>/.opair/config.json may only tighten: it holds
// permission rules that ask or deny, and exec limits no looser than the
// user's. A repository must not be able to grant itself permissions.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opair-dev/opair/host/permission"
	"github.com/opair-dev/opair/internal/diag"
	"github.com/opair-dev/opair/internal/strictjson"
)

// Limits of a config file, as for tool files (SPEC §7.1).
const (
	MaxFileBytes = 1 << 20
	MaxDepth     = 64
)

// Defaults and bounds of the exec section.
const (
	DefaultTimeout   = 10 * time.Minute
	MaxTimeout       = 24 * time.Hour
	DefaultOutputCap = 64 << 10
	MinOutputCap     = 1 << 10
	MaxOutputCap     = 64 << 20
)

// EnvVar names the variable that overrides the user config's path.
const EnvVar = "OPAIR_CONFIG"

// ProjectFile is the project config's path relative to the project root.
const ProjectFile = ".opair/config.json"

// Config is the configuration of a session: the user's file, tightened by
// the project's.
type Config struct {
	// Permissions are the user's rules, in file order (last match wins).
	Permissions []permission.Rule
	// ProjectPermissions are the project's rules: ask or deny only.
	ProjectPermissions []permission.Rule
	// Exec holds the effective exec limits: the defaults, the user's values,
	// then the project's where stricter.
	Exec Exec
	// Pins maps a plugin's name to the sha256 (64 lower-case hex digits) its
	// binary must have.
	Pins map[string]string
	// Models holds the roles of the user config's models section, resolved
	// against their providers, by role name; nil without a models section.
	// Use Role, which also falls back to the driver's role and to the
	// environment.
	Models map[string]Role
	// Loops are the user's adjustments of the loops (role, system prompt,
	// tool whitelist), by loop name; nil without a loops section.
	Loops map[string]Loop
	// MCPServers are the MCP servers whose tools become Opair tools, by
	// name; only the user's config may list them.
	MCPServers map[string]MCPServer
	// Files are the files that were read, user file first.
	Files []string
}

// Exec is the exec handler's limits.
type Exec struct {
	Timeout   time.Duration // a call is killed after this long
	OutputCap int           // bytes of output kept for the model
}

// Path returns the user config's path: $OPAIR_CONFIG, else
// <user config dir>/opair/config.json.
func Path() (string, error) {
	if p := os.Getenv(EnvVar); p != "" {
		return filepath.Abs(p)
	}
	return defaultPath()
}

func defaultPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config file: %w (set %s)", err, EnvVar)
	}
	return filepath.Join(dir, "opair", "config.json"), nil
}

// Load reads the user config at userPath and the project config under
// projectRoot, and combines them.
//
// A missing user file is an empty config only when it is the default path
// and OPAIR_CONFIG is not set; a file the user named that does not exist is
// an error. userPath "" reads no user file. projectRoot "" reads no project
// file; a missing project file is fine.
//
// Every problem of both files is returned at once, as Errors.
func Load(userPath, projectRoot string) (*Config, error) {
	l := &loader{}
	var user, project *parsed
	if userPath != "" {
		optional := false
		if os.Getenv(EnvVar) == "" {
			if def, err := defaultPath(); err == nil && filepath.Clean(userPath) == def {
				optional = true
			}
		}
		user = l.file(userPath, false, optional)
	}
	if projectRoot != "" {
		project = l.file(filepath.Join(projectRoot, filepath.FromSlash(ProjectFile)), true, true)
	}
	cfg := l.merge(user, project)
	if len(l.diags) > 0 {
		return nil, l.diags
	}
	return cfg, nil
}

// loader reads the files of one Load and gathers their diagnostics.
type loader struct {
	diags    Errors
	files    []string
	home     string
	homeErr  error
	homeDone bool
}

// homeDir returns the home directory, looked up once, when a pattern needs it.
func (l *loader) homeDir() (string, error) {
	if !l.homeDone {
		l.homeDone = true
		l.home, l.homeErr = os.UserHomeDir()
		if l.homeErr == nil && !filepath.IsAbs(l.home) {
			l.homeErr = fmt.Errorf("home directory %q is not absolute", l.home)
		}
	}
	return l.home, l.homeErr
}

// display abbreviates a path under the home directory as ~/…, for rule
// sources.
func display(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return path
	}
	if rel, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
		return "~/" + filepath.ToSlash(rel)
	}
	return path
}

// file reads and checks one file. It returns nil when the file is missing and
// optional, or when it could not be read or parsed at all.
func (l *loader) file(path string, project, optional bool) *parsed {
	data, err := strictjson.ReadFile(os.DirFS(filepath.Dir(path)), filepath.Base(path), MaxFileBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if optional {
				return nil
			}
			l.diags = append(l.diags, Diagnostic{File: path, Msg: "config file does not exist",
				Hint: fmt.Sprintf("%s names it; create the file or unset %s", EnvVar, EnvVar)})
			return nil
		}
		l.diags = append(l.diags, Diagnostic{File: path, Msg: err.Error(), Hint: "a config that cannot be read is an error, never an empty config: fix or remove the file"})
		return nil
	}
	l.files = append(l.files, path)
	c := &checker{l: l, file: path, source: display(path), project: project, src: data, lines: strictjson.NewLines(data)}
	return c.check()
}

// merge combines the user's and the project's sections. A new section adds
// its line here.
func (l *loader) merge(user, project *parsed) *Config {
	if user == nil {
		user = &parsed{}
	}
	if project == nil {
		project = &parsed{}
	}
	cfg := &Config{
		Permissions:        user.permissions,
		ProjectPermissions: project.permissions,
		Exec:               Exec{Timeout: DefaultTimeout, OutputCap: DefaultOutputCap},
		Pins:               user.pins,
		Models:             user.models,
		Loops:              user.loops,
		MCPServers:         user.mcpServers,
		Files:              l.files,
	}
	timeoutFrom, capFrom := "default", "default"
	if user.exec.timeout.set {
		cfg.Exec.Timeout, timeoutFrom = user.exec.timeout.v, "user config's"
	}
	if user.exec.outputCap.set {
		cfg.Exec.OutputCap, capFrom = user.exec.outputCap.v, "user config's"
	}
	if t := project.exec.timeout; t.set {
		if t.v > cfg.Exec.Timeout {
			l.diags = append(l.diags, t.tighten(fmt.Sprintf("exec.timeout %s is longer than the %s %s", t.v, timeoutFrom, cfg.Exec.Timeout),
				fmt.Sprintf("a project config may only shorten the timeout: use at most %s, or raise it in your user config", cfg.Exec.Timeout)))
		} else {
			cfg.Exec.Timeout = t.v
		}
	}
	if c := project.exec.outputCap; c.set {
		if c.v > cfg.Exec.OutputCap {
			l.diags = append(l.diags, c.tighten(fmt.Sprintf("exec.outputCap %d is larger than the %s %d", c.v, capFrom, cfg.Exec.OutputCap),
				fmt.Sprintf("a project config may only lower the output cap: use at most %d, or raise it in your user config", cfg.Exec.OutputCap)))
		} else {
			cfg.Exec.OutputCap = c.v
		}
	}
	if cfg.Pins == nil {
		cfg.Pins = map[string]string{}
	}
	return cfg
}

// Diagnostic is one problem in one config file. Line is 0 for problems of
// the file as a whole (missing, unreadable).
type Diagnostic = diag.Diagnostic

// Errors is every diagnostic of a Load; it is returned as the error.
type Errors = diag.Errors
