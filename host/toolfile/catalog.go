package toolfile

import "sort"

// Catalog says which handler types and handler-less tool names are served
// beyond exec and the ten builtin types, and by whom. The plugin manager fills
// it from what each plugin describes; validation only asks it.
type Catalog interface {
	// HandlerType returns the plugin that serves a handler type.
	HandlerType(typ string) (server string, ok bool)
	// HandlerlessTool returns who serves a handler-less tool name: "host"
	// or a plugin.
	HandlerlessTool(name string) (server string, ok bool)
	// ValidateHandler asks the plugin serving typ to check a tool's
	// handler block (raw JSON) and returns one message per problem.
	ValidateHandler(typ, tool string, handler []byte) []string
	// Names lists the served handler types and handler-less tool names, for
	// hints.
	Names() (types, tools []string)
}

// Static is a Catalog from fixed tables, with no config checks.
type Static struct {
	Types       map[string]string // handler type → plugin
	Handlerless map[string]string // tool name → "host" or plugin
}

// HandlerType implements Catalog.
func (s Static) HandlerType(typ string) (string, bool) {
	v, ok := s.Types[typ]
	return v, ok
}

// HandlerlessTool implements Catalog.
func (s Static) HandlerlessTool(name string) (string, bool) {
	v, ok := s.Handlerless[name]
	return v, ok
}

// ValidateHandler implements Catalog; a static catalog accepts any block.
func (Static) ValidateHandler(string, string, []byte) []string { return nil }

// Names implements Catalog.
func (s Static) Names() (types, tools []string) {
	return sortedKeys(s.Types), sortedKeys(s.Handlerless)
}

// FirstParty is the catalog of what Opair itself serves: askQuestion by the
// host, and the sub-agent entry points by opair-plugin-subagent.
func FirstParty() Static {
	return Static{
		Types: map[string]string{},
		Handlerless: map[string]string{
			"askQuestion": "host",
			"plan":        "opair-plugin-subagent",
			"reviewDiff":  "opair-plugin-subagent",
		},
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
