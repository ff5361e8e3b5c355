package plugin

import (
	"slices"

	"github.com/opair-dev/opair/host/toolfile"
)

// Catalog is the toolfile.Catalog of a session: what the running plugins
// serve, and Opair's own first-party names (so that, say, plan still
// validates when opair-plugin-subagent is missing; the registry then lists
// it as unavailable instead of refusing to start).
func Catalog(m *Manager) toolfile.Catalog {
	return catalog{m: m, first: toolfile.FirstParty()}
}

type catalog struct {
	m     *Manager
	first toolfile.Static
}

func (c catalog) HandlerType(typ string) (string, bool) {
	if c.m != nil {
		if s, ok := c.m.HandlerType(typ); ok {
			return s, true
		}
	}
	return c.first.HandlerType(typ)
}

func (c catalog) HandlerlessTool(name string) (string, bool) {
	if c.m != nil {
		if s, ok := c.m.HandlerlessTool(name); ok {
			return s, true
		}
	}
	return c.first.HandlerlessTool(name)
}

func (c catalog) ValidateHandler(typ, tool string, handler []byte) []string {
	if c.m != nil {
		if _, ok := c.m.HandlerType(typ); ok {
			return c.m.ValidateHandler(typ, tool, handler)
		}
	}
	return nil
}

func (c catalog) Names() (types, tools []string) {
	types, tools = c.first.Names()
	if c.m != nil {
		t2, h2 := c.m.Names()
		types = append(types, t2...)
		tools = append(tools, h2...)
	}
	slices.Sort(types)
	slices.Sort(tools)
	return slices.Compact(types), slices.Compact(tools)
}
