package toolfile

// param is one parameter a builtin handler understands.
type param struct {
	name     string
	jsonType string // "string", "integer", "boolean"
	required bool   // the handler cannot work without it
}

// builtinType describes one of the ten builtin handler types (SPEC §2.1 rule
// 5, §4.2): the scopes it accepts, its parameters, and whether it writes.
type builtinType struct {
	scopes []Scope // empty: takes no scope (findInProject)
	params []param
	writes bool
}

var builtinTypes = map[string]builtinType{
	"listDirectory": {
		scopes: []Scope{ScopeProject, ScopeExternal},
		params: []param{{"path", "string", true}},
	},
	"readFile": {
		scopes: allScopes,
		params: []param{{"path", "string", true}},
	},
	"readFileLines": {
		scopes: allScopes,
		params: []param{{"path", "string", true}, {"start", "integer", false}, {"end", "integer", false}},
	},
	"readFileBytes": {
		scopes: allScopes,
		params: []param{{"path", "string", true}, {"offset", "integer", false}, {"length", "integer", false}},
	},
	"findInProject": {
		params: []param{{"pattern", "string", false}, {"glob", "string", false}, {"literal", "boolean", false}, {"caseInsensitive", "boolean", false}, {"maxResults", "integer", false}},
	},
	"createFile": {
		scopes: projectScopes, writes: true,
		params: []param{{"path", "string", true}, {"content", "string", true}},
	},
	"editFile": {
		scopes: projectScopes, writes: true,
		params: []param{{"path", "string", true}, {"oldString", "string", true}, {"newString", "string", true}, {"replaceAll", "boolean", false}},
	},
	"deleteFile": {
		scopes: projectScopes, writes: true,
		params: []param{{"path", "string", true}},
	},
	"chmodFile": {
		scopes: projectScopes, writes: true,
		params: []param{{"path", "string", true}, {"mode", "string", true}},
	},
	"replaceInProject": {
		scopes: []Scope{ScopeProject}, writes: true,
		params: []param{{"pattern", "string", true}, {"replacement", "string", true}, {"glob", "string", false}, {"literal", "boolean", false}},
	},
}

var (
	allScopes     = []Scope{ScopeProject, ScopeProjectDot, ScopeProjectIgnore, ScopeExternal}
	projectScopes = []Scope{ScopeProject, ScopeProjectDot, ScopeProjectIgnore}
)

// BuiltinTypes returns the names of the builtin handler types.
func BuiltinTypes() []string {
	return []string{"listDirectory", "readFile", "readFileLines", "readFileBytes", "findInProject",
		"createFile", "editFile", "deleteFile", "chmodFile", "replaceInProject"}
}

// IsBuiltin reports whether typ is one of the ten builtin handler types.
func IsBuiltin(typ string) bool {
	_, ok := builtinTypes[typ]
	return ok
}

// scopeCategory is the category a scope grants.
func scopeCategory(s Scope) Category {
	switch s {
	case ScopeProject:
		return Project
	case ScopeProjectDot:
		return ProjectDot
	case ScopeProjectIgnore:
		return ProjectIgnore
	case ScopeExternal:
		return External
	}
	return Category(s)
}

// DeriveCategories returns the read and write categories of a builtin
// handler type with its scope (and, for findInProject, its include flags).
// Writers read what they write: each resolves and inspects its target first.
func DeriveCategories(typ string, scope Scope, includeHidden, includeIgnored bool) (reads, writes Category) {
	bt, ok := builtinTypes[typ]
	if !ok {
		return External, External // unknown: fail closed
	}
	if typ == "findInProject" {
		reads = Project
		if includeIgnored {
			reads = Max(reads, ProjectIgnore)
		}
		if includeHidden {
			reads = Max(reads, ProjectDot)
		}
		return reads, None
	}
	reads = scopeCategory(scope)
	writes = None
	if bt.writes {
		writes = reads
	}
	return reads, writes
}
