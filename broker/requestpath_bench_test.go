package broker_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/testcluster"
)

// The request-path benchmarks drive one real broker over loopback TCP with
// pre-encoded requests shaped like franz-go's (several partitions per
// request, one batch of ten 100-byte records each, the newest versions the
// broker serves) from a client that allocates nothing per request, so the
// process's mallocs during the loop are the broker's: frame read, decode,
// handler, replica manager, storage, response encode and write. Each
// reports allocs per batch produced or per partition fetched beside
// allocs/op (per request). Run them under the shared lock, e.g.
//
//	go test -run '^$' -bench RequestPath -count 6 ./broker/

const (
	benchParts   = 8
	benchRecords = 10
	benchValue   = 100
)

// benchConn is a Kafka connection without a client library: it writes a
// ready frame and reads the response frame into a reused buffer.
type benchConn struct {
	nc   net.Conn
	br   *bufio.Reader
	size [4]byte
	buf  []byte
}

func dialBench(b testing.TB, addr string) *benchConn {
	b.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	return &benchConn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), buf: make([]byte, 0, 64<<10)}
}

// roundTrip sends frame and returns the response body after the
// correlation id (valid until the next call).
func (c *benchConn) roundTrip(b testing.TB, frame []byte) []byte {
	if _, err := c.nc.Write(frame); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(c.br, c.size[:]); err != nil {
		b.Fatal(err)
	}
	n := int(binary.BigEndian.Uint32(c.size[:]))
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	if _, err := io.ReadFull(c.br, c.buf); err != nil {
		b.Fatal(err)
	}
	return c.buf[4:]
}

// encodeFrame frames req with a request header (client id "bench").
func encodeFrame(req kmsg.Request) []byte {
	const clientID = "bench"
	f := make([]byte, 4, 256)
	f = binary.BigEndian.AppendUint16(f, uint16(req.Key()))
	f = binary.BigEndian.AppendUint16(f, uint16(req.GetVersion()))
	f = binary.BigEndian.AppendUint32(f, 1)
	f = binary.BigEndian.AppendUint16(f, uint16(len(clientID)))
	f = append(f, clientID...)
	if req.IsFlexible() {
		f = append(f, 0)
	}
	f = req.AppendTo(f)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	return f
}

// benchBatch is one batch as a franz-go producer sends it.
func benchBatch() []byte { return benchBatchOf(benchRecords, benchValue) }

// benchBatchOf is a batch of n records of value bytes each.
func benchBatchOf(n, value int) []byte {
	o := record.DefaultBuildOptions()
	o.BaseTimestamp = time.Now().UnixMilli()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Key: []byte("key-" + strconv.Itoa(i)), Value: make([]byte, value)}
	}
	return record.Build(o, recs)
}

func benchProduceRequest(topic string, acks int16) *kmsg.ProduceRequest {
	return benchProduceRequestOf(topic, acks, benchBatch())
}

// benchProduceRequestOf is a Produce of batch to each partition.
func benchProduceRequestOf(topic string, acks int16, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks, req.TimeoutMillis = acks, 30000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	for p := range int32(benchParts) {
		tp := kmsg.NewProduceRequestTopicPartition()
		tp.Partition, tp.Records = p, batch
		t.Partitions = append(t.Partitions, tp)
	}
	req.Topics = []kmsg.ProduceRequestTopic{t}
	return req
}

// benchFetchRequest fetches every partition of topic (by id, v13) from
// offset; a session epoch of 0 opens a session, -1 fetches without one.
func benchFetchRequest(id [16]byte, offset int64, maxWait, minBytes, epoch int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 13
	req.ReplicaID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, minBytes, 50<<20
	req.SessionEpoch = epoch
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = id
	for p := range int32(benchParts) {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = p, offset, 1<<20
		fp.CurrentLeaderEpoch, fp.LastFetchedEpoch, fp.LogStartOffset = -1, -1, -1
		t.Partitions = append(t.Partitions, fp)
	}
	req.Topics = []kmsg.FetchRequestTopic{t}
	return req
}

