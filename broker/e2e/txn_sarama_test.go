package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// The transactions suite (txn_driver_test.go) with sarama's transactional
// SyncProducer (Producer.Transaction.ID, BeginTxn/CommitTxn/AbortTxn,
// AddOffsetsToTxn for the group's offsets) and its consumer at
// Consumer.IsolationLevel ReadCommitted and ReadUncommitted.

// saramaLog is where sarama's log goes (nowhere while nil). sarama logs
// through a package variable that its goroutines read at any time, even
// after a client is closed, so it is set once, before any test runs, to a
// writer that follows saramaLog.
var saramaLog atomic.Pointer[lockedBuffer]

type saramaLogWriter struct{}

func (saramaLogWriter) Write(p []byte) (int, error) {
	if b := saramaLog.Load(); b != nil {
		return b.Write(p)
	}
	return len(p), nil
}

func init() { sarama.Logger = log.New(saramaLogWriter{}, "sarama ", log.Lmicroseconds) }

func TestTxnSarama(t *testing.T) {
	c := startTxnCluster(t)
	s := newTxnSpec(c, "sarama")
	prepareTxnTopics(t, c, s)
	var out txnOut
	runSaramaTxnStory(t, c, s, &out)
	verifyTxnStory(t, c, s, parseTxnLines(t, out.Bytes()), func(committed bool) []txnRecord {
		return saramaReadTxn(t, c, s, committed)
	})
}

func saramaTxnConfig(s txnSpec) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "klassik-txn-sarama"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = s.txnID
	cfg.Producer.Transaction.Timeout = 30 * time.Second
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Retry.Max = 10
	cfg.Net.MaxOpenRequests = 1
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	return cfg
}

func saramaTxnMessages(s txnSpec, label string, n int) []*sarama.ProducerMessage {
	var msgs []*sarama.ProducerMessage
	for i := 0; i < n; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: s.topic, Partition: int32(i % txnPartitions),
			Key: sarama.StringEncoder(fmt.Sprintf("%s-%d", label, i)), Value: sarama.StringEncoder(fmt.Sprintf("%s-%s-%d", s.client, label, i))})
	}
	return msgs
}

func runSaramaTxnStory(t *testing.T, c txnCluster, s txnSpec, out *txnOut) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	saramaLog.Store(clientLog(t, "sarama"))
	defer saramaLog.Store(nil)
	fail := func(step string, err error) {
		t.Helper()
		t.Fatalf("sarama %s: %v\n%s", step, err, txnOffsetsReport(c, s))
	}
	first, err := sarama.NewSyncProducer(c.Bootstrap(), saramaTxnConfig(s))
	if err != nil {
		fail("init", err)
	}
	defer first.Close()
	out.line("STEP init")
	offsetsClient := c.Client()
	offsets := func(label string) {
		t.Helper()
		line, err := groupOffsetsLine(ctx, offsetsClient, s.group, s.input)
		if err != nil {
			fail("offsets "+label, err)
		}
		out.line("OFFSETS %s %s", label, line)
	}
	consumed := map[string][]*sarama.PartitionOffsetMetadata{}
	for p := int32(0); p < txnPartitions; p++ {
		consumed[s.input] = append(consumed[s.input], &sarama.PartitionOffsetMetadata{Partition: p, Offset: txnInput / txnPartitions, LeaderEpoch: -1})
	}
	txn := func(p sarama.SyncProducer, label string, n int, sendOffsets, commit bool) {
		t.Helper()
		if err := p.BeginTxn(); err != nil {
			fail("begin "+label, err)
		}
		if err := p.SendMessages(saramaTxnMessages(s, label, n)); err != nil {
			fail("produce "+label, err)
		}
		if sendOffsets {
			if err := p.AddOffsetsToTxn(consumed, s.group); err != nil {
				fail("offsets in "+label, err)
			}
		}
		if commit {
			if err := p.CommitTxn(); err != nil {
				fail("commit "+label, err)
			}
			out.line("STEP commit %s", label)
			return
		}
		if err := p.AbortTxn(); err != nil {
			fail("abort "+label, err)
		}
		out.line("STEP abort %s", label)
	}
	txn(first, "A", txnSmall, false, true)
	txn(first, "B", txnSmall, true, false)
	offsets("after-abort")
	txn(first, "C", txnInput, true, true)
	offsets("after-commit")

	if err := first.BeginTxn(); err != nil {
		fail("begin F", err)
	}
	if err := first.SendMessages(saramaTxnMessages(s, "F", txnSmall)); err != nil {
		fail("produce F", err)
	}
	out.line("STEP written F")
	// sarama's NewSyncProducer sends InitProducerId for the id.
	second, err := sarama.NewSyncProducer(c.Bootstrap(), saramaTxnConfig(s))
	if err != nil {
		fail("init second", err)
	}
	defer second.Close()
	out.line("STEP init second")
	if err := first.CommitTxn(); err != nil {
		// sarama's KError 90 has no message of its own ("Unknown
		// error"): name the codes.
		name := "other"
		switch {
		case errors.Is(err, sarama.ErrProducerFenced):
			name = "PRODUCER_FENCED"
		case errors.Is(err, sarama.ErrInvalidProducerEpoch):
			name = "INVALID_PRODUCER_EPOCH"
		}
		out.line("FENCED %s: %v (status %v)", name, err, first.TxnStatus())
	} else {
		out.line("STEP commit F (not fenced)")
	}
	txn(second, "E", txnSmall, false, true)
}

// saramaReadTxn reads each partition of the output topic from the oldest
// offset with sarama's consumer until its sentinel.
func saramaReadTxn(t *testing.T, c txnCluster, s txnSpec, committed bool) []txnRecord {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	cfg.Consumer.IsolationLevel = sarama.ReadUncommitted
	if committed {
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	cons, err := sarama.NewConsumer(c.Bootstrap(), cfg)
	if err != nil {
		t.Fatalf("sarama consumer: %v", err)
	}
	defer cons.Close()
	var recs []txnRecord
	for p := int32(0); p < txnPartitions; p++ {
		pc, err := cons.ConsumePartition(s.topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("sarama ConsumePartition %d: %v", p, err)
		}
		timeout := time.After(30 * time.Second)
	read:
		for {
			select {
			case m := <-pc.Messages():
				recs = append(recs, txnRecord{p: m.Partition, offset: m.Offset, key: string(m.Key), value: string(m.Value)})
				if string(m.Key) == txnSentinel {
					break read
				}
			case e := <-pc.Errors():
				t.Logf("sarama partition %d: %v", p, e)
			case <-timeout:
				t.Errorf("sarama consumer (committed=%v): no sentinel on partition %d within 30s; %s", committed, p, txnOffsetsReport(c, s))
				break read
			}
		}
		pc.Close()
	}
	return recs
}
