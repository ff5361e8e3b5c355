package permission

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestRecent(t *testing.T) {
	type call struct{ tool, args string }
	A := call{"goTest", `{"args": ["-run", "TestX"]}`}
	B := call{"readFile", `{"path": "a.go"}`}
	C := call{"grep", `{"pattern": "x"}`}
	tests := []struct {
		name   string
		window int
		calls  []call
		want   []bool // whether each call asks
	}{
		{"A A A: third asks", 0, []call{A, A, A}, []bool{false, false, true}},
		{"A A A A: keeps asking", 0, []call{A, A, A, A}, []bool{false, false, true, true}},
		{"A B A B A: fifth asks", 0, []call{A, B, A, B, A}, []bool{false, false, false, false, true}},
		{"A B A B A B: sixth asks too", 0, []call{A, B, A, B, A, B}, []bool{false, false, false, false, true, true}},
		{"different args never", 0, []call{
			{"goTest", `{"args": ["-run", "T1"]}`},
			{"goTest", `{"args": ["-run", "T2"]}`},
			{"goTest", `{"args": ["-run", "T3"]}`},
			{"goTest", `{"args": ["-run", "T4"]}`},
		}, []bool{false, false, false, false}},
		{"same args, different tool", 0, []call{{"a", `{}`}, {"b", `{}`}, {"c", `{}`}}, []bool{false, false, false}},
		{"key order and white space do not matter", 0, []call{
			{"editFile", `{"path": "a.go", "old": "x", "new": "y"}`},
			{"editFile", `{"new":"y","old":"x","path":"a.go"}`},
			{"editFile", "{\n  \"old\": \"x\",\n  \"path\": \"a.go\",\n  \"new\": \"y\"\n}"},
		}, []bool{false, false, true}},
		{"nested key order", 0, []call{
			{"t", `{"o": {"a": 1, "b": 2}}`},
			{"t", `{"o": {"b": 2, "a": 1}}`},
			{"t", `{"o":{"a":1,"b":2}}`},
		}, []bool{false, false, true}},
		{"empty args equal {}", 0, []call{{"t", ``}, {"t", `{}`}, {"t", ` `}}, []bool{false, false, true}},
		{"number literals kept", 0, []call{{"t", `{"n": 1}`}, {"t", `{"n": 1.0}`}, {"t", `{"n": 1}`}}, []bool{false, false, false}},
		{"out of the window", 3, []call{A, B, C, A, B, C, A}, []bool{false, false, false, false, false, false, false}},
		{"default window: A, four others, A, A", 0, []call{A, B, C, B, C, A, A}, []bool{false, false, false, false, false, false, true}},
		{"default window slides past the first A", 0, []call{A, B, C, B, C, B, C, A, A}, []bool{false, false, false, false, false, true, true, false, false}},
		{"invalid JSON compares as text", 0, []call{{"t", `{x`}, {"t", ` {x `}, {"t", `{x`}}, []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecent(tt.window)
			for i, c := range tt.calls {
				got, reason := r.Check(c.tool, []byte(c.args))
				if got != tt.want[i] {
					t.Errorf("call %d (%s %s): repeat = %v, want %v", i+1, c.tool, c.args, got, tt.want[i])
				}
				if got && !strings.Contains(reason, c.tool) {
					t.Errorf("call %d: reason %q does not name the tool", i+1, reason)
				}
				r.Record(c.tool, []byte(c.args))
			}
		})
	}
}

func TestRecentFeedsDecide(t *testing.T) {
	r := NewRecent(0)
	var d Decision
	for range 3 {
		_, reason := r.Check("goTest", []byte(`{"args":[]}`))
		d = Decide(Call{Tool: "goTest", Repeat: reason, Static: static(Allow)}, []Rule{{Tool: "goTest", Action: Allow}}, nil)
		r.Record("goTest", []byte(`{"args":[]}`))
	}
	if d.Action != Ask || !strings.Contains(d.Reason, "repetition rule") {
		t.Errorf("third identical call: %s (%s), want ask by the repetition rule", d.Action, d.Reason)
	}
}

func TestRecentConcurrent(t *testing.T) {
	r := NewRecent(0)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				args := []byte(fmt.Sprintf(`{"n": %d}`, (i+j)%4))
				r.Check("t", args)
				r.Record("t", args)
			}
		}()
	}
	wg.Wait()
	if len(r.calls) != DefaultWindow {
		t.Errorf("history holds %d calls, want %d", len(r.calls), DefaultWindow)
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 1, "a": [2, {"d": 3, "c": 4}]}`, `{"a":[2,{"c":4,"d":3}],"b":1}`},
		{``, `{}`},
		{`null`, `null`},
		{`{"s": "<&>"}`, `{"s":"<&>"}`},
		{`{"n": 1e3}`, `{"n":1e3}`},
		{`{} {}`, `{} {}`},
	}
	for _, tt := range tests {
		if got := string(Canonical([]byte(tt.in))); got != tt.want {
			t.Errorf("Canonical(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