// benchCluster starts one broker with topic (benchParts partitions, RF 1)
// and returns its address and the topic's id.
func benchCluster(b *testing.B, topic string) (string, [16]byte) {
	b.Helper()
	c := testcluster.Start(b, testcluster.Options{Brokers: 1})
	c.CreateTopic(topic, benchParts, 1, nil)
	c.WaitLeaders(30*time.Second, topic, benchParts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	td, err := c.Admin().ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		b.Fatalf("list %s: %v / %v", topic, err, td[topic].Err)
	}
	return c.Addr(0), td[topic].ID
}

// measureLoop runs op b.N times after warm-up rounds and reports the
// mallocs per op divided by per (batches or partitions per request).
func measureLoop(b *testing.B, per int, unit string, op func()) {
	for range 500 { // pools, intern tables and slices reach their steady size
		op()
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	for b.Loop() {
		op()
	}
	runtime.ReadMemStats(&after)
	perOp := float64(after.Mallocs-before.Mallocs) / float64(b.N)
	b.ReportMetric(perOp/float64(per), "allocs/"+unit)
}

func BenchmarkRequestPathProduce(b *testing.B) {
	for _, tc := range []struct {
		name  string
		acks  int16
		batch func() []byte
	}{
		{"acks=1", 1, benchBatch},
		{"acks=all", -1, benchBatch},
		// A request above what a connection keeps (1 MiB): 8 batches of
		// 256 KiB, read into a pooled buffer (network/bigframes.go).
		{"acks=1/large", 1, func() []byte { return benchBatchOf(250, 1024) }},
	} {
		acks := tc.acks
		b.Run(tc.name, func(b *testing.B) {
			addr, _ := benchCluster(b, "produce")
			c := dialBench(b, addr)
			frame := encodeFrame(benchProduceRequestOf("produce", acks, tc.batch()))
			check := func() {
				body := c.roundTrip(b, frame)
				resp := kmsg.NewPtrProduceResponse()
				resp.Version = 9
				if err := resp.ReadFrom(body[1:]); err != nil {
					b.Fatal(err)
				}
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						if p.ErrorCode != 0 {
							b.Fatalf("produce to %s-%d: error %d", t.Topic, p.Partition, p.ErrorCode)
						}
					}
				}
			}
			check()
			measureLoop(b, benchParts, "batch", func() { c.roundTrip(b, frame) })
			check()
		})
	}
}

func BenchmarkRequestPathFetch(b *testing.B) {
	addr, id := benchCluster(b, "fetch")
	c := dialBench(b, addr)
	// Four batches in every partition.
	produce := encodeFrame(benchProduceRequest("fetch", 1))
	for range 4 {
		c.roundTrip(b, produce)
	}
	batchLen := len(benchBatch())
	fetched := func(body []byte) *kmsg.FetchResponse { return decodeBenchFetch(b, body) }
	checkData := func(resp *kmsg.FetchResponse) {
		n := 0
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 || len(p.RecordBatches) != 4*batchLen {
					b.Fatalf("fetch partition %d: error %d, %d bytes", p.Partition, p.ErrorCode, len(p.RecordBatches))
				}
				n++
			}
		}
		if n != benchParts {
			b.Fatalf("fetch returned %d partitions", n)
		}
	}

	b.Run("data", func(b *testing.B) {
		frame := encodeFrame(benchFetchRequest(id, 0, 500, 1, -1))
		checkData(fetched(c.roundTrip(b, frame)))
		measureLoop(b, benchParts, "partition", func() { c.roundTrip(b, frame) })
	})

	b.Run("session", func(b *testing.B) {
		// A session opened at offset 0, then incremental fetches that
		// list no partition: each returns the same data again, as the
		// session's offsets do not move.
		resp := fetched(c.roundTrip(b, encodeFrame(benchFetchRequest(id, 0, 500, 1, 0))))
		checkData(resp)
		inc := benchFetchRequest(id, 0, 500, 1, 1)
		inc.SessionID = resp.SessionID
		inc.Topics = nil
		frame := encodeFrame(inc)
		// The session epoch follows isolation_level in the body.
		epochAt := len(frame) - len(inc.AppendTo(nil)) + 4 + 4 + 4 + 4 + 1 + 4
		epoch := int32(1)
		next := func() []byte {
			binary.BigEndian.PutUint32(frame[epochAt:], uint32(epoch))
			epoch++
			return c.roundTrip(b, frame)
		}
		checkData(fetched(next()))
		measureLoop(b, benchParts, "partition", func() { next() })
		checkData(fetched(next()))
	})

	b.Run("empty-long-poll", func(b *testing.B) {
		// At the log end: every request parks for max_wait (1 ms).
		frame := encodeFrame(benchFetchRequest(id, 4*benchRecords, 1, 1, -1))
		resp := fetched(c.roundTrip(b, frame))
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
					b.Fatalf("empty fetch partition %d: error %d, %d bytes", p.Partition, p.ErrorCode, len(p.RecordBatches))
				}
			}
		}
		measureLoop(b, 1, "request", func() { c.roundTrip(b, frame) })
	})
}

