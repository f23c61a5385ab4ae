package storage

import "sync"

// dirSyncer fsyncs one directory on behalf of many callers at once (a
// group commit): a caller's sync returns once an fsync that started
// after the call has finished, so every entry the caller made in the
// directory before calling is durable, while callers that arrive during
// one fsync share the next instead of each paying one. LeaderAndIsr
// creates thousands of partition directories at once in the same log
// directory; each must be durable before its log is used, as one fsync
// of the log directory per creation made it.
type dirSyncer struct {
	path  string
	fsync func(dir string) error // syncDir; tests count calls

	mu      sync.Mutex
	cond    *sync.Cond
	running bool   // an fsync is under way
	started uint64 // fsyncs started
	done    uint64 // fsyncs finished (in order: one runs at a time)
	err     error  // the first failed fsync's error, kept: the directory is failed
}

func newDirSyncer(path string) *dirSyncer {
	s := &dirSyncer{path: path, fsync: syncDir}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// sync returns when an fsync of the directory that started after this
// call has finished; its error (or an earlier one) is returned.
func (s *dirSyncer) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The fsync under way (number started) may have begun before the
	// caller's changes; the next one (started+1) begins after them.
	want := s.started + 1
	for s.done < want {
		if s.running {
			s.cond.Wait()
			continue
		}
		s.running = true
		s.started++
		gen := s.started
		s.mu.Unlock()
		err := s.fsync(s.path)
		s.mu.Lock()
		s.running = false
		s.done = gen
		if err != nil && s.err == nil {
			s.err = err
		}
		s.cond.Broadcast()
	}
	return s.err
}
