package search

import (
	"bytes"
	"context"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
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
	// Both queues hold the whole window: the walker then runs ahead in long
	// stretches instead of waking for every file a worker takes, and the
	// workers never wait on the collector.
	jobs := make(chan job, window)
	results := make(chan result, window)
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
			bp := readBufs.Get().(*[]byte)
			defer putReadBuf(bp)
			buf := *bp
			defer func() { *bp = buf }()
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
					if cap(buf) > maxPooledBuf {
						buf = nil // a huge file's buffer is not kept
					}
				}
				results <- r
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	// Results come back in any order; ring holds them by walk index until
	// their turn (at most window are in flight).
	ring := make([]result, window)
	have := make([]bool, window)
	next := 0
	stopped := false
	for r := range results {
		ring[r.idx%window], have[r.idx%window] = r, true
		for have[next%window] {
			p := ring[next%window]
			ring[next%window], have[next%window] = result{}, false
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

// readBufs hold the workers' read buffers across scans.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf: larger read buffers are left to the garbage collector.
const maxPooledBuf = 8 << 20

func putReadBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledBuf {
		readBufs.Put(bp)
	}
}

// firstChunk is how much of a file is read before the rest: a binary file
// (a NUL byte in it) is usually recognised there, and the rest of it is
// then never read.
const firstChunk = 64 << 10

// readEntry opens and reads one walked file, reusing buf. It works on the
// raw descriptor (no *os.File: no poller registration, no allocation) and
// reads a file of the size fstat gives in one read when it fits the first
// chunk, in two otherwise. A file with a NUL byte anywhere is binary.
func readEntry(e *Entry, buf []byte, maxSize int64) ([]byte, []byte, skip) {
	if e.dir == nil {
		return nil, buf, skipUnreadable
	}
	fd, err := e.openFd()
	e.Done()
	if err != nil {
		return nil, buf, skipUnreadable
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, buf, skipUnreadable
	}
	if st.Nlink > 1 {
		return nil, buf, skipHardLinked
	}
	size := st.Size
	if size > maxSize {
		return nil, buf, skipLarge
	}
	// Room for one byte more than the size: a file that grew since the
	// fstat is read on to its end (or past the limit, and skipped).
	want := int(size) + 1
	if cap(buf) < want {
		buf = make([]byte, max(want+want/4, 2*cap(buf), 64<<10))
	}
	buf = buf[:cap(buf)]
	n := 0
	// First chunk: a binary file usually shows its NUL byte there.
	first := min(want, firstChunk)
	n, err = readFull(fd, buf[:first], min(first, int(size)))
	if err != nil {
		return nil, buf, skipUnreadable
	}
	if bytes.IndexByte(buf[:n], 0) >= 0 {
		return nil, buf, skipBinary
	}
	if n == first && first < want {
		// The rest, as the size says, and anything the file grew by.
		m, err := readFull(fd, buf[n:want], int(size)-n)
		if err != nil {
			return nil, buf, skipUnreadable
		}
		if bytes.IndexByte(buf[n:n+m], 0) >= 0 {
			return nil, buf, skipBinary
		}
		n += m
	}
	if n == want {
		// The file grew past its size: read on up to the limit.
		var data []byte
		data, err = readUpTo(fd, buf, n, maxSize+1)
		if err != nil {
			return nil, buf, skipUnreadable
		}
		if len(data) > cap(buf) {
			buf = data
		}
		if int64(len(data)) > maxSize {
			return nil, buf, skipLarge
		}
		if bytes.IndexByte(data[want:], 0) >= 0 {
			return nil, buf, skipBinary
		}
		return data, buf, notSkipped
	}
	return buf[:n], buf, notSkipped
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		err := unix.Fstat(fd, st)
		if err != unix.EINTR {
			return err
		}
	}
}

// readFull reads into b until it is full, the file ends (a read returns
// 0), or a read comes back short once expect bytes are in: a regular file
// gives less than asked only at its end, and expect is where fstat said the
// end is, so the usual file takes one read, not two.
func readFull(fd int, b []byte, expect int) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Read(fd, b[n:])
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
		if n >= expect && n < len(b) {
			break
		}
	}
	return n, nil
}

// readUpTo reads fd on to its end or to limit bytes, after the n bytes
// already in buf, growing buf as needed.
func readUpTo(fd int, buf []byte, n int, limit int64) ([]byte, error) {
	for {
		if n == len(buf) {
			if int64(n) >= limit {
				return buf[:n], nil
			}
			nb := make([]byte, min(int64(2*len(buf)+512), limit))
			copy(nb, buf[:n])
			buf = nb
		}
		m, err := unix.Read(fd, buf[n:min(len(buf), int(limit))])
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
		if int64(n) >= limit {
			return buf[:n], nil
		}
	}
}
