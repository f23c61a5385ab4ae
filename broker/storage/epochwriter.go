package storage

// The log manager's writer of leader-epoch-checkpoint files: a LeaderAndIsr
// that gives thousands of partitions a new epoch only queues their logs
// here, and a few goroutines write the files behind it (tmp file, fsync,
// rename, directory fsync each), so that the request neither waits for the
// fsyncs nor competes for the CPU with thousands of flushers woken at once.
// The files reach disk before any recovery point passes the new entries
// (leaderepoch.go): a flush writes its own log's file first.

import "sync"

// epochWriterParallelism is how many files the writer has in flight: a
// file's fsyncs mostly wait for the file system's journal, which commits
// concurrent fsyncs together.
const epochWriterParallelism = 8

type epochWriter struct {
	mu      sync.Mutex
	queue   []*Log
	queued  map[*Log]bool
	running bool // a drain goroutine is alive
	stopped bool
	wg      sync.WaitGroup // the drain goroutine
}

// add queues l's file. The first add after the queue emptied starts a drain
// goroutine, owned by the writer and ended when the queue is empty or by
// stop.
func (w *epochWriter) add(l *Log) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		// Shutdown: Close writes the file of every log it closes.
		return
	}
	if w.queued == nil {
		w.queued = map[*Log]bool{}
	}
	if !w.queued[l] {
		w.queued[l] = true
		w.queue = append(w.queue, l)
	}
	if !w.running {
		w.running = true
		w.wg.Add(1)
		go w.drain()
	}
}

// drain writes queued files, epochWriterParallelism at a time, until the
// queue is empty or the writer is stopped.
func (w *epochWriter) drain() {
	defer w.wg.Done()
	sem := make(chan struct{}, epochWriterParallelism)
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for {
		w.mu.Lock()
		if w.stopped || len(w.queue) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		l := w.queue[0]
		w.queue[0] = nil
		w.queue = w.queue[1:]
		delete(w.queued, l)
		w.mu.Unlock()
		sem <- struct{}{}
		inflight.Add(1)
		go func() {
			defer func() { <-sem; inflight.Done() }()
			l.writeEpochs()
		}()
	}
}

// stop ends the writer and waits for the files in flight. Queued logs are
// left to their Close.
func (w *epochWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.queue, w.queued = nil, nil
	w.mu.Unlock()
	w.wg.Wait()
}

// writeEpochs writes l's leader-epoch-checkpoint if its cache changed. A
// failure takes the directory offline as any other write would. A closed
// or detached log's cache writes nothing more (stopWriting), so a file is
// never written into a directory being renamed or deleted; a failed
// directory is written no more.
func (l *Log) writeEpochs() {
	if l.dirFailed.Load() {
		return
	}
	if err := l.ioFailed("leader epoch checkpoint", l.epochs.Sync()); err != nil {
		// Every flush that would raise the recovery point, and Close,
		// write it first and fail without it.
		l.logger.Error("writing leader-epoch-checkpoint failed", "err", err)
	}
}
