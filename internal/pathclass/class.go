package pathclass

import "fmt"

// Class is what a path is, for the permission rules (SPEC §3.1).
type Class int

const (
	// Project: inside the root, no component starting with ".", not
	// ignored by git.
	Project Class = iota + 1
	// ProjectDot: inside the root, some component starts with ".".
	ProjectDot
	// ProjectIgnore: inside the root, not dot, ignored by git.
	ProjectIgnore
	// External: outside the root, including anything a symbolic link
	// leads to outside it.
	External
)

var classNames = map[Class]string{
	Project:       "project",
	ProjectDot:    "project-dot",
	ProjectIgnore: "project-ignore",
	External:      "external",
}

// String returns the class's name, which is also the scope's name.
func (c Class) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// ParseScope turns a scope name from a tool file into the class it names.
func ParseScope(s string) (Class, error) {
	for c, name := range classNames {
		if name == s {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown scope %q: want project, project-dot, project-ignore or external", s)
}

// Grants reports whether a tool with the given scope may touch a path of
// class c: project grants project; project-dot grants project and
// project-dot; project-ignore grants project and project-ignore; external
// grants external only. Anything else grants nothing.
func Grants(scope, c Class) bool {
	switch scope {
	case Project:
		return c == Project
	case ProjectDot:
		return c == Project || c == ProjectDot
	case ProjectIgnore:
		return c == Project || c == ProjectIgnore
	case External:
		return c == External
	}
	return false
}
