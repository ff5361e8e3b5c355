package permission

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
)

// DefaultWindow is how many of a loop's recent calls the repetition rule
// looks at.
const DefaultWindow = 6

// Recent is one loop's recent calls, for the repetition rule of SPEC §3.4: a
// call whose tool and arguments already occur twice among the last window
// calls asks, whatever the rules say. Looking at a window rather than at the
// last two calls catches alternating loops (A, B, A, B, A) too.
//
// Arguments are compared after canonicalisation, so key order and white space
// do not matter. Only a hash of each call is kept. Recent is safe for
// concurrent use.
type Recent struct {
	mu     sync.Mutex
	window int
	calls  [][sha256.Size]byte // oldest first, at most window
}

// NewRecent returns an empty history of window calls; window < 2 means
// DefaultWindow.
func NewRecent(window int) *Recent {
	if window < 2 {
		window = DefaultWindow
	}
	return &Recent{window: window}
}

// Check reports, before a call, whether it repeats: the same tool with the
// same canonical arguments already occurs at least twice in the last window
// calls. The reason is meant for Call.Repeat.
func (r *Recent) Check(tool string, argsJSON []byte) (repeat bool, reason string) {
	key := callKey(tool, argsJSON)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, k := range r.calls {
		if k == key {
			n++
		}
	}
	if n < 2 {
		return false, ""
	}
	return true, fmt.Sprintf("%s was already called with identical arguments %d times in the loop's last %d calls, so this call asks (repetition rule)", tool, n, len(r.calls))
}

// Record adds a call to the history, dropping the oldest beyond the window.
func (r *Recent) Record(tool string, argsJSON []byte) {
	key := callKey(tool, argsJSON)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, key)
	if len(r.calls) > r.window {
		drop := len(r.calls) - r.window
		r.calls = append(r.calls[:0], r.calls[drop:]...)
	}
}

// callKey hashes a tool name and its canonical arguments.
func callKey(tool string, argsJSON []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(Canonical(argsJSON))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// Canonical re-encodes JSON arguments with object keys sorted and no
// insignificant white space; numbers keep their literal. Empty arguments are
// {}. Input that is not JSON is returned with surrounding white space trimmed,
// so it still compares equal to itself.
func Canonical(argsJSON []byte) []byte {
	trimmed := bytes.TrimSpace(argsJSON)
	if len(trimmed) == 0 {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return trimmed
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return trimmed
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
