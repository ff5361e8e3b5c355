// Package strictjson parses JSON into a tree that remembers where every value
// and key came from, and refuses what encoding/json lets through silently:
// duplicate keys, invalid UTF-8, NUL characters in strings, documents over a
// size limit and nesting beyond a depth limit.
//
// It exists because Opair's tool and config files are security policy: with
// encoding/json, {"denyArgs":["-exec"],"DENYARGS":[]} quietly empties the deny
// list. Callers walk the tree, check keys exactly, and report errors with the
// line and column of the offending key.
//
// The package imports nothing from the host or the plugins.
package strictjson

import (
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a Node.
type Kind uint8

// The JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "unknown"
}

// Node is one JSON value with its place in the source.
type Node struct {
	Kind       Kind
	Start, End int // byte offsets of the value in the source: src[Start:End]
	Str        string
	Num        string // the number literal as written
	Bool       bool
	Members    []Member // Object, in source order
	Elems      []*Node  // Array
}

// Member is one key of an object.
type Member struct {
	Key      string
	KeyStart int // byte offset of the key's opening quote
	Value    *Node
}

// Get returns the value of key in an object, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for _, m := range n.Members {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// Member returns the member named key of an object, or nil.
func (n *Node) Member(key string) *Member {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := range n.Members {
		if n.Members[i].Key == key {
			return &n.Members[i]
		}
	}
	return nil
}

// Limits bound what Parse accepts.
type Limits struct {
	MaxBytes int // 0 means no limit
	MaxDepth int // 0 means no limit
}

// Error is one problem found while parsing, at a byte offset.
type Error struct {
	Offset int
	Msg    string
	Hint   string
	// Related is the offset of an earlier place the error refers to (the
	// first occurrence of a duplicate key), or -1.
	Related int
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Parse parses one JSON document. It returns the tree and every non-fatal
// problem (duplicate keys, NUL characters). A fatal problem (syntax, invalid
// UTF-8, limits) returns a nil tree and that one error last in the list.
func Parse(src []byte, lim Limits) (*Node, []*Error) {
	p := &parser{src: src, lim: lim}
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		return nil, []*Error{{Offset: 0, Related: -1, Msg: fmt.Sprintf("file is %d bytes, over the limit of %d", len(src), lim.MaxBytes), Hint: "shrink the file below the limit"}}
	}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		p.pos = 3
	}
	p.skipSpace()
	n := p.value(0)
	if p.fatal == nil {
		p.skipSpace()
		if p.pos < len(src) {
			p.fail(p.pos, fmt.Sprintf("unexpected %s after the top-level value", p.describe()), "a file holds exactly one JSON object")
		}
	}
	if p.fatal != nil {
		return nil, append(p.errs, p.fatal)
	}
	return n, p.errs
}

type parser struct {
	src   []byte
	pos   int
	lim   Limits
	errs  []*Error
	fatal *Error
	path  []string // keys and indexes leading to the value being parsed
	inKey bool     // parsing an object key rather than a value
}

// objectName names the object being parsed: `in "handler"`, or "at the
// top level".
func (p *parser) objectName() string {
	inKey := p.inKey
	p.inKey = false
	w := p.where()
	p.inKey = inKey
	if len(p.path) == 0 {
		return "at the top level"
	}
	return "in " + strings.TrimPrefix(w, "the value of ")
}

