package provider

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// client is what both providers share: their settings, the retry loop, and
// the middleware that turns HTTP errors into *APIError and watches for idle
// streams.
type client struct {
	name       string
	baseURL    string // as configured, for messages
	key        string
	keyEnv     string
	model      string
	http       *http.Client
	maxRetries int
	retryDelay time.Duration
	timeout    time.Duration // idle timeout; 0 for none
	onRetry    func(int, time.Duration, error)
}

func newClient(name, defaultBase string, cfg Config) *client {
	c := &client{
		name:       name,
		baseURL:    strings.TrimRight(cfg.BaseURL, "/"),
		key:        cfg.APIKey,
		keyEnv:     cfg.APIKeyEnv,
		model:      cfg.Model,
		http:       cfg.HTTPClient,
		maxRetries: cfg.MaxRetries,
		retryDelay: cfg.RetryDelay,
		timeout:    cfg.Timeout,
		onRetry:    cfg.OnRetry,
	}
	if c.baseURL == "" {
		c.baseURL = defaultBase
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.retryDelay <= 0 {
		c.retryDelay = DefaultRetryDelay
	}
	switch {
	case c.timeout == 0:
		c.timeout = DefaultTimeout
	case c.timeout < 0:
		c.timeout = 0
	}
	return c
}

// modelFor returns the request's model, else the configured one.
func (c *client) modelFor(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return c.model
}

// attempt is one try of a completion. emit passes a text delta on.
type attempt func(ctx context.Context, emit func(string)) (*Response, error)

// complete runs attempts until one succeeds, the error is not temporary,
// text has been emitted, the retries are used up or ctx is done. model is
// the request's model, for error messages.
func (c *client) complete(ctx context.Context, model string, onText func(string), try attempt) (*Response, error) {
	ctx = context.WithValue(ctx, modelKey{}, model)
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		emitted := false
		emit := func(s string) {
			if s == "" {
				return
			}
			emitted = true
			if onText != nil {
				onText(s)
			}
		}
		resp, err := c.try(ctx, emit, try)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		wait, ok := c.retryWait(n, err)
		if emitted || !ok {
			return nil, err
		}
		if c.onRetry != nil {
			c.onRetry(n+1, wait, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// try runs one attempt under the idle watchdog.
func (c *client) try(ctx context.Context, emit func(string), try attempt) (*Response, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.timeout > 0 {
		w := &watchdog{d: c.timeout}
		w.t = time.AfterFunc(c.timeout, func() { cancel(errIdle) })
		defer w.t.Stop()
		actx = context.WithValue(actx, watchdogKey{}, w)
	}
	resp, err := try(actx, emit)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errIdle) {
		return nil, &IdleError{Provider: c.name, BaseURL: c.baseURL, Timeout: c.timeout}
	}
	return resp, err
}

// retryWait says whether err is worth retrying after n retries, and after how
// long.
func (c *client) retryWait(n int, err error) (time.Duration, bool) {
	if n >= c.maxRetries {
		return 0, false
	}
	var ae *APIError
	var idle *IdleError
	switch {
	case errors.As(err, &ae):
		if !ae.Temporary() {
			return 0, false
		}
		if ae.RetryAfter > 0 {
			if ae.RetryAfter > MaxRetryAfter {
				return 0, false
			}
			return ae.RetryAfter, true
		}
	case errors.As(err, &idle):
	default:
		return 0, false
	}
	d := min(c.retryDelay<<min(n, 20), MaxRetryDelay)
	// Jitter: between 75% and 125% of the backoff.
	d = d*3/4 + time.Duration(rand.Int64N(int64(d/2)+1))
	return d, true
}

// watchdog is the idle timer of one attempt, reset by every read.
type watchdog struct {
	mu sync.Mutex
	t  *time.Timer
	d  time.Duration
}

type watchdogKey struct{}

// modelKey carries the request's model to the middleware.
type modelKey struct{}

func (w *watchdog) kick() {
	w.mu.Lock()
	w.t.Reset(w.d)
	w.mu.Unlock()
}

// kickBody resets the watchdog on every read of a response body.
type kickBody struct {
	io.ReadCloser
	w *watchdog
}

func (b *kickBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.kick()
	}
	return n, err
}

// middleware is installed in both SDKs: it turns a transport failure into a
// *ConnError and an HTTP error answer into an *APIError (the SDKs' own errors
// lose bodies they cannot parse, such as Ollama's), and feeds the watchdog.
func (c *client) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil {
		if req.Context().Err() != nil {
			return nil, err
		}
		return nil, &ConnError{Provider: c.name, BaseURL: c.baseURL, Err: unwrapURLError(err)}
	}
	w, _ := req.Context().Value(watchdogKey{}).(*watchdog)
	if w != nil {
		w.kick()
	}
	if res.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		e := c.apiError(res.StatusCode, res.Header, body)
		if m, _ := req.Context().Value(modelKey{}).(string); m != "" {
			e.Model = m
		}
		return nil, e
	}
	if w != nil {
		res.Body = &kickBody{ReadCloser: res.Body, w: w}
	}
	return res, nil
}

// unwrapURLError drops the *url.Error around a transport error, whose text
// repeats the method and the whole URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}
