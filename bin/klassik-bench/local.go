package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/storage/record"
)

// The figures measured inside the driver's process: the storage layer
// against raw file writes (the approach of broker/storage's
// BenchmarkAppendVsRaw, with its batch and baseline: storage.BenchBatch,
// storage.RawAppender), its allocations,
// and loopback TCP into a trivial sink, the physical limit of a broker on
// this machine.

// storageResult is one storage run: MB/s through the log and through raw
// writes, and the allocations per log append, per raw write and per
// storage read of a fetch (1 MiB, index lookup, pread).
type storageResult struct {
	logMBps, rawMBps          float64
	appendAllocs, rawAllocs   float64
	readAllocs, rawReadAllocs float64
}

// storageRun appends mb MB of batches, alternately through a storage.Log
// (validation, offsets, epoch stamping, indexes, rolls) and through plain
// os.File writes rolled at the same size with the rolled files fsynced in
// the background, as the log's flusher does, timing each side apart so
// that machine noise hits both alike. Then it counts allocations.
func storageRun(dir string, mb int) (storageResult, error) {
	var res storageResult
	cfg := storage.BenchLogConfig()
	l, err := storage.OpenLog(filepath.Join(dir, "log"), common.TopicPartition{Topic: "bench", Partition: 0}, cfg, time.Now)
	if err != nil {
		return res, err
	}
	defer l.Close()
	raw, err := storage.NewRawAppender(filepath.Join(dir, "raw"), cfg.SegmentBytes)
	if err != nil {
		return res, err
	}
	defer raw.Close()
	batch := storage.BenchBatch()
	n := mb << 20 / len(batch)
	var logTotal, rawTotal time.Duration
	appendLog := func() error {
		record.SetBaseOffset(batch, 0) // the producer always sends 0
		t0 := time.Now()
		_, err := l.AppendAsLeader(batch, 1)
		logTotal += time.Since(t0)
		return err
	}
	appendRaw := func() error {
		t0 := time.Now()
		err := raw.Append(batch)
		rawTotal += time.Since(t0)
		return err
	}
	for i := 0; i < n; i++ {
		first, second := appendLog, appendRaw
		if i&1 == 1 {
			first, second = appendRaw, appendLog
		}
		if err := first(); err != nil {
			return res, err
		}
		if err := second(); err != nil {
			return res, err
		}
	}
	bytes := float64(n) * float64(len(batch)) / 1e6
	res.logMBps, res.rawMBps = bytes/logTotal.Seconds(), bytes/rawTotal.Seconds()

	const allocRuns = 500
	res.appendAllocs = allocsPerRun(allocRuns, func() {
		record.SetBaseOffset(batch, 0)
		_, _ = l.AppendAsLeader(batch, 1)
	})
	res.rawAllocs = allocsPerRun(allocRuns, func() { _ = raw.Append(batch) })

	// A fetch's storage read: the batch holding the offset, up to 1 MiB,
	// copied out with pread (the copy a sendfile would avoid).
	buf := make([]byte, 1<<20+len(batch))
	leo := l.LogEndOffset()
	off := int64(0)
	h := int64(16) // records per batch
	res.readAllocs = allocsPerRun(allocRuns, func() {
		if off >= leo {
			off = 0
		}
		fd, err := l.Read(off, 1<<20, leo, true)
		if err != nil || fd.Records.File == nil {
			return
		}
		m, _ := fd.Records.File.ReadAt(buf[:fd.Records.Size], fd.Records.Pos)
		off = fd.FirstOffset + int64(m/len(batch))*h
	})
	f, err := os.Open(raw.FirstFile())
	if err != nil {
		return res, err
	}
	defer f.Close()
	pos := int64(0)
	res.rawReadAllocs = allocsPerRun(allocRuns, func() {
		m, _ := f.ReadAt(buf[:1<<20], pos)
		pos += int64(m)
		if m < 1<<20 {
			pos = 0
		}
	})
	return res, nil
}

// allocsPerRun is the average number of heap allocations of f (as
// testing.AllocsPerRun counts them, after one warm-up call).
func allocsPerRun(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

// loopbackResult is one loopback run: MB/s of one TCP connection on
// 127.0.0.1 into a sink that discards, and the CPU-seconds per GB both
// ends cost (the driver's own process, from /proc/self/stat).
type loopbackResult struct {
	mbps, cpuPerGB float64
}

// loopbackRun sends mb MB in 1 MiB writes over one loopback connection to
// a goroutine that reads into a 1 MiB buffer and drops it.
func loopbackRun(mb int) (loopbackResult, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return loopbackResult{}, err
	}
	defer ln.Close()
	total := int64(mb) << 20
	got := make(chan error, 1)
	go func() { // the sink: ends at EOF or a read error
		c, err := ln.Accept()
		if err != nil {
			got <- err
			return
		}
		defer c.Close()
		buf := make([]byte, 1<<20)
		var n int64
		for n < total {
			m, err := c.Read(buf)
			n += int64(m)
			if err != nil {
				if err == io.EOF && n >= total {
					break
				}
				got <- fmt.Errorf("sink read after %d bytes: %w", n, err)
				return
			}
		}
		got <- nil
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return loopbackResult{}, err
	}
	defer c.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	cpu0, err := readCPU(os.Getpid())
	if err != nil {
		return loopbackResult{}, err
	}
	start := time.Now()
	for sent := int64(0); sent < total; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			return loopbackResult{}, err
		}
	}
	if err := <-got; err != nil {
		return loopbackResult{}, err
	}
	elapsed := time.Since(start)
	cpu1, err := readCPU(os.Getpid())
	if err != nil {
		return loopbackResult{}, err
	}
	gb := float64(total) / 1e9
	return loopbackResult{mbps: float64(total) / 1e6 / elapsed.Seconds(), cpuPerGB: (cpu1 - cpu0) / gb}, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
