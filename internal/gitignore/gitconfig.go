package gitignore

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// globalExcludesPath finds the global excludes file as git does, or "" for
// none. Only the user's two config files are consulted ($XDG_CONFIG_HOME/
// git/config, then ~/.gitconfig; the later wins); the system file, the
// repository's own config, include directives and -c options are not.
func (m *Matcher) globalExcludesPath() (string, error) {
	switch m.opts.GlobalExcludes {
	case "-":
		return "", nil
	case "":
	default:
		return m.expandPath(m.opts.GlobalExcludes)
	}
	home := m.home()
	xdg := m.opts.XDGConfigHome
	if xdg == "" {
		xdg = os.Getenv("XDG_CONFIG_HOME")
	}
	xdgGit := func(name string) string {
		switch {
		case xdg != "":
			return filepath.Join(xdg, "git", name)
		case home != "":
			return filepath.Join(home, ".config", "git", name)
		}
		return ""
	}
	files := []string{xdgGit("config")}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	var value string
	var set bool
	var errs []error
	for _, f := range files {
		if f == "" {
			continue
		}
		data, err := readPlain(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if data == nil {
			continue
		}
		v, ok, err := configValue(data, "core.excludesfile")
		if err != nil {
			errs = append(errs, fmt.Errorf("gitignore: %s: %w", f, err))
			continue
		}
		if ok {
			value, set = v, true
		}
	}
	if !set {
		return xdgGit("ignore"), errors.Join(errs...)
	}
	if value == "" {
		// Set to nothing: git then reads no global file at all.
		return "", errors.Join(errs...)
	}
	p, err := m.expandPath(value)
	return p, errors.Join(append(errs, err)...)
}

func (m *Matcher) home() string {
	if m.opts.Home != "" {
		return m.opts.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// expandPath interprets a path-valued setting as git does: "~/x" is in the
// home directory, "~user/x" in user's; a relative path is taken from the
// work tree root (git runs from there).
func (m *Matcher) expandPath(p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~"); ok {
		name, tail, _ := strings.Cut(rest, "/")
		var dir string
		if name == "" {
			dir = m.home()
			if dir == "" {
				return "", fmt.Errorf("gitignore: cannot expand %q: no home directory", p)
			}
		} else {
			u, err := user.Lookup(name)
			if err != nil {
				return "", fmt.Errorf("gitignore: cannot expand %q: %w", p, err)
			}
			dir = u.HomeDir
		}
		p = filepath.Join(dir, tail)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(m.root, p)
	}
	return p, nil
}

// configValue returns the last value of key ("section.name", lower case, no
// subsection) in a git config file, with git's syntax: sections
// "[name]" and `[name "sub"]` (case-insensitive names), comments after '#'
// or ';', values with quotes, escapes (\\ \" \n \t \b) and
// backslash-newline continuations, internal white space kept and trailing
// white space dropped. A key without "=" is a boolean, which is an error for
// a path-valued key.
func configValue(data []byte, key string) (value string, found bool, err error) {
	p := &configParser{data: data, line: 1}
	p.skipBOM()
	section := ""
	for {
		c, eof := p.next()
		switch {
		case eof:
			return value, found, nil
		case c == '\n' || isConfigSpace(c):
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			s, err := p.section()
			if err != nil {
				return "", false, err
			}
			section = s
		case isAlpha(c):
			name := []byte{lower(c)}
			for {
				c, eof = p.next()
				if eof || !(isAlpha(c) || isDigit(c) || c == '-') {
					break
				}
				name = append(name, lower(c))
			}
			for !eof && (c == ' ' || c == '\t') {
				c, eof = p.next()
			}
			full := section + "." + string(name)
			if eof || c == '\n' {
				if full == key {
					return "", false, fmt.Errorf("line %d: %s has no value", p.line, full)
				}
				continue
			}
			if c != '=' {
				return "", false, fmt.Errorf("bad config line %d", p.line)
			}
			v, err := p.value()
			if err != nil {
				return "", false, err
			}
			if full == key {
				value, found = v, true
			}
		default:
			return "", false, fmt.Errorf("bad config line %d", p.line)
		}
	}
}

type configParser struct {
	data []byte
	pos  int
	line int
}

func (p *configParser) skipBOM() {
	if len(p.data) >= 3 && string(p.data[:3]) == "\xef\xbb\xbf" {
		p.pos = 3
	}
}

// next returns the next byte, turning CR LF into LF.
func (p *configParser) next() (byte, bool) {
	if p.pos >= len(p.data) {
		return '\n', true
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c, false
}

func (p *configParser) skipLine() {
	for {
		if c, eof := p.next(); eof || c == '\n' {
			return
		}
	}
}

// section parses the rest of a section header after '[' and returns the
// section's name, with ".sub" appended for a subsection.
func (p *configParser) section() (string, error) {
	var name []byte
	for {
		c, eof := p.next()
		switch {
		case eof:
			return "", fmt.Errorf("bad section header at line %d", p.line)
		case c == ']':
			if len(name) == 0 {
				return "", fmt.Errorf("bad section header at line %d", p.line)
			}
			return string(name), nil
		case isConfigSpace(c):
			for isConfigSpace(c) {
				if c == '\n' {
					return "", fmt.Errorf("bad section header at line %d", p.line)
				}
				c, _ = p.next()
			}
			if c != '"' {
				return "", fmt.Errorf("bad section header at line %d", p.line)
			}
			name = append(name, '.')
			for {
				c, eof = p.next()
				if eof || c == '\n' {
					return "", fmt.Errorf("bad section header at line %d", p.line)
				}
				if c == '"' {
					break
				}
				if c == '\\' {
					if c, eof = p.next(); eof || c == '\n' {
						return "", fmt.Errorf("bad section header at line %d", p.line)
					}
				}
				name = append(name, c)
			}
			if c, _ = p.next(); c != ']' {
				return "", fmt.Errorf("bad section header at line %d", p.line)
			}
			return string(name), nil
		case isAlpha(c) || isDigit(c) || c == '-' || c == '.':
			name = append(name, lower(c))
		default:
			return "", fmt.Errorf("bad section header at line %d", p.line)
		}
	}
}

// value parses a value after '=' up to the end of its line.
func (p *configParser) value() (string, error) {
	var out []byte
	quote, comment := false, false
	spaces := 0
	for {
		c, _ := p.next()
		if c == '\n' {
			if quote {
				return "", fmt.Errorf("unterminated quote at line %d", p.line)
			}
			return string(out), nil
		}
		if comment {
			continue
		}
		if isConfigSpace(c) && !quote {
			if len(out) > 0 {
				spaces++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			out = append(out, ' ')
		}
		switch c {
		case '\\':
			c, _ = p.next()
			switch c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", fmt.Errorf("bad escape in value at line %d", p.line)
			}
			out = append(out, c)
		case '"':
			quote = !quote
		default:
			out = append(out, c)
		}
	}
}

// isConfigSpace is git's isspace: tab, LF, CR and space only.
func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool       { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
