package session

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/opair-dev/opair/host/provider"
)

// Entry is one line of a session log. Type says which fields are set:
//
//	meta        Meta: the session's project, mode, loop, model
//	user        Message: what the human typed
//	assistant   Message: the model's reply (text and tool calls)
//	decision    Tool, CallID, Args, Argv, Decision, Reason: what the gate decided, and the human's answer
//	result      Tool, CallID, Message (the tool message the model gets), Summary, IsError, Details, Full (the whole output)
//	usage       Usage, Total
//	error       Error
//	mode        Mode: the human switched modes
//	summary     Message, Covers: the oldest Covers messages were replaced by a summary
type Entry struct {
	Time     time.Time         `json:"time"`
	Type     string            `json:"type"`
	Meta     *Meta             `json:"meta,omitempty"`
	Message  *provider.Message `json:"message,omitempty"`
	Tool     string            `json:"tool,omitempty"`
	CallID   string            `json:"callId,omitempty"`
	Args     json.RawMessage   `json:"args,omitempty"`
	Argv     []string          `json:"argv,omitempty"`
	Decision string            `json:"decision,omitempty"`
	Reason   string            `json:"reason,omitempty"`
	Summary  string            `json:"summary,omitempty"`
	IsError  bool              `json:"isError,omitempty"`
	Details  json.RawMessage   `json:"details,omitempty"`
	Full     string            `json:"full,omitempty"`
	Usage    *provider.Usage   `json:"usage,omitempty"`
	Total    *provider.Usage   `json:"total,omitempty"`
	Error    string            `json:"error,omitempty"`
	Mode     string            `json:"mode,omitempty"`
	// Covers is, for a summary, how many of the oldest messages (after the
	// system prompt) it replaces.
	Covers int `json:"covers,omitempty"`
}

// Meta describes a session.
type Meta struct {
	ID      string    `json:"id"`
	Project string    `json:"project"`
	Mode    string    `json:"mode"`
	Loop    string    `json:"loop"`
	Model   string    `json:"model"`
	Started time.Time `json:"started"`
}

// Log is a session's append-only JSON-lines log. Every entry is written and
// synced before the step it records goes on, so a crash loses nothing.
type Log struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// StateDir returns where session logs live: $XDG_STATE_HOME/opair/sessions,
// else ~/.local/state/opair/sessions.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "opair", "sessions"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the session directory: %w (set XDG_STATE_HOME)", err)
	}
	return filepath.Join(home, ".local", "state", "opair", "sessions"), nil
}

// ProjectDir returns the directory of one project's session logs.
func ProjectDir(stateDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(stateDir, filepath.Base(root)+"-"+hex.EncodeToString(sum[:6]))
}

// Create starts a new log for a session of the project at root.
func Create(stateDir string, meta Meta) (*Log, error) {
	dir := ProjectDir(stateDir, meta.Project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the session log directory: %w", err)
	}
	name := meta.Started.UTC().Format("20060102T150405.000Z") + "-" + meta.ID + ".jsonl"
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the session log: %w", err)
	}
	l := &Log{f: f, path: path}
	if err := l.Append(Entry{Type: "meta", Meta: &meta}); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Open reopens an existing log to append to it.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("reopening the session log: %w", err)
	}
	return &Log{f: f, path: path}, nil
}

// Path returns the log's file.
func (l *Log) Path() string { return l.path }

// Append writes one entry and syncs it to disk.
func (l *Log) Append(e Entry) error {
	if l == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding a session log entry: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing the session log %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("syncing the session log %s: %w", l.path, err)
	}
	return nil
}

// Close closes the log.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}

// Read reads every entry of a log. A torn last line (a crash mid-write) is
// skipped.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var e Entry
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				return nil, fmt.Errorf("%s: a line is not valid JSON: %w", path, jerr)
			}
			out = append(out, e)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// History rebuilds the conversation the model saw from a log's entries.
// Calls that were asked for but have no result (a crash mid-call) get a
// result saying so, so the model sees every call answered.
func History(entries []Entry) []provider.Message {
	var msgs []provider.Message
	pending := map[string]string{}
	var order []string
	flush := func() {
		for _, id := range order {
			if name, ok := pending[id]; ok {
				msgs = append(msgs, provider.Message{Role: provider.ToolRole, ToolCallID: id, Name: name,
					Content: "the session ended before this call finished; its result is unknown"})
			}
		}
		pending, order = map[string]string{}, nil
	}
	for _, e := range entries {
		switch e.Type {
		case "user":
			flush()
			if e.Message != nil {
				msgs = append(msgs, *e.Message)
			}
		case "assistant":
			flush()
			if e.Message != nil {
				msgs = append(msgs, *e.Message)
				for _, c := range e.Message.ToolCalls {
					pending[c.ID] = c.Name
					order = append(order, c.ID)
				}
			}
		case "result":
			if e.Message != nil {
				delete(pending, e.CallID)
				msgs = append(msgs, *e.Message)
			}
		case "summary":
			if e.Message != nil && e.Covers <= len(msgs) {
				msgs = append([]provider.Message{*e.Message}, msgs[e.Covers:]...)
			}
		}
	}
	flush()
	return msgs
}

// Info is one logged session, for `opair sessions list`.
type Info struct {
	Path     string
	Meta     Meta
	Turns    int
	Modified time.Time
	First    string // the first thing the human typed
}

// List returns the sessions of a project, newest first.
func List(stateDir, root string) ([]Info, error) {
	dir := ProjectDir(stateDir, root)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, de := range entries {
		if !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, de.Name())
		es, err := Read(p)
		if err != nil || len(es) == 0 || es[0].Meta == nil {
			continue
		}
		in := Info{Path: p, Meta: *es[0].Meta}
		if fi, err := de.Info(); err == nil {
			in.Modified = fi.ModTime()
		}
		for _, e := range es {
			if e.Type == "user" && e.Message != nil {
				in.Turns++
				if in.First == "" {
					in.First = e.Message.Content
				}
			}
		}
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return out, nil
}
