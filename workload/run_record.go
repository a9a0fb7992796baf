package workload

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"doppel/history"
)

// recorder numbers the run's events, keeps them in memory and appends each to the
// history files as it happens, flushed, so that a run killed at any point leaves a
// checkable history.
type recorder struct {
	mu     sync.Mutex
	start  time.Time
	events []history.Event
	outs   []recorderOut
	err    error // first write error; later events are still kept in memory
}

type recorderOut struct {
	file  *os.File
	buf   *bufio.Writer
	write func(io.Writer, *history.Event) error
}

// History file names in the output directory.
const (
	HistoryEDN  = "history.edn"
	HistoryJSON = "history.jsonl"
)

// historyFileNames returns the history files written for format edn, json or both.
func historyFileNames(format string) ([]string, error) {
	switch format {
	case "", "edn":
		return []string{HistoryEDN}, nil
	case "json":
		return []string{HistoryJSON}, nil
	case "both":
		return []string{HistoryEDN, HistoryJSON}, nil
	}
	return nil, fmt.Errorf("%w: --format must be edn, json or both, not %q", ErrConfig, format)
}

// newRecorder creates the history files for format edn, json or both in dir.
func newRecorder(dir, format string, start time.Time) (*recorder, []string, error) {
	r := &recorder{start: start}
	names, err := historyFileNames(format)
	if err != nil {
		return nil, nil, err
	}
	var paths []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			r.close()
			return nil, nil, err
		}
		w := history.WriteEDN
		if n == HistoryJSON {
			w = history.WriteJSON
		}
		r.outs = append(r.outs, recorderOut{file: f, buf: bufio.NewWriter(f), write: w})
		paths = append(paths, p)
	}
	return r, paths, nil
}

// record sets e's index and time, keeps it, and writes it to every file.
func (r *recorder) record(e history.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Index = int64(len(r.events))
	e.Time = time.Since(r.start).Nanoseconds()
	r.events = append(r.events, e)
	if r.err != nil {
		return
	}
	for _, o := range r.outs {
		if err := o.write(o.buf, &e); err != nil {
			r.err = err
			return
		}
		if err := o.buf.Flush(); err != nil {
			r.err = err
			return
		}
	}
}

// failed returns the first write error, if any.
func (r *recorder) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// close closes the files and returns the first error of the whole recording.
func (r *recorder) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.outs {
		if err := o.buf.Flush(); err != nil && r.err == nil {
			r.err = err
		}
		if err := o.file.Close(); err != nil && r.err == nil {
			r.err = err
		}
	}
	r.outs = nil
	return r.err
}
