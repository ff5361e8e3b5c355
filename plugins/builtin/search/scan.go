package search

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"syscall"
)

// DefaultMaxFileSize is the largest file Scan reads.
const DefaultMaxFileSize = 64 << 20

// ScanOptions tune Scan.
type ScanOptions struct {
	Workers     int   // 0: a default from GOMAXPROCS
	MaxFileSize int64 // 0: DefaultMaxFileSize; larger files are skipped
	// Window bounds the files in flight (read or waiting to be collected
	// in order); 0: a default.
	Window int
}

// ScanStats counts what a scan did and left out.
type ScanStats struct {
	WalkStats
	Read       int // files read and handed to work
	Binary     int // files holding a NUL byte
	Large      int // files over MaxFileSize
	HardLinked int // files with several links, which may lead outside the project
	Unreadable int // files that could not be opened or read (or were swapped for a link)
}

// Skipped is the number of walked files that were not searched.
func (s ScanStats) Skipped() int { return s.Binary + s.Large + s.HardLinked + s.Unreadable }

type skip int

const (
	notSkipped skip = iota
	skipBinary
	skipLarge
	skipHardLinked
	skipUnreadable
	skipCancelled
)

// Scan walks w, reads each file on a pool of workers, runs work on the
// content of every text file (a file with a NUL byte is binary and
// skipped), and calls collect with the results in walk order, from the
// calling goroutine. work runs concurrently and must not keep data, which is
// reused once it returns. collect returns false to stop the scan early.
func Scan[T any](ctx context.Context, w *Walker, opts ScanOptions, work func(rel string, data []byte) T, collect func(rel string, v T) bool) (ScanStats, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = max(4, runtime.GOMAXPROCS(0)*2)
	}
	maxSize := opts.MaxFileSize
	if maxSize <= 0 {
		maxSize = DefaultMaxFileSize
	}
	window := opts.Window
	if window <= 0 {
		window = 64 * workers
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type job struct {
		idx int
		e   *Entry
	}
	type result struct {
		idx  int
		rel  string
		v    T
		skip skip
	}
	jobs := make(chan job, workers)
	results := make(chan result, workers)
	slots := make(chan struct{}, window)

	var st ScanStats
	var walkErr error
	walkDone := make(chan struct{})
	go func() {
		defer close(walkDone)
		defer close(jobs)
		idx := 0
		st.WalkStats, walkErr = w.Walk(ctx, func(e *Entry) error {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				e.Done()
				return ctx.Err()
			}
			select {
			case jobs <- job{idx, e}:
			case <-ctx.Done():
				e.Done()
				<-slots
				return ctx.Err()
			}
			idx++
			return nil
		})
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for j := range jobs {
				r := result{idx: j.idx, rel: j.e.Rel}
				if ctx.Err() != nil {
					j.e.Done()
					r.skip = skipCancelled
				} else {
					var data []byte
					data, buf, r.skip = readEntry(j.e, buf, maxSize)
					if r.skip == notSkipped {
						r.v = work(j.e.Rel, data)
					}
				}
				results <- r
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	pending := map[int]result{}
	next := 0
	stopped := false
	for r := range results {
		pending[r.idx] = r
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-slots
			switch p.skip {
			case notSkipped:
				st.Read++
				if !stopped && !collect(p.rel, p.v) {
					stopped = true
					cancel()
				}
			case skipBinary:
				st.Binary++
			case skipLarge:
				st.Large++
			case skipHardLinked:
				st.HardLinked++
			case skipUnreadable:
				st.Unreadable++
			}
		}
	}
	<-walkDone
	if stopped {
		return st, nil
	}
	if walkErr != nil {
		return st, walkErr
	}
	return st, ctx.Err()
}

// readEntry opens and reads one walked file, reusing buf.
func readEntry(e *Entry, buf []byte, maxSize int64) ([]byte, []byte, skip) {
	f, err := e.Open()
	e.Done()
	if err != nil {
		return nil, buf, skipUnreadable
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, buf, skipUnreadable
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return nil, buf, skipHardLinked
	}
	size := fi.Size()
	if size > maxSize {
		return nil, buf, skipLarge
	}
	// Read at most maxSize+1 bytes: a file that grew past the limit since
	// its stat is skipped too.
	want := int(size) + 1
	if cap(buf) < want {
		buf = make([]byte, want+want/4)
	}
	data, err := readUpTo(f, buf[:cap(buf)], maxSize+1)
	if err != nil {
		return nil, buf, skipUnreadable
	}
	if int64(len(data)) > maxSize {
		return nil, buf, skipLarge
	}
	if len(data) > cap(buf) {
		buf = data
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, buf, skipBinary
	}
	return data, buf, notSkipped
}

// readUpTo reads r to its end or to limit bytes, into buf while it fits.
func readUpTo(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	n := 0
	for {
		if n == len(buf) {
			if int64(n) >= limit {
				return buf[:n], nil
			}
			nb := make([]byte, min(int64(2*len(buf)+512), limit))
			copy(nb, buf[:n])
			buf = nb
		}
		m, err := r.Read(buf[n:min(len(buf), int(limit))])
		n += m
		if errors.Is(err, io.EOF) {
			return buf[:n], nil
		}
		if err != nil {
			return nil, err
		}
		if int64(n) >= limit {
			return buf[:n], nil
		}
	}
}