// BenchmarkRequestPathConsume reads a log the way a consumer from the
// start does, which the Fetch benchmark's repeated small read does not
// cover: 1 KiB records in batches of 100 (about 100 KiB), read with a
// partition limit of 256 KiB, so each read ends at a batch that no longer
// fits; one fetch session whose incremental requests name the partitions
// whose offset moved; and, in "segments", segments of three batches, so reads
// also stop at segment ends and move on to the next segment. The walk
// from offset 0 to the log end is recorded once (its frames carry the
// offsets the answers give) and replayed in a loop, the last frame
// moving every partition back to 0, so every request reads new ground
// of the log as a consumer's does.
func BenchmarkRequestPathConsume(b *testing.B) {
	for _, tc := range []struct {
		name    string
		configs map[string]*string
	}{
		{"one-segment", nil},
		// Three batches to a segment: every other read stops at a
		// segment's end with room to spare.
		{"segments", map[string]*string{"segment.bytes": ptr(strconv.Itoa(350 << 10))}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := testcluster.Start(b, testcluster.Options{Brokers: 1})
			const topic = "consume"
			c.CreateTopic(topic, benchParts, 1, tc.configs)
			c.WaitLeaders(30*time.Second, topic, benchParts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			td, err := c.Admin().ListTopics(ctx, topic)
			cancel()
			if err != nil || td[topic].Err != nil {
				b.Fatalf("list %s: %v / %v", topic, err, td[topic].Err)
			}
			conn := dialBench(b, c.Addr(0))
			const batches, perBatch = 40, 100 // 4 MiB per partition
			produce := encodeFrame(benchProduceRequestOf(topic, 1, benchBatchOf(perBatch, 1024)))
			for range batches {
				conn.roundTrip(b, produce)
			}
			w := recordConsume(b, conn, td[topic].ID, batches*perBatch)
			measureLoop(b, benchParts, "partition", func() { w.next(b, conn) })
			b.ReportMetric(float64(len(w.frames)), "requests/walk")
		})
	}
}

func ptr[T any](v T) *T { return &v }

// consumeWalk is a recorded consume of a whole log in one fetch session.
type consumeWalk struct {
	frames   [][]byte
	epochAt  []int // where each frame's session epoch is
	i        int
	epoch    int32
	response []byte // the last answer, valid until the next call
}

// next sends the walk's next frame with the session's next epoch.
func (w *consumeWalk) next(b testing.TB, c *benchConn) {
	f := w.frames[w.i]
	binary.BigEndian.PutUint32(f[w.epochAt[w.i]:], uint32(w.epoch))
	w.epoch++
	w.i = (w.i + 1) % len(w.frames)
	w.response = c.roundTrip(b, f)
}

