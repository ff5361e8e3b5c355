// Package files implements the ten builtin file handler types served by
// opair-plugin-builtin (SPEC §4.2): listDirectory, readFile, readFileLines,
// readFileBytes, findInProject, createFile, editFile, deleteFile, chmodFile
// and replaceInProject.
//
// Every path goes through a pathclass.Resolver built for the call: it is
// classified by its resolved target (project, project-dot, project-ignore,
// external), and the tool's scope must grant that class. Project paths are
// opened only through the resolver's os.Root, and every opened file is
// checked against what was resolved (os.SameFile), so a link swapped in
// between the check and the open is caught. No handler writes a protected
// path (.git/, .opair/, …) whatever its scope, writes through a dangling
// link, or reads a device, a FIFO or a file with several hard links.
//
// Errors are split the sdk way: what the model should correct (a bad path,
// an oldString that does not match, a refused class) is a result with
// IsError, made by sdk.Errorf; what is broken (an I/O error, a tool file the
// host should not have accepted) is a Go error.
//
// Writers honour the call's DryRun (compute the change, return its unified
// diff, touch nothing) and an "expectSha256" argument the host adds after
// the human approved a diff: the write happens only while each file still
// holds the content the diff was computed from.
package files

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/opair-dev/opair/internal/gitignore"
	"github.com/opair-dev/opair/internal/pathclass"
	"github.com/opair-dev/opair/sdk"
)

// handlerBlock is the part of a tool file's handler block these handlers read.
type handlerBlock struct {
	Type           string `json:"type"`
	Scope          string `json:"scope"`
	IncludeHidden  bool   `json:"includeHidden"`
	IncludeIgnored bool   `json:"includeIgnored"`
}

// typeInfo describes one handler type.
type typeInfo struct {
	description string
	scopes      []pathclass.Class // nil: takes no scope (findInProject)
	run         func(e *env) (*sdk.Result, error)
}

var (
	readScopes    = []pathclass.Class{pathclass.Project, pathclass.ProjectDot, pathclass.ProjectIgnore, pathclass.External}
	projectScopes = []pathclass.Class{pathclass.Project, pathclass.ProjectDot, pathclass.ProjectIgnore}
)

var types = map[string]typeInfo{
	"listDirectory":    {"Lists one directory: each entry's kind and size.", []pathclass.Class{pathclass.Project, pathclass.External}, listDirectory},
	"readFile":         {"Reads a whole text file.", readScopes, readFile},
	"readFileLines":    {"Reads a range of lines of a text file, numbered.", readScopes, readFileLines},
	"readFileBytes":    {"Reads bytes of a file; images come back as image content.", readScopes, readFileBytes},
	"findInProject":    {"Searches the project's files by regular expression or literal text, or lists files by glob.", nil, findInProject},
	"createFile":       {"Creates a new file, with its parent directories.", projectScopes, createFile},
	"editFile":         {"Replaces an exact piece of text in a file.", projectScopes, editFile},
	"deleteFile":       {"Deletes one file.", projectScopes, deleteFile},
	"chmodFile":        {"Sets a file's permission bits.", projectScopes, chmodFile},
	"replaceInProject": {"Replaces a pattern across the project's files, atomically per file.", []pathclass.Class{pathclass.Project}, replaceInProject},
}

// Types returns the handler types for sdk.Plugin.Types.
func Types() map[string]sdk.Type {
	out := make(map[string]sdk.Type, len(types))
	for name, ti := range types {
		out[name] = sdk.Type{Description: ti.description, Handler: handler(name), Validate: validate}
	}
	return out
}

// validate re-checks a handler block's scope when the host loads a tool
// file (the host checks it too; the plugin is the authority on its types).
func validate(_ context.Context, v *sdk.Validation) []sdk.Diagnostic {
	var h handlerBlock
	if err := json.Unmarshal(v.Handler, &h); err != nil {
		return []sdk.Diagnostic{{Summary: "decoding the handler block: " + err.Error()}}
	}
	if _, err := scopeFor(v.Type, h); err != nil {
		return []sdk.Diagnostic{{Summary: err.Error(), Pointer: "/scope"}}
	}
	return nil
}

