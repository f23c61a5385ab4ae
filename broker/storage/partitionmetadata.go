package storage

// partition.metadata: the topic id (KIP-516) of the
// topic a partition directory belongs to, so that data on disk is never
// orphaned from its topic's incarnation. Two lines, no trailing newline:
//
//	version: 0
//	topic_id: nI4cjbI6TRmG5jBrqZVqjA

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

const partitionMetadataFile = "partition.metadata"

// EncodePartitionMetadata renders the file for topic id id.
func EncodePartitionMetadata(id [16]byte) []byte {
	return []byte("version: 0\ntopic_id: " + base64.RawURLEncoding.EncodeToString(id[:]))
}

// DecodePartitionMetadata parses the file; the all-zero id and any version
// but 0 are errors.
func DecodePartitionMetadata(data []byte) ([16]byte, error) {
	var id [16]byte
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) != 2 {
		return id, fmt.Errorf("storage: partition.metadata: want 2 lines, have %d", len(lines))
	}
	field := func(line, name string) (string, error) {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != name {
			return "", fmt.Errorf("storage: partition.metadata: expected %q, found %q", name, line)
		}
		return strings.TrimSpace(v), nil
	}
	v, err := field(lines[0], "version")
	if err != nil {
		return id, err
	}
	if v != "0" {
		return id, fmt.Errorf("storage: partition.metadata: unsupported version %q", v)
	}
	enc, err := field(lines[1], "topic_id")
	if err != nil {
		return id, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) != 16 {
		return id, fmt.Errorf("storage: partition.metadata: bad topic id %q", enc)
	}
	copy(id[:], raw)
	if id == ([16]byte{}) {
		return id, errors.New("storage: partition.metadata: the all-zero topic id is invalid")
	}
	return id, nil
}

// TopicID returns the topic id recorded in partition.metadata; ok is false
// when the partition has none yet.
func (l *Log) TopicID() (id [16]byte, ok bool, err error) {
	l.topicIDMu.Lock()
	defer l.topicIDMu.Unlock()
	return l.topicIDLocked()
}

func (l *Log) topicIDLocked() ([16]byte, bool, error) {
	if l.topicIDKnown {
		return l.topicID, true, nil
	}
	data, err := os.ReadFile(filepath.Join(l.dir, partitionMetadataFile))
	if errors.Is(err, os.ErrNotExist) {
		return [16]byte{}, false, nil
	}
	if err != nil {
		return [16]byte{}, false, fmt.Errorf("storage: read partition.metadata: %w", err)
	}
	id, err := DecodePartitionMetadata(data)
	if err != nil {
		return [16]byte{}, false, err
	}
	l.topicID, l.topicIDKnown = id, true
	return id, true, nil
}

// SetTopicID records id as the partition's topic id the first time the
// broker learns it. partition.metadata is written (atomically: tmp,
// fsync, rename, fsync of the directory) by the log's flusher goroutine
// soon after, and in any case before the next append and by Close; a log
// removed first (detach) drops the write. A LeaderAndIsr of a new topic
// records the ids of thousands of new logs at once, and writing each file
// inside the request (two fsyncs per log) made it wait for them all;
// Kafka defers this write the same way since 2.8.1 (KAFKA-13092).
// Nothing needs the file before the log holds records of the topic's
// incarnation: a crash before it was written leaves an empty log without
// it, which the next LeaderAndIsr gives its id again.
//
// A different id already known is an INCONSISTENT_TOPIC_ID: the directory
// belongs to an older incarnation of the topic.
func (l *Log) SetTopicID(id [16]byte) error {
	if id == ([16]byte{}) {
		return nil
	}
	l.topicIDMu.Lock()
	cur, ok, err := l.topicIDLocked()
	if err != nil {
		l.topicIDMu.Unlock()
		return err
	}
	if ok {
		l.topicIDMu.Unlock()
		if cur != id {
			return fmt.Errorf("%w: %s holds topic id %s, the controller names %s", kerr.InconsistentTopicID, l.dir,
				base64.RawURLEncoding.EncodeToString(cur[:]), base64.RawURLEncoding.EncodeToString(id[:]))
		}
		return nil
	}
	l.topicID, l.topicIDKnown = id, true
	l.topicIDUnwritten.Store(true)
	l.topicIDMu.Unlock()
	if l.flushKick == nil {
		// No flusher (not loaded by loadLog): write it now.
		return l.writeTopicID()
	}
	l.kickFlusher()
	return nil
}

// topicIDWriters bounds the partition.metadata writes of flushers and
// of Close under way in the process: the flushers of thousands of new
// logs are kicked at once, a shutdown closes every log at once, and each
// write holds a thread in its fsyncs.
var topicIDWriters = make(chan struct{}, 16)

// writeTopicIDInTurn is writeTopicID in one of topicIDWriters' slots; it
// returns without writing if stop is closed first (nil: never).
func (l *Log) writeTopicIDInTurn(stop <-chan struct{}) error {
	if !l.topicIDUnwritten.Load() {
		return nil
	}
	select {
	case topicIDWriters <- struct{}{}:
	case <-stop:
		return nil
	}
	defer func() { <-topicIDWriters }()
	return l.writeTopicID()
}

// writeTopicID writes the recorded topic id to partition.metadata if it
// is not there yet (see SetTopicID); an I/O error fails the log's
// directory.
func (l *Log) writeTopicID() error {
	if !l.topicIDUnwritten.Load() {
		return nil
	}
	l.topicIDMu.Lock()
	defer l.topicIDMu.Unlock()
	if !l.topicIDUnwritten.Load() {
		return nil
	}
	if l.dirFailed.Load() {
		return l.errOffline()
	}
	if err := writeFileAtomic(filepath.Join(l.dir, partitionMetadataFile), EncodePartitionMetadata(l.topicID)); err != nil {
		return l.ioFailed("partition.metadata", fmt.Errorf("storage: write partition.metadata: %w", err))
	}
	l.topicIDUnwritten.Store(false)
	return nil
}

// dropUnwrittenTopicID forgets a partition.metadata write not yet done:
// the log is being removed (its directory is renamed for deletion next),
// or closed as after a crash. A write under way finishes first.
func (l *Log) dropUnwrittenTopicID() {
	l.topicIDMu.Lock()
	l.topicIDUnwritten.Store(false)
	l.topicIDMu.Unlock()
}