// recordConsume opens a fetch session at offset 0 of every partition and
// fetches until each partition has given end records, recording the
// incremental frames, then a frame moving every partition back to 0; it
// checks that the log comes back whole and in order.
func recordConsume(b *testing.B, c *benchConn, id [16]byte, end int64) *consumeWalk {
	b.Helper()
	const partMax = 256 << 10
	read := func(body []byte) *kmsg.FetchResponse { return decodeBenchFetch(b, body) }
	offsets := make([]int64, benchParts)
	advance := func(resp *kmsg.FetchResponse) (moved []int32) {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					b.Fatalf("fetch partition %d: error %d", p.Partition, p.ErrorCode)
				}
				if len(p.RecordBatches) > partMax {
					b.Fatalf("partition %d: %d bytes above the limit %d", p.Partition, len(p.RecordBatches), partMax)
				}
				next := offsets[p.Partition]
				for rb := p.RecordBatches; len(rb) >= 61; {
					base := int64(binary.BigEndian.Uint64(rb))
					size := 12 + int(binary.BigEndian.Uint32(rb[8:]))
					if size > len(rb) {
						break // a partial batch at the limit: fetched again
					}
					if base != next {
						b.Fatalf("partition %d: batch at %d, want %d", p.Partition, base, next)
					}
					next = base + int64(binary.BigEndian.Uint32(rb[23:])) + 1
					rb = rb[size:]
				}
				if next != offsets[p.Partition] {
					offsets[p.Partition] = next
					moved = append(moved, p.Partition)
				}
			}
		}
		return moved
	}
	frameOf := func(sessionID int32, parts []int32) ([]byte, int) {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 13
		req.ReplicaID = -1
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 500, 1, 50<<20
		req.SessionID, req.SessionEpoch = sessionID, 1
		if len(parts) > 0 {
			t := kmsg.NewFetchRequestTopic()
			t.TopicID = id
			for _, p := range parts {
				fp := kmsg.NewFetchRequestTopicPartition()
				fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = p, offsets[p], partMax
				fp.CurrentLeaderEpoch, fp.LastFetchedEpoch, fp.LogStartOffset = -1, -1, -1
				t.Partitions = append(t.Partitions, fp)
			}
			req.Topics = []kmsg.FetchRequestTopic{t}
		}
		f := encodeFrame(req)
		// The session epoch follows isolation_level and the session id.
		return f, len(f) - len(req.AppendTo(nil)) + 4 + 4 + 4 + 4 + 1 + 4
	}

	open := benchFetchRequest(id, 0, 500, 1, 0)
	for i := range open.Topics[0].Partitions {
		open.Topics[0].Partitions[i].PartitionMaxBytes = partMax
	}
	resp := read(c.roundTrip(b, encodeFrame(open)))
	session := resp.SessionID
	if session == 0 {
		b.Fatal("no fetch session")
	}
	w := &consumeWalk{epoch: 1}
	moved := advance(resp)
	for {
		done := true
		for _, o := range offsets {
			done = done && o == end
		}
		if done {
			break
		}
		if len(moved) == 0 {
			b.Fatalf("no partition moved; offsets %v of %d", offsets, end)
		}
		f, at := frameOf(session, moved)
		w.frames, w.epochAt = append(w.frames, f), append(w.epochAt, at)
		w.i = len(w.frames) - 1
		w.next(b, c)
		moved = advance(read(w.response))
	}
	all := make([]int32, benchParts)
	for p := range all {
		all[p], offsets[p] = int32(p), 0
	}
	f, at := frameOf(session, all)
	w.frames, w.epochAt = append(w.frames, f), append(w.epochAt, at)
	w.i = len(w.frames) - 1
	w.next(b, c) // back at 0: the replay starts where the walk did
	w.i = 0
	return w
}

// decodeBenchFetch decodes a v13 Fetch response frame body (after its
// one-byte header tag) and fails b on a top-level error.
func decodeBenchFetch(b *testing.B, body []byte) *kmsg.FetchResponse {
	b.Helper()
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 13
	if err := resp.ReadFrom(body[1:]); err != nil {
		b.Fatal(err)
	}
	if resp.ErrorCode != 0 {
		b.Fatalf("fetch: error %d", resp.ErrorCode)
	}
	return resp
}