// scopeFor checks the scope of a handler block against its type.
func scopeFor(typ string, h handlerBlock) (pathclass.Class, error) {
	ti, ok := types[typ]
	if !ok {
		return 0, fmt.Errorf("opair-plugin-builtin does not serve handler type %q", typ)
	}
	if ti.scopes == nil {
		if h.Scope != "" {
			return 0, fmt.Errorf("%s takes no scope (it uses includeHidden and includeIgnored)", typ)
		}
		return 0, nil
	}
	names := make([]string, len(ti.scopes))
	for i, c := range ti.scopes {
		names[i] = c.String()
	}
	if h.Scope == "" {
		return 0, fmt.Errorf("%s requires a scope: one of %s", typ, strings.Join(names, ", "))
	}
	c, err := pathclass.ParseScope(h.Scope)
	if err != nil || !slices.Contains(ti.scopes, c) {
		return 0, fmt.Errorf("scope %q is not allowed for %s: use one of %s", h.Scope, typ, strings.Join(names, ", "))
	}
	return c, nil
}

// env is one call: its arguments, its scope, and the project's resolver.
type env struct {
	ctx   context.Context
	call  *sdk.Call
	prog  sdk.Progress
	typ   string
	h     handlerBlock
	scope pathclass.Class // 0 for findInProject
	res   *pathclass.Resolver
	ign   *gitignore.Matcher
}

func handler(typ string) sdk.Handler {
	return sdk.HandlerFunc(func(ctx context.Context, call *sdk.Call, p sdk.Progress) (*sdk.Result, error) {
		e, err := newEnv(ctx, typ, call, p)
		if err != nil {
			return nil, err
		}
		defer e.close()
		res, err := types[typ].run(e)
		if res != nil {
			if res.Summary == "" {
				res.Summary = oneLine(text(res), 120)
			}
			sanitize(res)
		}
		return res, err
	})
}

func newEnv(ctx context.Context, typ string, call *sdk.Call, p sdk.Progress) (*env, error) {
	var h handlerBlock
	if err := json.Unmarshal(call.Handler, &h); err != nil {
		return nil, fmt.Errorf("decoding the handler block of %s: %w", call.Tool, err)
	}
	scope, err := scopeFor(typ, h)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", call.Tool, err)
	}
	if call.ProjectRoot == "" || !filepath.IsAbs(call.ProjectRoot) {
		return nil, fmt.Errorf("tool %s: the host sent no absolute project root (%q)", call.Tool, call.ProjectRoot)
	}
	ign := gitignore.New(call.ProjectRoot, gitignore.Options{})
	res, err := pathclass.New(call.ProjectRoot, pathclass.Options{Ignore: ign, Protected: extraProtected(call)})
	if err != nil {
		ign.Close()
		return nil, fmt.Errorf("opening the project root %s: %w", call.ProjectRoot, err)
	}
	if p == nil {
		p = nopProgress{}
	}
	return &env{ctx: ctx, call: call, prog: p, typ: typ, h: h, scope: scope, res: res, ign: ign}, nil
}

func (e *env) close() {
	e.res.Close()
	e.ign.Close()
}

// extraProtected are paths no builtin writes beyond the ones pathclass
// always protects: Opair's own configuration directory, which holds the
// config file and the tools directory by default, and their overrides when
// the plugin sees them, and the paths the host names (its own overrides,
// which the plugin's filtered environment does not carry).
func extraProtected(call *sdk.Call) []string {
	out := append([]string(nil), call.ProtectedPaths...)
	if dir, err := os.UserConfigDir(); err == nil {
		out = append(out, filepath.Join(dir, "opair"))
	}
	for _, v := range []string{"OPAIR_TOOLS_DIR", "OPAIR_CONFIG", "OPAIR_PLUGINS_DIR"} {
		if p := os.Getenv(v); p != "" && filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	return out
}

// decode decodes the call's arguments; a malformed argument is the model's
// to correct.
func (e *env) decode(v any) *sdk.Result {
	if err := json.Unmarshal(e.call.Args, v); err != nil {
		return sdk.Errorf("invalid arguments for %s: %v", e.call.Tool, err)
	}
	return nil
}

type nopProgress struct{}

func (nopProgress) Status(string) error { return nil }
func (nopProgress) Output([]byte) error { return nil }

// oneLine is the first line of s, cut to max characters: the summary of a
// refusal.
func oneLine(s string, max int) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return s
}

// sanitize makes every text of a result valid UTF-8 (the protocol carries
// strings), replacing invalid bytes with U+FFFD.
func sanitize(r *sdk.Result) {
	for i := range r.Content {
		r.Content[i].Text = strings.ToValidUTF8(r.Content[i].Text, "\uFFFD")
	}
	r.Summary = strings.ToValidUTF8(r.Summary, "\uFFFD")
}
