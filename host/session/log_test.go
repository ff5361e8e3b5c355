package session

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opair-dev/opair/host/provider"
	"github.com/opair-dev/opair/host/provider/providertest"
)

func TestLogRoundTrip(t *testing.T) {
	state := t.TempDir()
	meta := Meta{ID: "abc", Project: "/src/app", Mode: "navigator", Loop: "navigator", Model: "m", Started: time.Now()}
	l, err := Create(state, meta)
	if err != nil {
		t.Fatal(err)
	}
	user := provider.Message{Role: provider.User, Content: "hi"}
	asst := provider.Message{Role: provider.Assistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "gitStatus", Arguments: json.RawMessage(`{}`)}, {ID: "c2", Name: "goTest", Arguments: json.RawMessage(`{}`)}}}
	res := provider.Message{Role: provider.ToolRole, ToolCallID: "c1", Name: "gitStatus", Content: "clean"}
	for _, e := range []Entry{{Type: "user", Message: &user}, {Type: "assistant", Message: &asst}, {Type: "result", CallID: "c1", Message: &res}} {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// A crash mid-write leaves a torn last line.
	f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"result","callId":"c2","mess`)
	f.Close()

	entries, err := Read(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[0].Meta.ID != "abc" {
		t.Fatalf("entries: %+v", entries)
	}
	h := History(entries)
	// user, assistant, the one result, and an answer for the call the crash cut off.
	if len(h) != 4 || h[3].ToolCallID != "c2" || !strings.Contains(h[3].Content, "session ended before this call finished") {
		t.Fatalf("history: %+v", h)
	}
	list, err := List(state, "/src/app")
	if err != nil || len(list) != 1 || list[0].Turns != 1 || list[0].First != "hi" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if other, _ := List(state, "/src/other"); len(other) != 0 {
		t.Errorf("another project's list: %+v", other)
	}
	if fi, _ := os.Stat(l.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v", fi.Mode().Perm())
	}
}

func TestFitContextElidesOldestToolOutputsFirst(t *testing.T) {
	big := strings.Repeat("x", 4000) // ~1000 tokens
	s := &Session{obs: nopObserver{}, opts: Options{Model: ModelOptions{ContextWindow: 3000}}}
	s.msgs = []provider.Message{
		{Role: provider.System, Content: "sys"},
		{Role: provider.User, Content: "first"},
		{Role: provider.ToolRole, Name: "old", Content: big},
		{Role: provider.ToolRole, Name: "older2", Content: big},
		{Role: provider.User, Content: "latest"},
		{Role: provider.ToolRole, Name: "recent", Content: big},
	}
	if err := s.fitContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.msgs[2].Content, elidedMarker) {
		t.Errorf("the oldest tool output was kept: %.40q", s.msgs[2].Content)
	}
	if s.msgs[5].Content != big {
		t.Error("the last turn's tool output was elided")
	}
	if !strings.Contains(s.msgs[2].Content, "call the tool again") {
		t.Errorf("the model is not told how to get it back: %q", s.msgs[2].Content)
	}
}

func TestLoopWhitelist(t *testing.T) {
	l := Loop{Whitelist: []string{"git*", "readProjectFile"}}
	for tool, want := range map[string]bool{"gitDiff": true, "readProjectFile": true, "readProjectFileLines": false, "goTest": false} {
		if l.Offers(tool) != want {
			t.Errorf("Offers(%s) = %v", tool, !want)
		}
	}
	if !(Loop{}).Offers("anything") {
		t.Error("an empty whitelist offers everything")
	}
}

// When eliding tool outputs is not enough, the oldest turns are summarised
// by the model (a scripted provider speaking the real protocol), and the
// log records what the summary replaced, so a resumed session sees the same.
func TestFitContextSummarisesOldestTurns(t *testing.T) {
	srv := providertest.NewOpenAI(t, providertest.Reply{Text: "The human wants X; file a.go was changed."})
	state := t.TempDir()
	l, err := Create(state, Meta{ID: "s", Project: "/p", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := strings.Repeat("word ", 800) // ~1000 tokens, not a tool output
	s := &Session{obs: nopObserver{}, opts: Options{Log: l, Model: ModelOptions{ContextWindow: 3000},
		Provider: provider.NewOpenAI(provider.Config{BaseURL: srv.URL(), Model: "m"})}}
	s.msgs = []provider.Message{
		{Role: provider.System, Content: "sys"},
		{Role: provider.User, Content: big},
		{Role: provider.Assistant, Content: big},
		{Role: provider.User, Content: big},
		{Role: provider.Assistant, Content: "ok"},
		{Role: provider.User, Content: "latest"},
	}
	for _, m := range s.msgs[1:] {
		m := m
		if err := l.Append(Entry{Type: string(m.Role), Message: &m}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.fitContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.msgs) != 3 || !strings.Contains(s.msgs[1].Content, "The human wants X") || s.msgs[2].Content != "latest" {
		t.Fatalf("after summarising: %+v", s.msgs)
	}
	req := srv.Requests()[0]
	b, _ := json.Marshal(req["messages"])
	if !strings.Contains(string(b), "Summarise the conversation") {
		t.Errorf("summary request: %s", b)
	}
	entries, err := Read(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	h := History(entries)
	if len(h) != 2 || !strings.Contains(h[0].Content, "The human wants X") || h[1].Content != "latest" {
		t.Errorf("history after a summary: %+v", h)
	}
}
