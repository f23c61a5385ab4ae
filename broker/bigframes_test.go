package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// Produce requests larger than a connection keeps (1 MiB) are read into
// buffers pooled across connections, and a buffer goes back to the pool
// when its connection reads its next request. Two connections sending
// such requests at once, acks=1 and acks=all interleaved (an acks=all
// response may still be waiting while the next request is read), lose
// nothing and mix nothing up: every record is read back once, in order,
// with the value it was sent with. A buffer given back too early is caught
// when another connection takes it while its request is still being
// handled, which the shared free list makes likely rather than certain
// (giving it back right after the read failed one run in two here, with
// CORRUPT_MESSAGE); under -race such an overlap is also reported as a
// race.
func TestLargeProduceFramesFromThePool(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	const topic, partitions, conns, requests, perBatch = "big", 3, 4, 10, 700
	c.CreateTopic(topic, partitions, 1, nil)
	c.WaitLeaders(30*time.Second, topic, partitions)
	value := func(conn, req, p, i int) []byte {
		v := make([]byte, 1024)
		copy(v, fmt.Sprintf("c%d-r%d-p%d-i%d", conn, req, p, i))
		return v
	}
	frame := func(conn, req int) []byte {
		r := kmsg.NewPtrProduceRequest()
		r.Version = 9
		r.Acks, r.TimeoutMillis = 1, 30000
		if req%2 == 1 {
			r.Acks = -1
		}
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		for p := range partitions {
			recs := make([]record.Record, perBatch)
			for i := range recs {
				recs[i] = record.Record{OffsetDelta: int32(i), Value: value(conn, req, p, i)}
			}
			o := record.DefaultBuildOptions()
			o.BaseTimestamp = time.Now().UnixMilli()
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition, rp.Records = int32(p), record.Build(o, recs)
			rt.Partitions = append(rt.Partitions, rp)
		}
		r.Topics = []kmsg.ProduceRequestTopic{rt}
		f := encodeFrame(r)
		if len(f) <= 1<<20 {
			t.Fatalf("a frame of %d bytes is not above what a connection keeps", len(f))
		}
		return f
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for conn := range conns {
		frames := make([][]byte, requests)
		for req := range frames {
			frames[req] = frame(conn, req)
		}
		bc := dialBench(t, c.Addr(0))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for req, f := range frames {
				body := bc.roundTrip(t, f)
				resp := kmsg.NewPtrProduceResponse()
				resp.Version = 9
				if err := resp.ReadFrom(body[1:]); err != nil {
					errs <- err
					return
				}
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						if rp.ErrorCode != 0 {
							errs <- fmt.Errorf("connection %d, request %d: %s-%d error %d", conn, req, rt.Topic, rp.Partition, rp.ErrorCode)
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Per partition, each connection's records in its order.
	want := conns * requests * partitions * perBatch
	cl := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	next := map[[2]int]int{} // (conn, partition) -> the next index (req*perBatch+i)
	got := 0
	for got < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", got, want, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			var conn, req, p, i int
			if _, err := fmt.Sscanf(string(r.Value[:32]), "c%d-r%d-p%d-i%d", &conn, &req, &p, &i); err != nil || p != int(r.Partition) {
				t.Fatalf("%s-%d offset %d: a value not sent to it: %q", r.Topic, r.Partition, r.Offset, r.Value[:32])
			}
			k := [2]int{conn, p}
			if n := req*perBatch + i; n != next[k] {
				t.Fatalf("%s-%d offset %d: connection %d's record %d, want its record %d", r.Topic, r.Partition, r.Offset, conn, n, next[k])
			}
			if string(r.Value) != string(value(conn, req, p, i)) {
				t.Fatalf("%s-%d offset %d: the value of c%d-r%d-i%d differs from what was sent", r.Topic, r.Partition, r.Offset, conn, req, i)
			}
			next[k]++
			got++
		})
	}
	if got != want {
		t.Fatalf("read %d records, want %d", got, want)
	}
}