// where names the place being parsed, for messages: the value of
// "handler.denyArgs[2]", or a key of "handler".
func (p *parser) where() string {
	var b strings.Builder
	for _, k := range p.path {
		if strings.HasPrefix(k, "[") {
			b.WriteString(k)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	if p.inKey {
		if b.Len() == 0 {
			return "a top-level key"
		}
		return fmt.Sprintf("a key of %q", b.String())
	}
	if b.Len() == 0 {
		return "the top-level value"
	}
	return fmt.Sprintf("the value of %q", b.String())
}

func (p *parser) fail(off int, msg, hint string) {
	if p.fatal == nil {
		p.fatal = &Error{Offset: off, Msg: msg, Hint: hint, Related: -1}
	}
}

func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return strconv.QuoteRune(r)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) *Node {
	if p.lim.MaxDepth > 0 && depth >= p.lim.MaxDepth {
		p.fail(p.pos, fmt.Sprintf("nesting deeper than %d levels", p.lim.MaxDepth), "flatten the structure")
		return nil
	}
	if p.pos >= len(p.src) {
		p.fail(p.pos, "unexpected end of file, expected a value", "the file is truncated or a bracket is missing")
		return nil
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, ok := p.str()
		if !ok {
			return nil
		}
		return &Node{Kind: String, Start: start, End: p.pos, Str: s}
	case c == 't':
		return p.literal("true", &Node{Kind: Bool, Bool: true})
	case c == 'f':
		return p.literal("false", &Node{Kind: Bool})
	case c == 'n':
		return p.literal("null", &Node{Kind: Null})
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		hint := "expected a string, number, object, array, true, false or null"
		if c == '\'' {
			hint = "JSON strings use double quotes"
		} else if c == '}' || c == ']' {
			hint = "remove the trailing comma before it"
		}
		p.fail(p.pos, fmt.Sprintf("unexpected %s, expected a value", p.describe()), hint)
		return nil
	}
}

func (p *parser) literal(word string, n *Node) *Node {
	start := p.pos
	if len(p.src)-p.pos < len(word) || string(p.src[p.pos:p.pos+len(word)]) != word {
		p.fail(p.pos, fmt.Sprintf("invalid literal, expected %q", word), "JSON literals are true, false and null, in lower case")
		return nil
	}
	p.pos += len(word)
	n.Start, n.End = start, p.pos
	return n
}

func (p *parser) number() *Node {
	start := p.pos
	i := p.pos
	if i < len(p.src) && p.src[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
		return i - j
	}
	bad := func() *Node {
		p.fail(start, "invalid number", "numbers look like 12, -3, 0.5 or 1e6")
		return nil
	}
	if i < len(p.src) && p.src[i] == '0' {
		i++
	} else if digits() == 0 {
		return bad()
	}
	if i < len(p.src) && p.src[i] == '.' {
		i++
		if digits() == 0 {
			return bad()
		}
	}
	if i < len(p.src) && (p.src[i] == 'e' || p.src[i] == 'E') {
		i++
		if i < len(p.src) && (p.src[i] == '+' || p.src[i] == '-') {
			i++
		}
		if digits() == 0 {
			return bad()
		}
	}
	p.pos = i
	return &Node{Kind: Number, Start: start, End: i, Num: string(p.src[start:i])}
}

func (p *parser) str() (string, bool) {
	start := p.pos
	p.pos++ // opening quote
	var buf []byte
	runStart := p.pos
	nulReported := false
	nul := func(off int) {
		if !nulReported {
			nulReported = true
			p.errs = append(p.errs, &Error{Offset: off, Related: -1, Msg: "NUL character in " + p.where(), Hint: "remove the \\u0000 or NUL byte"})
		}
	}
	for {
		if p.pos >= len(p.src) {
			p.fail(start, "unterminated string", "add the closing double quote")
			return "", false
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			buf = append(buf, p.src[runStart:p.pos]...)
			p.pos++
			return string(buf), true
		case c == '\\':
			buf = append(buf, p.src[runStart:p.pos]...)
			esc := p.pos
			p.pos++
			if p.pos >= len(p.src) {
				p.fail(start, "unterminated string", "add the closing double quote")
				return "", false
			}
			switch e := p.src[p.pos]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4(p.pos + 1)
				if !ok {
					p.fail(esc, "invalid \\u escape", "a \\u escape takes four hex digits")
					return "", false
				}
				p.pos += 4
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(0), false
					if p.pos+2 < len(p.src) && p.src[p.pos+1] == '\\' && p.src[p.pos+2] == 'u' {
						r2, ok2 = p.hex4(p.pos + 3)
					}
					dec := utf16.DecodeRune(r, r2)
					if !ok2 || dec == utf8.RuneError {
						p.fail(esc, "unpaired UTF-16 surrogate in a \\u escape", "write the character itself, or a valid surrogate pair")
						return "", false
					}
					p.pos += 6
					r = dec
				}
				if r == 0 {
					nul(esc)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				p.fail(esc, fmt.Sprintf("invalid escape \\%c", e), "valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
				return "", false
			}
			p.pos++
			runStart = p.pos
		case c == 0:
			nul(p.pos)
			p.pos++
		case c < 0x20:
			p.fail(p.pos, "control character in "+p.where(), "write a newline as \\n and a tab as \\t")
			return "", false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && size == 1 {
				p.fail(p.pos, "invalid UTF-8 in "+p.where(), "save the file as UTF-8")
				return "", false
			}
			p.pos += size
		default:
			p.pos++
		}
	}
}

func (p *parser) hex4(at int) (rune, bool) {
	if at+4 > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[at:at+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}

func (p *parser) object(depth int) *Node {
	n := &Node{Kind: Object, Start: p.pos}
	p.pos++
	seen := map[string]int{}
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		n.End = p.pos
		return n
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			hint := "object keys are double-quoted strings"
			if p.pos < len(p.src) && p.src[p.pos] == '}' {
				hint = "remove the trailing comma before the closing brace"
			}
			p.fail(p.pos, fmt.Sprintf("unexpected %s, expected a key", p.describe()), hint)
			return nil
		}
		keyStart := p.pos
		p.inKey = true
		key, ok := p.str()
		p.inKey = false
		if !ok {
			return nil
		}
		if first, dup := seen[key]; dup {
			p.errs = append(p.errs, &Error{Offset: keyStart, Related: first, Msg: fmt.Sprintf("duplicate key %q %s", key, p.objectName()), Hint: "keep one of the two; a duplicate would silently override the first"})
		} else {
			seen[key] = keyStart
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			p.fail(p.pos, fmt.Sprintf("unexpected %s after key %q, expected ':'", p.describe(), key), "separate a key from its value with a colon")
			return nil
		}
		p.pos++
		p.skipSpace()
		p.path = append(p.path, key)
		v := p.value(depth + 1)
		p.path = p.path[:len(p.path)-1]
		if v == nil {
			return nil
		}
		n.Members = append(n.Members, Member{Key: key, KeyStart: keyStart, Value: v})
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.End = p.pos
			return n
		}
		p.fail(p.pos, fmt.Sprintf("unexpected %s in object, expected ',' or '}'", p.describe()), "a comma is missing between two members, or the closing brace is missing")
		return nil
	}
}

