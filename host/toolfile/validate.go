package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/opair-dev/opair/internal/binpath"
	"github.com/opair-dev/opair/internal/childenv"
	"github.com/opair-dev/opair/internal/diag"
	"github.com/opair-dev/opair/internal/strictjson"
)

// Limits of a tool file (SPEC §7.1).
const (
	MaxFileBytes = 1 << 20
	MaxDepth     = 64
	maxArgs      = 1024
)

var (
	topKeys      = []string{"schema", "handler", "reads", "writes", "exec", "internal", "slashCommand", "requiresBin"}
	schemaKeys   = []string{"type", "function"}
	functionKeys = []string{"name", "description", "parameters", "strict"}
	handlerKeys  = []string{"type", "bin", "subcommand", "env", "allowArgs", "denyArgs", "scope", "includeHidden", "includeIgnored", "summary", "config"}

	nameRE  = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	slashRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	nounRE  = regexp.MustCompile(`^[a-z][a-z-]*$`)

	summaries = []string{"commandEcho", "gitDiff", "gitLog", "gitStatus", "grep"}
)

// Parse validates one tool file. name is the file's path (its base name is
// checked against the tool name); data is its content. It returns the tool,
// or nil and every diagnostic found. Rules that span files (unique slash
// commands) are checked by Load.
func Parse(name string, data []byte, cat Catalog) (*Tool, Errors) {
	c := &checker{file: name, src: data, lines: strictjson.NewLines(data), cat: cat}
	t := c.tool()
	if len(c.diags) > 0 {
		sort.SliceStable(c.diags, func(i, j int) bool {
			a, b := c.diags[i], c.diags[j]
			return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
		})
		return nil, c.diags
	}
	return t, nil
}

type checker struct {
	file  string
	src   []byte
	lines *strictjson.Lines
	cat   Catalog
	diags Errors
}

