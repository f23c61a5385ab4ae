package faulttest_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/faulttest"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/broker/testcluster/proc"
)

// TestTxnOpenAcrossClusterRestart: every broker is killed -9 while a
// transaction is open, after one committed and one aborted transaction,
// and restarted. Recovery must rebuild what the transactions left on
// disk: the open transaction in each partition's producer state (the
// last stable offset is back at its first offset, below the high
// watermark), the aborted one in the .txnindex (read_committed still drops
// it), and the open transaction in __transaction_state (the same
// producer, reconnecting, commits it). Afterwards read_committed sees
// exactly the first and third transactions' records, read_uncommitted
// all three.
func TestTxnOpenAcrossClusterRestart(t *testing.T) {
	const topic, id = "txn-restart", "txn-restart-id"
	c := faulttest.Start(t, faulttest.Options{Brokers: 3, Overrides: map[string]string{
		"transaction.state.log.num.partitions":     strconv.Itoa(txnStatePartition),
		"transaction.state.log.replication.factor": "3",
		"transaction.state.log.min.isr":            "2",
	}})
	c.CreateTopic(topic, faulttest.RoundRobin(txnCopyPartitions, 3, 3), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	log := &logBuffer{}
	defer func() {
		if t.Failed() {
			t.Logf("producer log (tail):\n%s", proc.TailString(log.String(), 80))
		}
	}()
	p := c.Client(kgo.TransactionalID(id), kgo.TransactionTimeout(120*time.Second), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithLogger(kgo.BasicLogger(log, kgo.LogLevelInfo, nil)),
		kgo.RetryTimeout(60*time.Second))
	records := func(label string, n int) []*kgo.Record {
		var rs []*kgo.Record
		for i := 0; i < n; i++ {
			k := []byte(fmt.Sprintf("%s-%d", label, i))
			rs = append(rs, &kgo.Record{Partition: int32(i % txnCopyPartitions), Key: k, Value: k})
		}
		return rs
	}
	txn := func(label string, commit kgo.TransactionEndTry) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatalf("begin %s: %v", label, err)
		}
		if err := p.ProduceSync(ctx, records(label, 30)...).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", label, err)
		}
		if err := p.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("end %s: %v", label, err)
		}
	}
	txn("committed", kgo.TryCommit)
	txn("aborted", kgo.TryAbort)
	if err := p.BeginTransaction(); err != nil {
		t.Fatalf("begin open: %v", err)
	}
	if err := p.ProduceSync(ctx, records("open", 30)...).FirstErr(); err != nil {
		t.Fatalf("produce open: %v", err)
	}
	before := stableOffsets(t, c, topic)
	t.Logf("before the restart, with a transaction open: %v", before)

	for i := 0; i < c.N(); i++ {
		c.Kill9(i)
	}
	for i := 0; i < c.N(); i++ {
		c.Restart(i)
	}
	c.WaitFullISR(topic, txnCopyPartitions, 60*time.Second)
	c.WaitFullISR(txnStateTopic, txnStatePartition, 60*time.Second)
	var after map[int32][2]int64
	if !testcluster.Poll(30*time.Second, func() bool { after = stableOffsets(t, c, topic); return len(after) == txnCopyPartitions }) {
		t.Fatalf("ListOffsets after the restart: %v", after)
	}
	t.Logf("after the restart: %v", after)
	for q, b := range before {
		if after[q] != b {
			t.Errorf("partition %d: last stable offset and high watermark %v after the restart, %v before: the open transaction's producer state was not recovered", q, after[q], b)
		}
	}

	if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("committing the open transaction after the restart: %v", err)
	}
	var end map[int32][2]int64
	if !testcluster.Poll(30*time.Second, func() bool {
		end = stableOffsets(t, c, topic)
		for _, o := range end {
			if o[0] != o[1] {
				return false
			}
		}
		return len(end) == txnCopyPartitions
	}) {
		t.Errorf("after the commit: last stable offsets below the high watermarks: %v", end)
	}

	prod := c.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for q := int32(0); q < txnCopyPartitions; q++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: q, Key: []byte("END"), Value: []byte("END")}).FirstErr(); err != nil {
			t.Fatalf("sentinel to partition %d: %v", q, err)
		}
	}
	for _, committed := range []bool{true, false} {
		want := map[int32][]string{}
		for _, label := range []string{"committed", "aborted", "open"} {
			if committed && label == "aborted" {
				continue
			}
			for i := 0; i < 30; i++ {
				q := int32(i % txnCopyPartitions)
				want[q] = append(want[q], fmt.Sprintf("%s-%d", label, i))
			}
		}
		got := readOutput(t, c, topic, committed)
		for q := int32(0); q < txnCopyPartitions; q++ {
			var keys []string
			for _, r := range got[q] {
				keys = append(keys, string(r.Key))
			}
			if !slices.Equal(keys, want[q]) {
				t.Errorf("partition %d read_committed %v after the restart: read %s\n  want %s", q, committed, strings.Join(keys, ","), strings.Join(want[q], ","))
			}
		}
	}
}

// stableOffsets returns each partition's [last stable offset, high
// watermark] as its leader answers ListOffsets; partitions that answer an
// error are left out.
func stableOffsets(t *testing.T, c *faulttest.Cluster, topic string) map[int32][2]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := c.Client()
	defer cl.Close()
	res := map[int32][2]int64{}
	failed := map[int32]bool{}
	for _, iso := range []int8{1, 0} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.IsolationLevel = iso
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		for q := int32(0); q < txnCopyPartitions; q++ {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = q, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if kerr.ErrorForCode(rp.ErrorCode) != nil {
					failed[rp.Partition] = true
					continue
				}
				o := res[rp.Partition]
				if iso == 1 {
					o[0] = rp.Offset
				} else {
					o[1] = rp.Offset
				}
				res[rp.Partition] = o
			}
		}
	}
	for q := range failed {
		delete(res, q)
	}
	return res
}
