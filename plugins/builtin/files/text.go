package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// sniffLen is how much of a file decides whether it is text.
const sniffLen = 8 << 10

// maxLineRunes is where a displayed line is cut.
const maxLineRunes = 2000

// binaryReason tells why data looks binary (a NUL byte, or invalid UTF-8
// in its first sniffLen bytes), or "" for text.
func binaryReason(data []byte) string {
	head := data
	if len(head) > sniffLen {
		head = head[:sniffLen]
		// The cut may fall inside a character.
		for i := 1; i <= utf8.UTFMax && i <= len(head); i++ {
			if utf8.RuneStart(head[len(head)-i]) {
				if !utf8.FullRune(head[len(head)-i:]) {
					head = head[:len(head)-i]
				}
				break
			}
		}
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fmt.Sprintf("it holds a NUL byte at offset %d", i)
	}
	if !utf8.Valid(head) {
		return "it is not valid UTF-8 text"
	}
	return ""
}

// cutLine cuts a line longer than max characters, with a marker.
func cutLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + fmt.Sprintf(" … [line cut after %d characters]", max)
		}
		n++
	}
	return s
}

// sha returns the hex SHA-256 of data.
func sha(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// countLines counts the lines of data: "\n"-terminated ones plus a last
// line without one.
func countLines(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// plural returns "1 line" or "3 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// numbered formats one line for the model: the number right-aligned in six
// columns, a tab, the text (as cat -n does).
func numbered(n int, text string) string {
	return fmt.Sprintf("%6d\t%s\n", n, text)
}

// sibling names the tool to use instead of the current one: the default
// tool files name readFile tools "read…File" and their siblings
// "read…FileLines" and "read…FileBytes".
func sibling(tool, suffix, typ string) string {
	if strings.HasSuffix(tool, "File") {
		return fmt.Sprintf("%s%s (a %s tool)", tool, suffix, typ)
	}
	return "a " + typ + " tool"
}