func (c *checker) errAt(off int, hint, format string, args ...any) {
	line, col := c.lines.Position(off)
	c.diags = append(c.diags, Diagnostic{File: c.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// keys checks an object's keys against the fields it may hold and reports
// case variants and unknown keys, naming the nearest valid field.
func (c *checker) keys(obj *strictjson.Node, where string, allowed []string) {
	for _, m := range obj.Members {
		if slices.Contains(allowed, m.Key) {
			continue
		}
		if k := diag.CaseVariant(m.Key, allowed); k != "" {
			c.errAt(m.KeyStart, fmt.Sprintf("write it %q; keys are case-sensitive, and a case variant could silently override %q", k, k),
				"key %q in %s differs from the field %q only by case", m.Key, where, k)
			continue
		}
		hint := "valid fields are: " + strings.Join(allowed, ", ")
		if near := diag.Nearest(m.Key, allowed); near != "" {
			hint = fmt.Sprintf("did you mean %q? (%s)", near, hint)
		}
		c.errAt(m.KeyStart, hint, "unknown field %q in %s", m.Key, where)
	}
}

// field returns an object member's value if its kind is right, reporting a
// wrong kind. A missing member returns nil silently.
func (c *checker) field(obj *strictjson.Node, key, where string, kind strictjson.Kind) *strictjson.Node {
	m := obj.Member(key)
	if m == nil {
		return nil
	}
	if m.Value.Kind != kind {
		c.errAt(m.Value.Start, fmt.Sprintf("write %s as a JSON %s", key, kind), "%s.%s must be a %s, not a %s", where, key, kind, m.Value.Kind)
		return nil
	}
	return m.Value
}

func (c *checker) str(obj *strictjson.Node, key, where string) (string, *strictjson.Node) {
	n := c.field(obj, key, where, strictjson.String)
	if n == nil {
		return "", nil
	}
	return n.Str, n
}

func (c *checker) boolean(obj *strictjson.Node, key, where string) bool {
	n := c.field(obj, key, where, strictjson.Bool)
	return n != nil && n.Bool
}

func (c *checker) tool() *Tool {
	root, perrs := strictjson.Parse(c.src, strictjson.Limits{MaxBytes: MaxFileBytes, MaxDepth: MaxDepth})
	for _, e := range perrs {
		hint := e.Hint
		if e.Related >= 0 {
			l, col := c.lines.Position(e.Related)
			e.Msg += fmt.Sprintf(" (first at line %d, column %d)", l, col)
		}
		c.errAt(e.Offset, hint, "%s", e.Msg)
	}
	if root == nil {
		return nil
	}
	if root.Kind != strictjson.Object {
		c.errAt(root.Start, "a tool file is one JSON object with a \"schema\" field", "the file holds a %s, not an object", root.Kind)
		return nil
	}
	c.keys(root, "the tool", topKeys)
	t := &Tool{File: c.file}

	c.schema(root, t)
	c.topFields(root, t)

	hm := root.Member("handler")
	switch {
	case hm == nil:
		c.handlerless(root, t)
	case hm.Value.Kind != strictjson.Object:
		c.errAt(hm.Value.Start, "handler is an object such as {\"type\": \"exec\", \"bin\": \"go\"}", "handler must be an object, not a %s", hm.Value.Kind)
	default:
		c.handler(root, hm, t)
	}
	return t
}

func (c *checker) schema(root *strictjson.Node, t *Tool) {
	sm := root.Member("schema")
	if sm == nil {
		c.errAt(root.Start, `add "schema": {"type": "function", "function": {"name": …, "description": …, "parameters": {"type": "object", …}}}`, "missing required field \"schema\"")
		return
	}
	s := c.field(root, "schema", "the tool", strictjson.Object)
	if s == nil {
		return
	}
	t.Schema = json.RawMessage(c.src[s.Start:s.End])
	c.keys(s, "schema", schemaKeys)
	if typ, n := c.str(s, "type", "schema"); n == nil && s.Member("type") == nil {
		c.errAt(s.Start, `add "type": "function"`, "schema is missing \"type\"")
	} else if n != nil && typ != "function" {
		c.errAt(n.Start, `write "type": "function"`, "schema.type must be \"function\", not %q", typ)
	}
	if s.Member("function") == nil {
		c.errAt(s.Start, `add "function": {"name": …, "description": …, "parameters": {"type": "object"}}`, "schema is missing \"function\"")
		return
	}
	f := c.field(s, "function", "schema", strictjson.Object)
	if f == nil {
		return
	}
	c.keys(f, "schema.function", functionKeys)

	name, nn := c.str(f, "name", "schema.function")
	switch {
	case f.Member("name") == nil:
		c.errAt(f.Start, `add "name": "yourToolName" (lowerCamelCase)`, "schema.function is missing \"name\"")
	case nn != nil && !nameRE.MatchString(name):
		c.errAt(nn.Start, "start with a lower-case letter and use only letters and digits, e.g. \"readProjectFile\"", "tool name %q does not match ^[a-z][a-zA-Z0-9]*$", name)
	case nn != nil:
		t.Name = name
		if want, got := FileName(name), filepath.Base(c.file); got != want {
			c.errAt(nn.Start, fmt.Sprintf("rename the file to %s (or change the name to match the file)", want), "file name %s does not match the tool name %q, which lives in %s", got, name, want)
		}
	}

	desc, dn := c.str(f, "description", "schema.function")
	switch {
	case f.Member("description") == nil:
		c.errAt(f.Start, "add a description that tells the model what the tool does and when to use it", "schema.function is missing \"description\"")
	case dn != nil && strings.TrimSpace(desc) == "":
		c.errAt(dn.Start, "tell the model what the tool does and when to use it", "schema.function.description is empty")
	default:
		t.Description = desc
	}

	if f.Member("strict") != nil {
		if n := c.field(f, "strict", "schema.function", strictjson.Bool); n != nil {
			v := n.Bool
			t.Strict = &v
		}
	}

	if f.Member("parameters") == nil {
		c.errAt(f.Start, `add "parameters": {"type": "object", "properties": {}}`, "schema.function is missing \"parameters\"")
		return
	}
	p := c.field(f, "parameters", "schema.function", strictjson.Object)
	if p == nil {
		return
	}
	t.Parameters = json.RawMessage(c.src[p.Start:p.End])
	if tn := p.Member("type"); tn == nil || tn.Value.Kind != strictjson.String || tn.Value.Str != "object" {
		at := p.Start
		if tn != nil {
			at = tn.Value.Start
		}
		c.errAt(at, `write "type": "object" at the top of parameters; arguments are passed as one object`, "parameters must have top-level \"type\": \"object\"")
	}
	c.compileParameters(p)
}

// compileParameters compiles parameters as a draft 2020-12 JSON Schema.
func (c *checker) compileParameters(p *strictjson.Node) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(c.src[p.Start:p.End]))
	if err != nil {
		c.errAt(p.Start, "parameters must be valid JSON", "parameters: %v", err)
		return
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(noLoader{})
	const url = "opair:///parameters.json"
	if err := comp.AddResource(url, doc); err != nil {
		c.errAt(p.Start, "fix the JSON Schema", "parameters is not a valid JSON Schema: %v", err)
		return
	}
	_, err = comp.Compile(url)
	if err == nil {
		return
	}
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		c.errAt(p.Start, "parameters must be a self-contained draft 2020-12 JSON Schema", "parameters is not a valid JSON Schema: %s", msg)
		return
	}
	// Report each failing place of the schema at its own line, as the
	// metaschema sees it.
	printer := message.NewPrinter(language.English)
	var order []string
	msgs := map[string][]string{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := strings.Join(e.InstanceLocation, "/")
			if _, ok := msgs[loc]; !ok {
				order = append(order, loc)
			}
			msgs[loc] = append(msgs[loc], e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(ve)
	for _, loc := range order {
		n := p
		var path []string
		if loc != "" {
			path = strings.Split(loc, "/")
		}
		for _, k := range path {
			next := n.Get(k)
			if next == nil && n.Kind == strictjson.Array {
				if i, err := strconv.Atoi(k); err == nil && i < len(n.Elems) {
					next = n.Elems[i]
				}
			}
			if next == nil {
				break
			}
			n = next
		}
		where := "parameters"
		if loc != "" {
			where += "/" + loc
		}
		c.errAt(n.Start, "parameters must be a valid draft 2020-12 JSON Schema", "%s is not a valid JSON Schema: %s", where, strings.Join(msgs[loc], ", or "))
	}
}

// noLoader refuses remote and file references: a tool file's schema must be
// self-contained, and loading must never touch the network or the disk.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed; inline the schema", url)
}

func (c *checker) topFields(root *strictjson.Node, t *Tool) {
	t.Internal = c.boolean(root, "internal", "the tool")
	if s, n := c.str(root, "slashCommand", "the tool"); n != nil {
		if !slashRE.MatchString(s) {
			c.errAt(n.Start, "use lower-case letters, digits and dashes, starting with a letter, e.g. \"review-diff\"", "slashCommand %q does not match ^[a-z][a-z0-9-]*$", s)
		} else {
			t.SlashCommand = s
			t.slashLine, t.slashCol = c.lines.Position(n.Start)
		}
	}
	if s, n := c.str(root, "requiresBin", "the tool"); n != nil {
		if why := binpath.CheckName(s); why != "" {
			c.errAt(n.Start, "name a binary looked up on PATH, e.g. \"git\", or an absolute path", "requiresBin %q %s", s, why)
		} else {
			t.RequiresBin = s
		}
	}
}

// categories reads the declared reads/writes, checking their values.
func (c *checker) categories(root *strictjson.Node) (reads, writes Category, rn, wn *strictjson.Node) {
	if s, n := c.str(root, "reads", "the tool"); n != nil {
		if !slices.Contains(ReadCategories, Category(s)) {
			c.errAt(n.Start, "reads is one of: "+joinCats(ReadCategories), "unknown read category %q", s)
		} else {
			reads, rn = Category(s), n
		}
	}
	if s, n := c.str(root, "writes", "the tool"); n != nil {
		if !slices.Contains(WriteCategories, Category(s)) {
			c.errAt(n.Start, "writes is one of: "+joinCats(WriteCategories), "unknown write category %q", s)
		} else {
			writes, wn = Category(s), n
		}
	}
	return
}

func joinCats(cs []Category) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// declaredCategories applies the defaults for tools that declare their own
// categories: reads project, writes none.
func (c *checker) declaredCategories(root *strictjson.Node, t *Tool) {
	reads, writes, _, _ := c.categories(root)
	if reads == "" {
		reads = Project
	}
	if writes == "" {
		writes = None
	}
	t.Reads, t.Writes = reads, writes
}

func (c *checker) handlerless(root *strictjson.Node, t *Tool) {
	t.Kind = KindHandlerless
	c.declaredCategories(root, t)
	c.execField(root, t)
	if t.Name == "" {
		return
	}
	server, ok := c.cat.HandlerlessTool(t.Name)
	if !ok {
		_, tools := c.cat.Names()
		c.errAt(root.Start, fmt.Sprintf("add a handler block (e.g. {\"type\": \"exec\", \"bin\": …}); tools without one must be served under their own name: %s", strings.Join(tools, ", ")),
			"tool %q has no handler block, and nothing serves a handler-less tool of that name", t.Name)
		return
	}
	t.Server = server
}

// execField checks the top-level "exec" field: only "untrusted", only on exec
// tools.
func (c *checker) execField(root *strictjson.Node, t *Tool) {
	s, n := c.str(root, "exec", "the tool")
	if n == nil {
		return
	}
	if s != "untrusted" {
		c.errAt(n.Start, `the only value is "untrusted"; remove the field for a trusted tool`, "exec must be \"untrusted\", not %q", s)
		return
	}
	if t.Kind != KindExec {
		c.errAt(n.Start, `remove "exec"; it applies only to tools with an exec handler`, "exec: \"untrusted\" is only allowed on exec tools, and this tool's handler is %s", kindPhrase(t))
		return
	}
	t.Untrusted = true
	t.UntrustedReason = "the tool file declares exec: \"untrusted\""
}

func kindPhrase(t *Tool) string {
	if t.Handler == nil {
		return "absent (handler-less tool)"
	}
	return fmt.Sprintf("%q", t.Handler.Type)
}

func (c *checker) handler(root *strictjson.Node, hm *strictjson.Member, t *Tool) {
	h := hm.Value
	c.keys(h, "handler", handlerKeys)
	typ, tn := c.str(h, "type", "handler")
	if tn == nil {
		if h.Member("type") == nil {
			c.errAt(hm.KeyStart, `add "type": "exec", a builtin type such as "readFile", or a plugin's type`, "handler is missing \"type\"")
		}
		return
	}
	t.Handler = &Handler{Type: typ}
	t.HandlerJSON = json.RawMessage(c.src[h.Start:h.End])
	switch {
	case typ == "exec":
		t.Kind = KindExec
		t.Server = "opair-plugin-exec"
		c.execHandler(root, h, t)
	case IsBuiltin(typ):
		t.Kind = KindBuiltin
		t.Server = "opair-plugin-builtin"
		c.builtinHandler(root, h, t)
	default:
		server, ok := c.cat.HandlerType(typ)
		if !ok {
			types, _ := c.cat.Names()
			known := append(append([]string{"exec"}, BuiltinTypes()...), types...)
			slices.Sort(known)
			known = slices.Compact(known)
			hint := "install the plugin that serves it, or use one of: " + strings.Join(known, ", ")
			if near := diag.Nearest(typ, known); near != "" {
				hint = fmt.Sprintf("did you mean %q? Otherwise install the plugin that serves it.", near)
			}
			c.errAt(tn.Start, hint, "unknown handler type %q", typ)
			return
		}
		t.Kind = KindPlugin
		t.Server = server
		c.pluginHandler(root, h, t)
	}
	c.execField(root, t)
}

// reject reports each present key as not allowed for this kind of handler.
func (c *checker) reject(h *strictjson.Node, why string, keys ...string) {
	for _, k := range keys {
		if m := h.Member(k); m != nil {
			c.errAt(m.KeyStart, "remove it", "handler.%s is not allowed %s", k, why)
		}
	}
}

func (c *checker) execHandler(root *strictjson.Node, h *strictjson.Node, t *Tool) {
	hd := t.Handler
	c.reject(h, "for exec handlers (it applies to builtin or plugin handlers)", "scope", "includeHidden", "includeIgnored", "config")

	bin, bn := c.str(h, "bin", "handler")
	switch {
	case h.Member("bin") == nil:
		c.errAt(h.Start, `add "bin": the binary to run, e.g. "go"`, "exec handler is missing \"bin\"")
	case bn != nil:
		if why := binpath.CheckName(bin); why != "" {
			c.errAt(bn.Start, "name a binary looked up on PATH, e.g. \"go\", or an absolute path", "handler.bin %q %s", bin, why)
		} else {
			hd.Bin = bin
			if why := binpath.Runner(bin); why != "" {
				t.Untrusted = true
				t.UntrustedReason = fmt.Sprintf("bin %q is %s", bin, why)
			}
		}
	}
	if sub, sn := c.str(h, "subcommand", "handler"); sn != nil {
		if strings.ContainsAny(sub, "\x00\n\r") {
			c.errAt(sn.Start, "write the subcommand words on one line", "handler.subcommand contains a NUL or newline character")
		} else {
			hd.Subcommand = strings.Fields(sub)
		}
	}
	if e := c.field(h, "env", "handler", strictjson.Object); e != nil {
		hd.Env = map[string]string{}
		for _, m := range e.Members {
			if why := childenv.Forbidden(m.Key); why != "" {
				c.errAt(m.KeyStart, "remove it; the host sets the environment that tools get", "handler.env may not set %q: %s", m.Key, why)
				continue
			}
			if m.Value.Kind != strictjson.String {
				c.errAt(m.Value.Start, "environment values are strings", "handler.env.%s must be a string, not a %s", m.Key, m.Value.Kind)
				continue
			}
			if strings.ContainsRune(m.Value.Str, 0) {
				continue // already reported by the parser
			}
			hd.Env[m.Key] = m.Value.Str
		}
	}
	hd.AllowArgs = c.argList(h, "allowArgs")
	hd.DenyArgs = c.argList(h, "denyArgs")
	if s, sn := c.str(h, "summary", "handler"); sn != nil {
		if s != "" && !slices.Contains(summaries, s) {
			noun, isCount := strings.CutPrefix(s, "lineCount:")
			if !isCount || !nounRE.MatchString(noun) {
				hint := "use commandEcho, gitDiff, gitLog, gitStatus, grep or lineCount:<noun> (e.g. lineCount:file), or leave it empty to print the output"
				if near := diag.Nearest(s, summaries); near != "" {
					hint = fmt.Sprintf("did you mean %q? %s", near, hint)
				}
				c.errAt(sn.Start, hint, "unknown summary %q", s)
			}
		}
		hd.Summary = s
	}
	if m := root.Member("requiresBin"); m != nil {
		c.errAt(m.KeyStart, "remove requiresBin; an exec tool's binary is its handler.bin", "requiresBin is only allowed on tools without a handler.bin")
	}
	c.execParameters(root)
	c.declaredCategories(root, t)
}

// argList reads allowArgs or denyArgs: non-empty strings, not "-", no NUL
// or newline.
func (c *checker) argList(h *strictjson.Node, key string) []string {
	a := c.field(h, key, "handler", strictjson.Array)
	if a == nil {
		return nil
	}
	if len(a.Elems) > maxArgs {
		c.errAt(a.Start, "shorten the list", "handler.%s has %d entries, over the limit of %d", key, len(a.Elems), maxArgs)
		return nil
	}
	out := []string{}
	for i, e := range a.Elems {
		switch {
		case e.Kind != strictjson.String:
			c.errAt(e.Start, "entries are argument prefixes such as \"-exec\"", "handler.%s[%d] must be a string, not a %s", key, i, e.Kind)
		case e.Str == "" || e.Str == "-":
			c.errAt(e.Start, "an empty or \"-\" prefix matches every argument or every flag; write the flag itself, e.g. \"-exec\"", "handler.%s[%d] is %q, which is not allowed", key, i, e.Str)
		case strings.ContainsAny(e.Str, "\x00\n\r"):
			c.errAt(e.Start, "remove the control character", "handler.%s[%d] contains a NUL or newline character", key, i)
		default:
			out = append(out, e.Str)
		}
	}
	return out
}

// execParameters checks that an exec tool's parameters declare only "args",
// an array of strings.
func (c *checker) execParameters(root *strictjson.Node) {
	props := root.Get("schema").Get("function").Get("parameters").Get("properties")
	if props == nil {
		return
	}
	for _, m := range props.Members {
		if m.Key != "args" {
			c.errAt(m.KeyStart, `exec tools take one parameter, "args": {"type": "array", "items": {"type": "string"}}`, "exec tools may declare only the parameter \"args\", not %q", m.Key)
			continue
		}
		v := m.Value
		if v.Kind != strictjson.Object || v.Get("type") == nil || v.Get("type").Str != "array" || v.Get("items").Get("type") == nil || v.Get("items").Get("type").Str != "string" {
			c.errAt(m.Value.Start, `declare it as {"type": "array", "items": {"type": "string"}}`, "parameter \"args\" of an exec tool must be an array of strings")
		}
	}
}

func (c *checker) builtinHandler(root *strictjson.Node, h *strictjson.Node, t *Tool) {
	hd := t.Handler
	bt := builtinTypes[hd.Type]
	c.reject(h, fmt.Sprintf("for builtin handler %q (it applies to exec handlers)", hd.Type), "bin", "subcommand", "env", "allowArgs", "denyArgs", "summary")
	c.reject(h, fmt.Sprintf("for builtin handler %q (it applies to third-party handler types)", hd.Type), "config")
	if len(bt.scopes) == 0 {
		c.reject(h, fmt.Sprintf("for %q, which searches the project: use includeHidden and includeIgnored", hd.Type), "scope")
		hd.IncludeHidden = c.boolean(h, "includeHidden", "handler")
		hd.IncludeIgnored = c.boolean(h, "includeIgnored", "handler")
	} else {
		c.reject(h, fmt.Sprintf("for %q (only findInProject takes it)", hd.Type), "includeHidden", "includeIgnored")
		scopes := make([]string, len(bt.scopes))
		for i, s := range bt.scopes {
			scopes[i] = string(s)
		}
		s, sn := c.str(h, "scope", "handler")
		switch {
		case h.Member("scope") == nil:
			c.errAt(h.Start, fmt.Sprintf("add \"scope\": one of %s", strings.Join(scopes, ", ")), "builtin handler %q requires \"scope\"", hd.Type)
		case sn != nil && !slices.Contains(bt.scopes, Scope(s)):
			c.errAt(sn.Start, "use one of: "+strings.Join(scopes, ", "), "scope %q is not allowed for %q", s, hd.Type)
		case sn != nil:
			hd.Scope = Scope(s)
		}
	}
	c.builtinParameters(root, hd.Type, bt)

	reads, writes := DeriveCategories(hd.Type, hd.Scope, hd.IncludeHidden, hd.IncludeIgnored)
	dr, dw, rn, wn := c.categories(root)
	if hd.Scope != "" || len(bt.scopes) == 0 {
		what := fmt.Sprintf("%s with scope %s", hd.Type, hd.Scope)
		if len(bt.scopes) == 0 {
			what = hd.Type
		}
		if rn != nil && dr != reads {
			c.errAt(rn.Start, fmt.Sprintf("remove \"reads\"; for builtin handlers it is derived (%s reads %s)", what, reads), "declared reads %q disagrees with %q, derived from %s", dr, reads, what)
		}
		if wn != nil && dw != writes {
			c.errAt(wn.Start, fmt.Sprintf("remove \"writes\"; for builtin handlers it is derived (%s writes %s)", what, writes), "declared writes %q disagrees with %q, derived from %s", dw, writes, what)
		}
	}
	t.Reads, t.Writes = reads, writes
}

// builtinParameters checks that a builtin tool's parameters are ones its
// handler understands, with the right JSON types, and that the ones the
// handler cannot do without are declared and required.
func (c *checker) builtinParameters(root *strictjson.Node, typ string, bt builtinType) {
	params := root.Get("schema").Get("function").Get("parameters")
	if params == nil {
		return
	}
	props := params.Get("properties")
	var required []string
	if r := params.Get("required"); r != nil && r.Kind == strictjson.Array {
		for _, e := range r.Elems {
			required = append(required, e.Str)
		}
	}
	names := make([]string, len(bt.params))
	for i, p := range bt.params {
		names[i] = p.name
	}
	if props != nil {
		for _, m := range props.Members {
			i := slices.Index(names, m.Key)
			if i < 0 {
				hint := fmt.Sprintf("%s understands: %s", typ, strings.Join(names, ", "))
				if near := diag.Nearest(m.Key, names); near != "" {
					hint = fmt.Sprintf("did you mean %q? %s", near, hint)
				}
				c.errAt(m.KeyStart, hint, "parameter %q is not one the %s handler understands", m.Key, typ)
				continue
			}
			want := bt.params[i].jsonType
			if tn := m.Value.Get("type"); tn != nil && tn.Kind == strictjson.String && tn.Str != want && !(want == "integer" && tn.Str == "number") {
				c.errAt(tn.Start, fmt.Sprintf("write \"type\": %q", want), "parameter %q of %s must have type %q, not %q", m.Key, typ, want, tn.Str)
			}
		}
	}
	for _, p := range bt.params {
		if !p.required {
			continue
		}
		if props.Get(p.name) == nil {
			c.errAt(params.Start, fmt.Sprintf("add %q to properties (type %s) and to required", p.name, p.jsonType), "the %s handler needs the parameter %q, which parameters does not declare", typ, p.name)
		} else if !slices.Contains(required, p.name) {
			c.errAt(params.Start, fmt.Sprintf("add %q to \"required\"", p.name), "the %s handler needs the parameter %q; list it in required", typ, p.name)
		}
	}
}

func (c *checker) pluginHandler(root *strictjson.Node, h *strictjson.Node, t *Tool) {
	hd := t.Handler
	c.reject(h, fmt.Sprintf("for handler type %q, served by %s (put its settings in \"config\")", hd.Type, t.Server),
		"bin", "subcommand", "env", "allowArgs", "denyArgs", "scope", "includeHidden", "includeIgnored", "summary")
	if cfg := c.field(h, "config", "handler", strictjson.Object); cfg != nil {
		hd.Config = json.RawMessage(c.src[cfg.Start:cfg.End])
	}
	at := h.Start
	if m := h.Member("config"); m != nil {
		at = m.Value.Start
	}
	for _, msg := range c.cat.ValidateHandler(hd.Type, t.Name, c.src[h.Start:h.End]) {
		c.errAt(at, fmt.Sprintf("see the documentation of %s", t.Server), "handler %q (served by %s): %s", hd.Type, t.Server, msg)
	}
	c.declaredCategories(root, t)
}
