package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

// A __transaction_state segment written by a real transaction coordinator,
// dumped with --transaction-log-decoder through the script: one record per
// state change of one committed transaction (InitProducerId's Empty,
// AddPartitionsToTxn's Ongoing, EndTxn's PrepareCommit, the markers'
// CompleteCommit), each line in the format of Kafka's DumpLogSegments with
// TransactionLog.formatRecordKeyAndValue.
func TestTransactionLogDecoderOnRealSegment(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "orders", 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a failure only
	defer cancel()
	cl := c.Client(kgo.TransactionalID("dump-txn"), kgo.TransactionTimeout(45*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("transactional produce: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit: %v", err)
	}
	adm := c.Admin()
	var pid int64
	c.WaitFor(time.Minute, "dump-txn CompleteCommit", func() bool {
		d, err := adm.DescribeTransactions(ctx, "dump-txn")
		pid = d["dump-txn"].ProducerID
		return err == nil && d["dump-txn"].State == "CompleteCommit"
	})

	// The coordinator's partition of dump-txn is the one __transaction_state
	// log with records; the broker is stopped so the segment is complete.
	var segment string
	for tp, l := range c.Broker(0).LogManager().AllLogs() {
		if tp.Topic == "__transaction_state" && l.LogEndOffset() > 0 {
			if segment != "" {
				t.Fatalf("two __transaction_state partitions with records: %s and %s", segment, l.Dir())
			}
			segment = filepath.Join(l.Dir(), fmt.Sprintf("%020d.log", l.SegmentBaseOffsets()[0]))
		}
	}
	if segment == "" {
		t.Fatal("no __transaction_state partition holds records")
	}
	c.StopBroker(0)
	if _, err := os.Stat(segment); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runScript(t, "--transaction-log-decoder", "--files", segment)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q\n%s", code, errOut, out)
	}
	var records []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| offset: ") {
			records = append(records, line)
		}
	}
	states := []struct{ state, partitions string }{
		{"Empty", ""}, {"Ongoing", "orders-0"}, {"PrepareCommit", "orders-0"}, {"CompleteCommit", ""},
	}
	if len(records) != len(states) {
		t.Fatalf("%d records, want %d:\n%s", len(records), len(states), out)
	}
	for i, s := range states {
		want := regexp.MustCompile(fmt.Sprintf(`^\| offset: %d CreateTime: \d+ keySize: 12 valueSize: \d+ sequence: -1 headerKeys: \[\] `+
			`key: transaction_metadata::transactionalId=dump-txn `+
			`payload: producerId:%d,producerEpoch:0,state=%s,partitions=\[%s\],txnLastUpdateTimestamp=\d+,txnTimeoutMs=45000$`,
			i, pid, s.state, s.partitions))
		if !want.MatchString(records[i]) {
			t.Errorf("record %d:\n%s\nwant %s", i, records[i], want)
		}
	}
}
