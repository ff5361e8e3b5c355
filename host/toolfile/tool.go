// Package toolfile turns tool files into validated Tools.
//
// A tool file is one JSON document per tool (SPEC §2). This package parses it
// strictly (duplicate keys, case-folded keys, invalid UTF-8 and NUL bytes are
// errors), checks every rule of SPEC §2.1 and §7.1, derives the read and write
// categories of builtin handlers, and reports every problem of every file at
// once as file:line:col diagnostics with a hint.
//
// It decides nothing about permissions, runs nothing and never touches the
// network; which handler types exist beyond exec and the builtin types is
// asked of a Catalog, which the plugin manager fills.
package toolfile

import (
	"encoding/json"

	"github.com/opair-dev/opair/internal/diag"
)

// Category is a read or write permission category (SPEC §3.2).
type Category string

// The categories, in increasing order of reach.
const (
	None          Category = "none"
	Artifacts     Category = "artifacts" // writes only: build outputs, caches, test binaries
	Project       Category = "project"
	ProjectIgnore Category = "project-ignore"
	ProjectDot    Category = "project-dot"
	External      Category = "external"
)

// ReadCategories and WriteCategories list the valid values, least reach first.
var (
	ReadCategories  = []Category{None, Project, ProjectIgnore, ProjectDot, External}
	WriteCategories = []Category{None, Artifacts, Project, ProjectIgnore, ProjectDot, External}
)

// Rank orders categories by reach: none < artifacts < project <
// project-ignore < project-dot < external. Unknown categories rank highest,
// so that anything comparing ranks fails closed.
func (c Category) Rank() int {
	for i, w := range WriteCategories {
		if w == c {
			return i
		}
	}
	return len(WriteCategories)
}

// Max returns the category with the greater reach.
func Max(a, b Category) Category {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Scope is where a builtin handler's paths may resolve (SPEC §3.1).
type Scope string

// The scopes.
const (
	ScopeProject       Scope = "project"
	ScopeProjectDot    Scope = "project-dot"
	ScopeProjectIgnore Scope = "project-ignore"
	ScopeExternal      Scope = "external"
)

// Kind says who serves a tool.
type Kind string

// The kinds of tools.
const (
	KindExec        Kind = "exec"        // handler type exec, served by opair-plugin-exec
	KindBuiltin     Kind = "builtin"     // one of the ten file handlers, served by opair-plugin-builtin
	KindPlugin      Kind = "plugin"      // a handler type served by another plugin
	KindHandlerless Kind = "handlerless" // no handler block: served under its name by the host or a plugin
	KindMCP         Kind = "mcp"         // a tool of an MCP server the config lists (no tool file)
)

// Tool is a validated tool file.
type Tool struct {
	File        string          // path of the tool file
	Name        string          // schema.function.name
	Description string          // schema.function.description
	Parameters  json.RawMessage // schema.function.parameters, as written
	Strict      *bool           // schema.function.strict, if present
	Schema      json.RawMessage // the whole schema object, exactly as sent to the model

	Kind        Kind
	Handler     *Handler        // nil for handler-less tools
	HandlerJSON json.RawMessage // the handler block as written, for the plugin
	Server      string          // who serves it: a plugin name, or "host"

	Reads, Writes   Category
	Untrusted       bool   // exec: "untrusted", or a bin that runs other programs
	UntrustedReason string // why, for humans
	Internal        bool
	SlashCommand    string
	RequiresBin     string

	slashLine, slashCol int // where slashCommand is written, for clashes
}

// Handler is a tool's handler block.
type Handler struct {
	Type           string
	Bin            string
	Subcommand     []string
	Env            map[string]string
	AllowArgs      []string
	DenyArgs       []string
	Scope          Scope
	IncludeHidden  bool
	IncludeIgnored bool
	Summary        string
	Config         json.RawMessage // third-party handler types only, verbatim
}

// Bin returns the binary the tool needs on PATH: handler.bin or requiresBin.
func (t *Tool) Bin() string {
	if t.Handler != nil && t.Handler.Bin != "" {
		return t.Handler.Bin
	}
	return t.RequiresBin
}

// Command returns the fixed part of an exec tool's command line.
func (t *Tool) Command() []string {
	if t.Handler == nil || t.Kind != KindExec {
		return nil
	}
	return append([]string{t.Handler.Bin}, t.Handler.Subcommand...)
}

// Type returns the handler type, or "" for a handler-less tool.
func (t *Tool) Type() string {
	if t.Handler == nil {
		return ""
	}
	return t.Handler.Type
}

// Diagnostic is one problem in one tool file.
type Diagnostic = diag.Diagnostic

// Errors is every diagnostic of a load; it is returned as the error of a
// load that found any.
type Errors = diag.Errors
