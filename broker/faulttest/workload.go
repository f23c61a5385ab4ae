package faulttest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// Ack is one acknowledged record.
type Ack struct {
	ID        string
	Seq       int64
	Partition int32
	Offset    int64
}

// WorkloadOptions bound a Workload.
type WorkloadOptions struct {
	Topic      string
	Partitions int32
	Prefix     string        // record id prefix, default "r"
	Interval   time.Duration // one record per partition per interval, default 10ms
	MaxRecords int           // stop issuing after this many records, default 20000
	ValueSize  int           // pad values to this size (0: just the id)
	ClientOpts []kgo.Opt     // appended to ProducerOpts (e.g. acks=1 without idempotence)
}

// maxRecordsCap bounds WorkloadOptions.MaxRecords.
const maxRecordsCap = 100000

// Workload is an idempotent acks=all producer sending records
// "<prefix>-<seq>" round-robin over the partitions at a bounded rate, until
// Stop or MaxRecords. Each acknowledgement goes to the Checker and to the
// Acks list. Its one goroutine (the send loop) is owned by the Workload and
// ended by Stop.
type Workload struct {
	opts WorkloadOptions
	cl   *kgo.Client
	chk  *testcluster.Checker
	stop chan struct{}
	done chan struct{}

	sent, acked, failed atomic.Int64

	// mu guards the following.
	mu       sync.Mutex
	acks     []Ack
	firstErr error
}

// ProducerOpts are the client options of every fault workload: idempotence
// (kgo's default) with acks=all, unlimited retries within a long delivery
// timeout, and a manual partitioner so records go where the loop says.
func ProducerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(60 * time.Second),
		kgo.ProducerLinger(2 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(200 * time.Millisecond),
		kgo.MaxBufferedRecords(maxRecordsCap + 1),
	}
}

// StartWorkload starts producing.
func StartWorkload(c *Cluster, chk *testcluster.Checker, o WorkloadOptions) *Workload {
	if o.Prefix == "" {
		o.Prefix = "r"
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Millisecond
	}
	if o.MaxRecords <= 0 || o.MaxRecords > maxRecordsCap {
		o.MaxRecords = 20000
	}
	w := &Workload{opts: o, cl: c.Client(append(ProducerOpts(), o.ClientOpts...)...), chk: chk, stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// RecordID is the id of the seq-th record of a producer.
func RecordID(prefix string, seq int64) string { return prefix + "-" + strconv.FormatInt(seq, 10) }

// ParseRecordID splits a record value made by the Workload into its prefix
// and sequence number (padding after a '|' is ignored).
func ParseRecordID(value []byte) (prefix string, seq int64, err error) {
	s := string(value)
	if i := strings.IndexByte(s, '|'); i >= 0 {
		s = s[:i]
	}
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return "", 0, fmt.Errorf("faulttest: record value %.40q is not <prefix>-<seq>", s)
	}
	seq, err = strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil || seq < 0 {
		return "", 0, fmt.Errorf("faulttest: record value %.40q has no sequence number", s)
	}
	return s[:i], seq, nil
}

// ValueID returns the record id carried by a value (the part before '|').
func ValueID(value []byte) string {
	s := string(value)
	if i := strings.IndexByte(s, '|'); i >= 0 {
		return s[:i]
	}
	return s
}

func (w *Workload) loop() {
	defer close(w.done)
	// Records are never cancelled: the buffer (ProducerOpts) holds more
	// than MaxRecords, so Produce does not block, and Stop flushes.
	ctx := context.Background()
	tick := time.NewTicker(w.opts.Interval)
	defer tick.Stop()
	var seq int64
	for int(seq) < w.opts.MaxRecords {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		for p := int32(0); p < w.opts.Partitions && int(seq) < w.opts.MaxRecords; p++ {
			id := RecordID(w.opts.Prefix, seq)
			val := []byte(id)
			if w.opts.ValueSize > len(val)+1 {
				pad := make([]byte, w.opts.ValueSize)
				copy(pad, id)
				pad[len(id)] = '|'
				for i := len(id) + 1; i < len(pad); i++ {
					pad[i] = 'x'
				}
				val = pad
			}
			s := seq
			w.sent.Add(1)
			w.cl.Produce(ctx, &kgo.Record{Topic: w.opts.Topic, Partition: p, Value: val}, func(r *kgo.Record, err error) {
				if err != nil {
					w.failed.Add(1)
					w.mu.Lock()
					if w.firstErr == nil {
						w.firstErr = err
					}
					w.mu.Unlock()
					return
				}
				w.acked.Add(1)
				w.chk.Acked(id, s, r.Partition, r.Offset)
				w.mu.Lock()
				w.acks = append(w.acks, Ack{ID: id, Seq: s, Partition: r.Partition, Offset: r.Offset})
				w.mu.Unlock()
			})
			seq++
		}
	}
}

// Sent is the number of records handed to the producer so far.
func (w *Workload) Sent() int64 { return w.sent.Load() }

// Acks is a snapshot of the acknowledgements so far.
func (w *Workload) Acks() []Ack {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Ack(nil), w.acks...)
}

// Acked is the number of acknowledged records so far.
func (w *Workload) Acked() int64 { return w.acked.Load() }

// WaitProgress waits until n more records than now are acknowledged, and
// reports whether that happened within timeout.
func (w *Workload) WaitProgress(n int64, timeout time.Duration) bool {
	target := w.acked.Load() + n
	deadline := time.Now().Add(timeout)
	for w.acked.Load() < target {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// Stop ends the send loop and waits (bounded by the delivery timeout) for
// every record in flight to be acknowledged or failed. It returns the
// acknowledgements, the number of failed records and the first failure.
func (w *Workload) Stop() (acks []Ack, failed int64, firstErr error) {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := w.cl.Flush(ctx); err != nil {
		w.mu.Lock()
		if w.firstErr == nil {
			w.firstErr = fmt.Errorf("flush: %w", err)
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Ack(nil), w.acks...), w.failed.Load(), w.firstErr
}

// Summary is "sent=... acked=... failed=...".
func (w *Workload) Summary() string {
	return fmt.Sprintf("sent=%d acked=%d failed=%d", w.sent.Load(), w.acked.Load(), w.failed.Load())
}