func (p *parser) array(depth int) *Node {
	n := &Node{Kind: Array, Start: p.pos}
	p.pos++
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		n.End = p.pos
		return n
	}
	for {
		p.skipSpace()
		p.path = append(p.path, fmt.Sprintf("[%d]", len(n.Elems)))
		v := p.value(depth + 1)
		p.path = p.path[:len(p.path)-1]
		if v == nil {
			return nil
		}
		n.Elems = append(n.Elems, v)
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.End = p.pos
			return n
		}
		p.fail(p.pos, fmt.Sprintf("unexpected %s in array, expected ',' or ']'", p.describe()), "a comma is missing between two elements, or the closing bracket is missing")
		return nil
	}
}

// Lines maps byte offsets of one source to 1-based lines and columns.
// Columns count characters, not bytes, as editors do.
type Lines struct {
	src   []byte
	start []int
}

// NewLines indexes src.
func NewLines(src []byte) *Lines {
	l := &Lines{src: src, start: []int{0}}
	for i, c := range src {
		if c == '\n' {
			l.start = append(l.start, i+1)
		}
	}
	return l
}

// Position returns the 1-based line and column of a byte offset.
func (l *Lines) Position(off int) (line, col int) {
	if off > len(l.src) {
		off = len(l.src)
	}
	i := sort.Search(len(l.start), func(i int) bool { return l.start[i] > off }) - 1
	seg := l.src[l.start[i]:off]
	if utf8.Valid(seg) {
		return i + 1, utf8.RuneCount(seg) + 1
	}
	return i + 1, len(seg) + 1
}

// ReadFile reads one document to parse: a regular file (not a FIFO, device
// or directory) of at most max bytes; a larger one is an error.
func ReadFile(fsys fs.FS, name string, max int) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, fmt.Errorf("file is over the limit of %d bytes", max)
	}
	return data, nil
}
