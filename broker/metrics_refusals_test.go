package broker_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// The validation meters move on the leader for the produce each refuses,
// as Kafka's LogValidator marks them: a corrupt CRC, an offset range that
// does not match the record count, a second batch of another magic, a
// record without key for a compacted topic; each refusal is also counted
// by ErrorsPerSec under its error name. A reassignment that adds a replica
// moves ReassignmentBytesIn on the new replica and ReassignmentBytesOut on
// the leader (and ReplicationBytesIn too, as in Kafka).
func TestMetricsScrapeRefusalsAndReassignment(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, HTTP: true, Overrides: map[string]string{
		"replica.fetch.wait.max.ms": "200",
	}})
	ctx := ctxT(t, 60*time.Second)
	c.CreateTopic("refused", 1, 1, nil)
	compact := "compact"
	c.CreateTopic("compacted", 1, 1, map[string]*string{"cleanup.policy": &compact})
	c.WaitLeaders(20*time.Second, "refused", 1)
	c.WaitLeaders(20*time.Second, "compacted", 1)
	st, _ := c.PartitionState("refused", 0)
	leader := c.Index(st.Leader)
	cst, _ := c.PartitionState("compacted", 0)
	cleader := c.Index(cst.Leader)

	before := scrape(t, c.HTTPAddr(leader))
	cbefore := scrape(t, c.HTTPAddr(cleader))

	build := func(o record.BuildOptions, recs ...record.Record) []byte {
		o.BaseTimestamp = time.Now().UnixMilli()
		for i := range recs {
			recs[i].OffsetDelta = int32(i)
		}
		return record.Build(o, recs)
	}
	dflt := record.DefaultBuildOptions()
	send := func(i int, topic string, batch []byte, want int16, what string) {
		t.Helper()
		if code := produceCode(ctx, t, c.Direct(i), topic, 1, batch); code != want {
			t.Errorf("%s: error %d (%v), want %d", what, code, kerr.ErrorForCode(code), want)
		}
	}

	corrupt := build(dflt, record.Record{Key: []byte("k"), Value: []byte("a value to corrupt")})
	corrupt[len(corrupt)-3] ^= 0xff
	send(leader, "refused", corrupt, kerr.CorruptMessage.Code, "corrupt CRC")

	gap := dflt
	gap.LastOffsetDelta = 4 // five offsets, one record
	send(leader, "refused", build(gap, record.Record{Value: []byte("v")}), kerr.InvalidRecord.Code, "offset range")

	second := build(dflt, record.Record{Value: []byte("w")})
	second[16] = 1 // magic 1 after a magic 2 batch
	if code := produceCode(ctx, t, c.Direct(leader), "refused", 1, append(build(dflt, record.Record{Value: []byte("v")}), second...)); code == 0 {
		t.Error("a magic 1 batch after a magic 2 batch was accepted")
	}

	send(cleader, "compacted", build(dflt, record.Record{Value: []byte("no key")}), kerr.InvalidRecord.Code, "no key on a compacted topic")

	after := scrape(t, c.HTTPAddr(leader))
	cafter := scrape(t, c.HTTPAddr(cleader))
	delta := func(b, a map[string]*dto.MetricFamily, name string, match ...string) float64 {
		return value(a, name, match...) - value(b, name, match...)
	}
	const btm = "kafka_server_brokertopicmetrics_"
	for _, w := range []struct {
		name string
		want float64
	}{
		{btm + "invalidmessagecrcrecords_total", 1},
		{btm + "invalidoffsetorsequencerecords_total", 1},
		{btm + "invalidmagicnumberrecords_total", 1},
	} {
		if d := delta(before, after, w.name); d != w.want {
			t.Errorf("%s grew by %v, want %v", w.name, d, w.want)
		}
	}
	if d := delta(cbefore, cafter, btm+"nokeycompactedtopicrecords_total"); d != 1 {
		t.Errorf("nokeycompactedtopicrecords_total grew by %v, want 1", d)
	}
	if d := delta(before, after, "kafka_network_requestmetrics_errors_total", "request", "Produce", "error", "CORRUPT_MESSAGE"); d != 1 {
		t.Errorf("errors_total{Produce,CORRUPT_MESSAGE} grew by %v, want 1", d)
	}
	if d := delta(cbefore, cafter, "kafka_network_requestmetrics_errors_total", "request", "Produce", "error", "INVALID_RECORD"); d < 1 {
		t.Errorf("errors_total{Produce,INVALID_RECORD} grew by %v, want ≥ 1", d)
	}
	// Klassik converts no message formats: the conversion meters stay 0.
	if v := value(after, btm+"producemessageconversions_total") + value(after, btm+"fetchmessageconversions_total"); v != 0 {
		t.Errorf("message conversions %v, want 0", v)
	}

	// A reassignment adding the other broker to a one-replica partition.
	const moved = "moved"
	c.CreateTopic(moved, 1, 1, nil)
	c.WaitLeaders(20*time.Second, moved, 1)
	mst, _ := c.PartitionState(moved, 0)
	src := c.Index(mst.Leader)
	dst := 1 - src
	prod := c.Client(kgo.DefaultProduceTopic(moved), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value1k := bytes.Repeat([]byte("x"), 1000)
	for i := range 100 {
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "%d", i), Value: value1k}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	srcBefore, dstBefore := scrape(t, c.HTTPAddr(src)), scrape(t, c.HTTPAddr(dst))
	var ra kadm.AlterPartitionAssignmentsReq
	ra.Assign(moved, 0, []int32{c.BrokerID(src), c.BrokerID(dst)})
	res, err := c.Admin().AlterPartitionAssignments(ctx, ra)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Error(); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(30*time.Second, "the reassignment to complete", func() bool {
		st, ok := c.PartitionState(moved, 0)
		return ok && len(st.ISR) == 2 && len(c.Broker(dst).Replicas().Partitions()) > 0 &&
			value(scrape(t, c.HTTPAddr(src)), "kafka_server_replicamanager_reassigningpartitions") == 0
	})
	srcAfter, dstAfter := scrape(t, c.HTTPAddr(src)), scrape(t, c.HTTPAddr(dst))
	if d := delta(dstBefore, dstAfter, btm+"reassignmentbytesin_total"); d < 100*1000 {
		t.Errorf("the new replica's reassignmentbytesin_total grew by %v, want ≥ 100000", d)
	}
	if d := delta(srcBefore, srcAfter, btm+"reassignmentbytesout_total"); d < 100*1000 {
		t.Errorf("the leader's reassignmentbytesout_total grew by %v, want ≥ 100000", d)
	}
	if d := delta(dstBefore, dstAfter, btm+"replicationbytesin_total"); d < 100*1000 {
		t.Errorf("the new replica's replicationbytesin_total grew by %v (reassignment bytes are replication bytes too)", d)
	}
}
