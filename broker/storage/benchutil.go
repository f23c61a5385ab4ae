package storage

import (
	"os"
	"path/filepath"

	"github.com/klassik/klassik/broker/storage/record"
)

// Benchmark support, shared by this package's benchmarks (bench_test.go)
// and bin/klassik-bench, so that both append the same batch and compare
// with the same raw-write baseline. Nothing in the broker uses it.

// BenchBatch is the benchmarks' producer batch: 16 uncompressed records
// of 1000-byte values with the key "key", 16 KiB in all.
func BenchBatch() []byte {
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = 1700000000000
	recs := make([]record.Record, 16)
	for i := range recs {
		v := make([]byte, 1000)
		for j := range v {
			v[j] = byte(i + j)
		}
		recs[i] = record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte("key"), Value: v}
	}
	return record.Build(opts, recs)
}

// BenchLogConfig is DefaultLogConfig with 64 MiB segments, so that a
// benchmark run rolls several times.
func BenchLogConfig() LogConfig {
	c := DefaultLogConfig()
	c.SegmentBytes = 64 << 20
	return c
}

// RawAppender is the baseline any log append path is measured against:
// batches written to plain files with os.File writes, rolled at the same
// size as the log's segments, and, like the log's flusher goroutine,
// each rolled file fsynced (then closed) by a syncer goroutine off the
// append path. NewRawAppender starts the syncer; Close stops it and waits.
type RawAppender struct {
	dir      string
	segBytes int64
	first    string // the first file's path
	f        *os.File
	n        int
	size     int64
	rolled   chan *os.File
	done     chan error
}

// NewRawAppender writes into dir (created if missing), rolling files at
// segBytes.
func NewRawAppender(dir string, segBytes int64) (*RawAppender, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r := &RawAppender{dir: dir, segBytes: segBytes, rolled: make(chan *os.File, 16), done: make(chan error, 1)}
	go func() { // the syncer: ends when Close closes rolled
		var first error
		for f := range r.rolled {
			if err := f.Sync(); err != nil && first == nil {
				first = err
			}
			f.Close()
		}
		r.done <- first
	}()
	if err := r.roll(); err != nil {
		close(r.rolled)
		<-r.done
		return nil, err
	}
	return r, nil
}

func (r *RawAppender) roll() error {
	if r.f != nil {
		r.rolled <- r.f
	}
	name := filepath.Join(r.dir, filenamePrefixFromOffset(int64(r.n))+".raw")
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if r.n == 0 {
		r.first = name
	}
	r.f, r.size = f, 0
	r.n++
	return nil
}

// Append writes batch, rolling to a new file first if it would pass the
// segment size.
func (r *RawAppender) Append(batch []byte) error {
	if r.size+int64(len(batch)) > r.segBytes {
		if err := r.roll(); err != nil {
			return err
		}
	}
	_, err := r.f.Write(batch)
	r.size += int64(len(batch))
	return err
}

// FirstFile is the path of the first file written.
func (r *RawAppender) FirstFile() string { return r.first }

// Close closes the current file, stops the syncer and returns the first
// fsync error it met.
func (r *RawAppender) Close() error {
	r.f.Close()
	close(r.rolled)
	return <-r.done
}
