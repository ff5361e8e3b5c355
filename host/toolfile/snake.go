package toolfile

import (
	"strings"
	"unicode"
)

// SnakeCase returns the snake_case form of a tool name (SPEC §2.1 rule 2):
// an underscore goes before each upper-case letter that follows a lower-case
// letter or a digit, and before the last upper-case letter of an acronym that
// is followed by a lower-case letter; then everything is lower-cased.
// readProjectFile → read_project_file, gitHTTPFetch → git_http_fetch.
func SnakeCase(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// FileName returns the file name a tool of this name must have.
func FileName(name string) string { return SnakeCase(name) + ".json" }
