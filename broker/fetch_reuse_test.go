package broker_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
)

// A connection answers its fetches in memory it keeps from one fetch to
// the next (network.FetchScratch): the response, its topic and partition
// lists, the reads and the purgatory keys. Nothing of an earlier answer
// may show through: every fetch on a connection that has answered larger,
// smaller, parked and failed fetches before gets the same answer, byte for
// byte once decoded, as the same fetch on a new connection.
func TestFetchAnswersOnAKeptConnection(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.CreateTopic("ra", 4, 1, nil)
	c.CreateTopic("rb", 3, 1, nil)
	c.WaitLeaders(30*time.Second, "ra", 4)
	c.WaitLeaders(30*time.Second, "rb", 3)
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	produce := func(topic string, p int32, n int) {
		t.Helper()
		for i := range n {
			r := &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", topic, p, i)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce to %s-%d: %v", topic, p, err)
			}
		}
	}
	for p := range int32(4) {
		produce("ra", p, 3+int(p))
	}
	for p := range int32(3) {
		produce("rb", p, 2)
	}
	td, err := c.Admin().ListTopics(ctx, "ra", "rb")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][16]byte{"ra": td["ra"].ID, "rb": td["rb"].ID}

	type part struct {
		topic  string
		p      int32
		offset int64
	}
	fetch := func(version int16, maxWait, minBytes, maxBytes int32, parts ...part) []byte {
		req := kmsg.NewPtrFetchRequest()
		req.Version = version
		req.ReplicaID = -1
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, minBytes, maxBytes
		req.SessionEpoch = -1
		for _, pt := range parts {
			if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != pt.topic {
				rt := kmsg.NewFetchRequestTopic()
				rt.Topic = pt.topic
				rt.TopicID = ids[pt.topic]
				if pt.topic == "unknown" {
					rt.TopicID = [16]byte{1, 2, 3}
				}
				req.Topics = append(req.Topics, rt)
			}
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = pt.p, pt.offset, 1<<20
			fp.CurrentLeaderEpoch, fp.LastFetchedEpoch, fp.LogStartOffset = -1, -1, -1
			rt := &req.Topics[len(req.Topics)-1]
			rt.Partitions = append(rt.Partitions, fp)
		}
		return encodeFrame(req)
	}
	decode := func(version int16, body []byte) *kmsg.FetchResponse {
		t.Helper()
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = version
		b := body
		if version >= 12 {
			b = body[1:] // the response header's tags
		}
		if err := resp.ReadFrom(b); err != nil {
			t.Fatalf("decoding a v%d fetch response: %v", version, err)
		}
		resp.ThrottleMillis = 0
		return resp
	}

	all := []part{{"ra", 0, 0}, {"ra", 1, 0}, {"ra", 2, 0}, {"ra", 3, 0}, {"rb", 0, 0}, {"rb", 1, 0}, {"rb", 2, 0}}
	type step struct {
		name    string
		version int16
		frame   []byte
		records int // records the answer must hold, in total
	}
	steps := []step{
		{"all partitions of both topics", 13, fetch(13, 0, 0, 50<<20, all...), 24},
		{"one partition", 13, fetch(13, 0, 0, 50<<20, part{"rb", 1, 0}), 2},
		{"by topic name, from offsets inside the logs", 12, fetch(12, 0, 0, 50<<20, part{"ra", 3, 2}, part{"ra", 1, 1}, part{"rb", 2, 1}), 4 + 3 + 1},
		{"a response max_bytes of one byte (one batch)", 13, fetch(13, 0, 0, 1, all...), 1},
		{"a long poll at the log end that times out", 13, fetch(13, 30, 1, 50<<20, part{"ra", 0, 3}, part{"rb", 0, 2}, part{"rb", 2, 2}), 0},
		{"an unknown topic id", 13, fetch(13, 0, 0, 50<<20, part{"unknown", 0, 0}), 0},
		{"an offset out of range", 13, fetch(13, 0, 0, 50<<20, part{"ra", 2, 99}, part{"rb", 0, 0}), 2},
	}
	kept := dialBench(t, c.Addr(0))
	count := func(resp *kmsg.FetchResponse) int {
		n := 0
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				n += countRecords(t, rp.RecordBatches)
			}
		}
		return n
	}
	// Every step after every other, on the kept connection; a new
	// connection for each reference answer.
	for round := range 2 {
		for i := range steps {
			for _, s := range []step{steps[i], steps[(i+3)%len(steps)]} {
				got := decode(s.version, kept.roundTrip(t, s.frame))
				want := decode(s.version, dialBench(t, c.Addr(0)).roundTrip(t, s.frame))
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, %s: the kept connection answered\n%+v\na new connection\n%+v", round, s.name, got, want)
				}
				if n := count(got); n != s.records {
					t.Fatalf("round %d, %s: %d records, want %d", round, s.name, n, s.records)
				}
			}
		}
	}

	// A long poll woken by an append (not by its timeout), then the
	// first step again on the same connection.
	woken := make(chan *kmsg.FetchResponse, 1)
	go func() {
		woken <- decode(13, kept.roundTrip(t, fetch(13, 20000, 1, 50<<20, part{"ra", 1, 4}, part{"ra", 2, 5})))
	}()
	parked := c.Broker(0).Metrics().Get("kafka.server.DelayedOperationPurgatory.NumDelayedOperations.delayedOperation=Fetch").(gometrics.Gauge)
	c.WaitFor(20*time.Second, "the long poll to park", func() bool { return parked.Value() > 0 })
	produce("ra", 2, 1)
	var resp *kmsg.FetchResponse
	select {
	case resp = <-woken:
	case <-ctx.Done():
		t.Fatal("the parked fetch was not answered after the append")
	}
	if n := count(resp); n != 1 {
		t.Fatalf("the woken long poll returned %d records, want the 1 appended", n)
	}
	s := steps[0]
	s.records++
	got := decode(s.version, kept.roundTrip(t, s.frame))
	want := decode(s.version, dialBench(t, c.Addr(0)).roundTrip(t, s.frame))
	if !reflect.DeepEqual(got, want) || count(got) != s.records {
		t.Fatalf("after the woken long poll, %s: the kept connection answered %d records\n%+v\na new connection\n%+v", s.name, count(got), got, want)
	}
}

// countRecords counts the records of the v2 batches in b.
func countRecords(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	for len(b) > 0 {
		if len(b) < 61 {
			t.Fatalf("a truncated batch of %d bytes", len(b))
		}
		size := int(int32(uint32(b[8])<<24|uint32(b[9])<<16|uint32(b[10])<<8|uint32(b[11]))) + 12
		n += int(int32(uint32(b[57])<<24 | uint32(b[58])<<16 | uint32(b[59])<<8 | uint32(b[60])))
		b = b[size:]
	}
	return n
}
