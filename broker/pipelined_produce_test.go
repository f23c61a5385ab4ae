package broker_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/testcluster"
)

// pipeConn is one client connection that sends several requests before
// reading their responses, as a producer with several requests in flight
// does.
type pipeConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialPipe(t *testing.T, addr string) *pipeConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	return &pipeConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// send writes req with correlation id corr.
func (c *pipeConn) send(req kmsg.Request, corr int32) {
	c.t.Helper()
	f := make([]byte, 4, 256)
	f = binary.BigEndian.AppendUint16(f, uint16(req.Key()))
	f = binary.BigEndian.AppendUint16(f, uint16(req.GetVersion()))
	f = binary.BigEndian.AppendUint32(f, uint32(corr))
	f = binary.BigEndian.AppendUint16(f, 4)
	f = append(f, "pipe"...)
	if req.IsFlexible() {
		f = append(f, 0)
	}
	f = req.AppendTo(f)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	if _, err := c.nc.Write(f); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads the next response, which must answer req sent as corr.
func (c *pipeConn) recv(req kmsg.Request, corr int32) kmsg.Response {
	c.t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(c.br, size[:]); err != nil {
		c.t.Fatalf("reading the response to %d: %v", corr, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.br, body); err != nil {
		c.t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		c.t.Fatalf("response with correlation id %d, want %d (responses out of request order)", got, corr)
	}
	body = body[4:]
	if req.IsFlexible() {
		if body[0] != 0 {
			c.t.Fatalf("response header with tagged fields")
		}
		body = body[1:]
	}
	resp := req.ResponseKind()
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// pipeProduce is a Produce v9 of one batch of values to partition 0.
func pipeProduce(topic string, acks int16, timeout time.Duration, values ...string) *kmsg.ProduceRequest {
	var batch []byte
	for _, v := range values {
		if batch == nil {
			batch = oneRecordBatch(v)
			continue
		}
		batch = append(batch, oneRecordBatch(v)...) // one batch per value
	}
	req := produceRequest(topic, acks, batch)
	req.Version = 9
	req.TimeoutMillis = int32(timeout.Milliseconds())
	return req
}

// expectPartition checks the one partition of a produce response.
func expectPartition(t *testing.T, resp kmsg.Response, code int16, base int64) {
	t.Helper()
	p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != code || (code == 0 && p.BaseOffset != base) {
		t.Fatalf("produce answered %v at base offset %d, want %v at %d", kerr.ErrorForCode(p.ErrorCode), p.BaseOffset, kerr.ErrorForCode(code), base)
	}
}

// TestPipelinedAcksAllProduce: on one connection, an acks=all Produce
// waiting for the ISR no longer holds up the next Produce: its records are
// appended while the first still waits, and the responses still leave in
// request order with their offsets. The followers' fetches are held at the
// leader (the HW cannot pass what they had before), so "the first still
// waits" needs no clock: it cannot be answered before the gate opens.
// Then a pending request that times out, a NOT_ENOUGH_REPLICAS and a
// Metadata request queued behind pending ones, and a connection closed
// with waits pending: every wait ends, no acknowledged write is lost.
func TestPipelinedAcksAllProduce(t *testing.T) {
	const topic, few = "pipelined", "pipelined-few"
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	c.CreateTopic(topic, 1, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")})
	var leaderID int32
	c.WaitFor(30*time.Second, topic+" led with a full ISR", func() bool {
		st, ok := c.PartitionState(topic, 0)
		leaderID = st.Leader
		return ok && st.Leader >= 0 && len(st.ISR) == 3
	})
	leader := c.Index(leaderID)
	ctx := ctxT(t, 2*time.Minute)
	// One replica, on the same leader, that acks=all may not write.
	ct := request[*kmsg.CreateTopicsResponse](ctx, t, c.Client(), assignedTopicRequest(few, 10000, [][]int32{{leaderID}}, map[string]string{"min.insync.replicas": "2"}))
	if ct.Topics[0].ErrorCode != 0 {
		t.Fatalf("creating %s: %v", few, kerr.ErrorForCode(ct.Topics[0].ErrorCode))
	}
	c.WaitLeaders(30*time.Second, few, 1)

	var log *storage.Log
	c.WaitFor(10*time.Second, "the leader's log", func() bool {
		var ok bool
		log, ok = c.Broker(leader).LogManager().GetLog(common.TopicPartition{Topic: topic, Partition: 0})
		return ok
	})
	holdFollowers, releaseFollowers := followerGate(c, leader)
	waitLogEnd := func(end int64) {
		c.WaitFor(30*time.Second, "the leader's log end at "+strconv.FormatInt(end, 10), func() bool { return log.LogEndOffset() >= end })
	}
	acked := map[int64]string{} // offset → value acknowledged

	// 1. Two acks=all produces and an acks=1 one in flight: all three
	// appended while the HW is held below the first one's end.
	holdFollowers()
	pc := dialPipe(t, c.Addr(leader))
	a, b, one := pipeProduce(topic, -1, time.Minute, "a"), pipeProduce(topic, -1, time.Minute, "b1", "b2"), pipeProduce(topic, 1, time.Minute, "c")
	pc.send(a, 1)
	pc.send(b, 2)
	pc.send(one, 3)
	waitLogEnd(4)
	if hw := log.HighWatermark(); hw != 0 {
		t.Fatalf("HW %d with the followers held: the first produce could have been answered", hw)
	}
	releaseFollowers()
	expectPartition(t, pc.recv(a, 1), 0, 0)
	expectPartition(t, pc.recv(b, 2), 0, 1)
	expectPartition(t, pc.recv(one, 3), 0, 3)
	acked[0], acked[1], acked[2], acked[3] = "a", "b1", "b2", "c"

	// 2. A pending produce that times out, a NOT_ENOUGH_REPLICAS answered
	// at once, one that succeeds and a Metadata request, queued in that
	// order behind the first.
	holdFollowers()
	late, refused, ok := pipeProduce(topic, -1, 300*time.Millisecond, "late"), pipeProduce(few, -1, time.Minute, "refused"), pipeProduce(topic, -1, time.Minute, "ok")
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	pc.send(late, 11)
	pc.send(refused, 12)
	pc.send(ok, 13)
	pc.send(md, 14)
	waitLogEnd(6)
	expectPartition(t, pc.recv(late, 11), kerr.RequestTimedOut.Code, 0)
	expectPartition(t, pc.recv(refused, 12), kerr.NotEnoughReplicas.Code, 0)
	releaseFollowers()
	expectPartition(t, pc.recv(ok, 13), 0, 5)
	if resp := pc.recv(md, 14).(*kmsg.MetadataResponse); len(resp.Brokers) != 3 {
		t.Fatalf("Metadata behind the produces: %d brokers", len(resp.Brokers))
	}
	acked[5] = "ok" // "late" (offset 4) stays in the log, unacknowledged

	// 3. The connection closes while two produces wait: both waits end
	// (the purgatory empties with the followers still held and an hour
	// of timeout left), and the connection's goroutines with them.
	holdFollowers()
	delayed := c.Broker(leader).Metrics().Get("kafka.server.DelayedOperationPurgatory.NumDelayedOperations.delayedOperation=Produce").(gometrics.Gauge)
	closing := dialPipe(t, c.Addr(leader))
	closing.send(pipeProduce(topic, -1, time.Hour, "x1"), 21)
	closing.send(pipeProduce(topic, -1, time.Hour, "x2"), 22)
	waitLogEnd(8)
	if n := delayed.Value(); n != 2 {
		t.Fatalf("%d produces in the purgatory, want the 2 pending", n)
	}
	closing.nc.Close()
	c.WaitFor(30*time.Second, "the closed connection's waits ended", func() bool { return delayed.Value() == 0 })
	releaseFollowers()

	// Every acknowledged record is there, at its offset, below the HW.
	cl := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	got := map[int64]string{}
	consumeN(ctx, t, cl, 8, topic, func(r *kgo.Record) { got[r.Offset] = string(r.Value) })
	for off, v := range acked {
		if got[off] != v {
			t.Fatalf("acknowledged %q at offset %d, read %q", v, off, got[off])
		}
	}
	// The connection of 1. and 2. still serves.
	after := pipeProduce(topic, -1, time.Minute, "after")
	pc.send(after, 31)
	expectPartition(t, pc.recv(after, 31), 0, 8)
}
