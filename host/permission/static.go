package permission

import (
	"fmt"

	"github.com/opair-dev/opair/host/toolfile"
)

// Mode is the main loop's mode (SPEC §3.3).
type Mode string

// The modes.
const (
	Navigator Mode = "navigator" // reads, searches, runs tests; never offered project writes
	Driver    Mode = "driver"    // may also change the project, gated
)

// ParseMode parses a mode name.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Navigator, Driver:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown mode %q: use navigator or driver", s)
}

// Action is what the gate does with a call.
type Action string

// The actions. NotOffered means the tool is withheld from the model in this
// mode altogether.
const (
	Allow      Action = "allow"
	Ask        Action = "ask"
	Deny       Action = "deny"
	NotOffered Action = "not offered"
)

func (a Action) strictness() int {
	switch a {
	case Allow:
		return 0
	case Ask:
		return 1
	case Deny:
		return 2
	}
	return 3 // NotOffered, and anything unknown: fail closed
}

// Stricter returns the stricter of two actions.
func Stricter(a, b Action) Action {
	if b.strictness() > a.strictness() {
		return b
	}
	return a
}

// Decision is an action with the reason for it.
type Decision struct {
	Action Action
	Reason string
}

// Categories decides from a tool's categories and trust alone, before any
// argument or rule is known: the table of SPEC §3.4. The strictest row wins.
// For builtin tools the categories are the most a call can reach; a call on
// a path of a lesser class is decided by that class.
func Categories(reads, writes toolfile.Category, untrusted bool, mode Mode) Decision {
	known := func(c toolfile.Category, list []toolfile.Category) bool {
		for _, k := range list {
			if k == c {
				return true
			}
		}
		return false
	}
	if !known(reads, toolfile.ReadCategories) || !known(writes, toolfile.WriteCategories) {
		return Decision{Deny, fmt.Sprintf("unknown category (reads %q, writes %q): failing closed", reads, writes)}
	}
	if mode != Navigator && mode != Driver {
		return Decision{Deny, fmt.Sprintf("unknown mode %q: failing closed", mode)}
	}
	d := Decision{Allow, fmt.Sprintf("reads %s, writes %s", reads, writes)}
	raise := func(a Action, reason string) {
		if a.strictness() > d.Action.strictness() {
			d = Decision{a, reason}
		}
	}
	if reads == toolfile.External {
		raise(Ask, "reads outside the project")
	}
	switch writes {
	case toolfile.None, toolfile.Artifacts:
	case toolfile.Project:
		if mode == Navigator {
			raise(NotOffered, "writes the project, which navigator mode never offers")
		}
	default:
		if mode == Navigator {
			raise(NotOffered, fmt.Sprintf("writes %s, which navigator mode never offers", writes))
		} else {
			raise(Ask, fmt.Sprintf("writes %s", writes))
		}
	}
	if untrusted {
		raise(Ask, "untrusted: it can run code that is not part of the project, so every call asks")
	}
	return d
}

// Tool is Categories for a validated tool.
func Tool(t *toolfile.Tool, mode Mode) Decision {
	return Categories(t.Reads, t.Writes, t.Untrusted, mode)
}
