package broker_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
)

// The replica manager reuses its delayed produces and delayed fetches
// (and the purgatory its entries and timers) from one request to the
// next. These tests keep many of them alive at once, completing in every
// way, and check that each request still gets exactly its own answer.

// partWant is the answer expected for one partition of a produce.
type partWant struct {
	topic string
	p     int32
	code  int16
	base  int64 // checked when the records were appended (else -1)
}

// TestPipelinedAcksAllAnswersWithReuse: rounds of produces in flight on
// one connection, each round with an acks=all produce completed by the
// HW, two timing out (REQUEST_TIMED_OUT: the followers are held), one
// whose partitions all fail (NOT_ENOUGH_REPLICAS: min.insync.replicas
// unmet; an unknown partition), an acks=1 one, and then acks=all
// produces completed by the HW once the followers fetch again. Every
// response carries its request's correlation id and, per partition, the
// code and base offset that request gets on its own.
func TestPipelinedAcksAllAnswersWithReuse(t *testing.T) {
	const topic, few = "reuse", "reuse-few"
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: map[string]string{
		// Followers are held for up to a few seconds: the ISR must not
		// shrink meanwhile.
		"replica.lag.time.max.ms": "120000",
	}})
	leaderID, followerID := int32(1), int32(2)
	ctx := ctxT(t, 3*time.Minute)
	for _, ct := range []*kmsg.CreateTopicsRequest{
		assignedTopicRequest(topic, 10000, [][]int32{{leaderID, followerID}, {leaderID, followerID}, {leaderID, followerID}}, map[string]string{"min.insync.replicas": "2"}),
		assignedTopicRequest(few, 10000, [][]int32{{leaderID}}, map[string]string{"min.insync.replicas": "2"}),
	} {
		if resp := request[*kmsg.CreateTopicsResponse](ctx, t, c.Client(), ct); resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("creating %s: %v", ct.Topics[0].Topic, kerr.ErrorForCode(resp.Topics[0].ErrorCode))
		}
	}
	c.WaitLeaders(30*time.Second, few, 1)
	for p := range int32(3) {
		c.WaitFor(30*time.Second, fmt.Sprintf("%s-%d led by %d with a full ISR", topic, p, leaderID), func() bool {
			st, ok := c.PartitionState(topic, p)
			return ok && st.Leader == leaderID && len(st.ISR) == 2
		})
	}
	leader := c.Index(leaderID)
	reg := c.Broker(leader).Metrics()
	expired := reg.Get("kafka.server.DelayedProduceMetrics.ExpiresPerSec").(gometrics.Meter)
	delayed := reg.Get("kafka.server.DelayedOperationPurgatory.NumDelayedOperations.delayedOperation=Produce").(gometrics.Gauge)

	hold, release := followerGate(c, leader)

	next := map[int32]int64{} // the next offset of each partition of topic
	type sent struct {
		req  *kmsg.ProduceRequest
		corr int32
		want []partWant
	}
	corr := int32(0)
	// produce builds a request of one record per partition; appended
	// says whether the records of topic's partitions land in the log
	// (with code for them).
	produce := func(acks int16, timeout time.Duration, code int16, parts ...partWant) sent {
		req := kmsg.NewPtrProduceRequest()
		req.Version = 9
		req.Acks, req.TimeoutMillis = acks, int32(timeout.Milliseconds())
		corr++
		s := sent{req: req, corr: corr}
		for _, pw := range parts {
			if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != pw.topic {
				rt := kmsg.NewProduceRequestTopic()
				rt.Topic = pw.topic
				req.Topics = append(req.Topics, rt)
			}
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = pw.p
			rp.Records = oneRecordBatch(fmt.Sprintf("%d-%s-%d", corr, pw.topic, pw.p))
			rt := &req.Topics[len(req.Topics)-1]
			rt.Partitions = append(rt.Partitions, rp)
			w := pw
			w.base = -1
			if pw.topic == topic && pw.p < 3 {
				w.code = code
				w.base = next[pw.p]
				next[pw.p]++
			}
			s.want = append(s.want, w)
		}
		return s
	}
	p := func(t string, n int32, code int16) partWant { return partWant{topic: t, p: n, code: code} }
	notEnough, unknown := kerr.NotEnoughReplicas.Code, kerr.UnknownTopicOrPartition.Code
	timedOut := kerr.RequestTimedOut.Code

	pc := dialPipe(t, c.Addr(leader))
	_ = pc.nc.SetDeadline(time.Now().Add(3 * time.Minute))
	check := func(round int, s sent) {
		t.Helper()
		resp := pc.recv(s.req, s.corr).(*kmsg.ProduceResponse)
		var got []partWant
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				base := rp.BaseOffset
				if rp.ErrorCode != 0 && rp.ErrorCode != timedOut {
					base = -1
				}
				got = append(got, partWant{rt.Topic, rp.Partition, rp.ErrorCode, base})
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Fatalf("round %d, request %d: answered\n%v\nwant\n%v", round, s.corr, got, s.want)
		}
	}
	const rounds = 6
	for round := range rounds {
		hold()
		// Five in flight: the most a connection queues.
		held := []sent{
			produce(-1, time.Minute, 0, p(topic, 0, 0), p(topic, 1, 0), p(topic, 2, 0), p(few, 0, notEnough), p(topic, 99, unknown)),
			produce(-1, 200*time.Millisecond, timedOut, p(topic, 2, 0), p(topic, 0, 0)),
			produce(-1, time.Minute, 0, p(few, 0, notEnough), p(topic, 7, unknown)),
			produce(1, time.Minute, 0, p(topic, 1, 0)),
			produce(-1, 100*time.Millisecond, timedOut, p(topic, 1, 0)),
		}
		for _, s := range held {
			pc.send(s.req, s.corr)
		}
		// Both timeouts ran out (three partitions expired) and only the
		// first produce still waits, for the held followers.
		c.WaitFor(30*time.Second, "round "+strconv.Itoa(round)+"'s two timeouts", func() bool {
			return expired.Count() == int64(3*(round+1)) && delayed.Value() == 1
		})
		release()
		after := []sent{
			produce(-1, time.Minute, 0, p(topic, 2, 0)),
			produce(-1, time.Minute, 0, p(topic, 0, 0), p(topic, 1, 0), p(few, 0, notEnough)),
			produce(1, time.Minute, 0, p(topic, 0, 0), p(topic, 2, 0)),
			produce(-1, time.Minute, 0, p(topic, 1, 0), p(topic, 2, 0), p(topic, 0, 0)),
		}
		for _, s := range after {
			pc.send(s.req, s.corr)
		}
		for _, s := range append(held, after...) {
			check(round, s)
		}
	}
	if n := expired.Count(); n != 3*rounds {
		t.Fatalf("%d partitions expired, want %d", n, 3*rounds)
	}
}

// fetchConn is a connection for a goroutine other than the test's: its
// round trip returns errors instead of failing the test.
type fetchConn struct {
	nc   net.Conn
	br   *bufio.Reader
	corr int32
}

func dialFetch(t *testing.T, addr string) *fetchConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(2 * time.Minute))
	return &fetchConn{nc: nc, br: bufio.NewReader(nc)}
}

func (c *fetchConn) fetch(req *kmsg.FetchRequest) (*kmsg.FetchResponse, error) {
	c.corr++
	f := make([]byte, 4, 256)
	f = binary.BigEndian.AppendUint16(f, uint16(req.Key()))
	f = binary.BigEndian.AppendUint16(f, uint16(req.GetVersion()))
	f = binary.BigEndian.AppendUint32(f, uint32(c.corr))
	f = binary.BigEndian.AppendUint16(f, 1)
	f = append(f, 'f', 0) // client id "f", no header tags
	f = req.AppendTo(f)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	if _, err := c.nc.Write(f); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c.br, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.br, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != c.corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, c.corr)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = req.Version
	if err := resp.ReadFrom(body[5:]); err != nil {
		return nil, err
	}
	return resp, nil
}

// fetchAnswer summarizes a fetch response: per partition its code and the
// base offset and record count of each batch.
func fetchAnswer(resp *kmsg.FetchResponse) string {
	s := fmt.Sprintf("err=%d", resp.ErrorCode)
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			s += fmt.Sprintf(" p%d:code=%d", rp.Partition, rp.ErrorCode)
			for b := rp.RecordBatches; len(b) >= 61; {
				base := int64(binary.BigEndian.Uint64(b))
				size := int(binary.BigEndian.Uint32(b[8:])) + 12
				s += fmt.Sprintf(" [%d+%d]", base, binary.BigEndian.Uint32(b[57:]))
				b = b[size:]
			}
		}
	}
	return s
}

// TestParkedFetchesWithReuse: rounds in which, on three connections at
// once, two long polls park at the log end and are woken by an append
// while the third times out first; each gets exactly its own answer (the
// appended record for the woken ones, nothing for the timed-out one), on
// connections that keep answering round after round.
func TestParkedFetchesWithReuse(t *testing.T) {
	const topic = "wake"
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.CreateTopic(topic, 2, 1, nil)
	c.WaitLeaders(30*time.Second, topic, 2)
	ctx := ctxT(t, 2*time.Minute)
	td, err := c.Admin().ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("list %s: %v / %v", topic, err, td[topic].Err)
	}
	id := td[topic].ID
	parked := c.Broker(0).Metrics().Get("kafka.server.DelayedOperationPurgatory.NumDelayedOperations.delayedOperation=Fetch").(gometrics.Gauge)
	longPoll := func(ends [2]int64, maxWait time.Duration) *kmsg.FetchRequest {
		req := benchFetchRequest(id, 0, int32(maxWait.Milliseconds()), 1, -1)
		req.Topics[0].Partitions = req.Topics[0].Partitions[:2]
		for p := range req.Topics[0].Partitions {
			req.Topics[0].Partitions[p].FetchOffset = ends[p]
		}
		return req
	}
	conns := []*fetchConn{dialFetch(t, c.Addr(0)), dialFetch(t, c.Addr(0)), dialFetch(t, c.Addr(0))}
	pc := dialPipe(t, c.Addr(0))
	var ends [2]int64
	type result struct {
		i    int
		resp *kmsg.FetchResponse
		err  error
	}
	for round := range 8 {
		results := make(chan result, len(conns))
		short := round % len(conns) // the one that times out
		for i, fc := range conns {
			wait := time.Minute
			if i == short {
				wait = 50 * time.Millisecond
			}
			go func() {
				resp, err := fc.fetch(longPoll(ends, wait))
				results <- result{i, resp, err}
			}()
		}
		empty := "err=0 p0:code=0 p1:code=0"
		r := <-results // the short one: the others wait for an append
		if r.err != nil || r.i != short || fetchAnswer(r.resp) != empty {
			t.Fatalf("round %d: first answer from connection %d (want %d): %v %v", round, r.i, short, r.err, r.resp)
		}
		c.WaitFor(30*time.Second, "two parked long polls", func() bool { return parked.Value() == 2 })
		p := int32(round % 2)
		req := pipeProduce(topic, 1, time.Minute, "v"+strconv.Itoa(round))
		req.Topics[0].Partitions[0].Partition = p
		pc.send(req, int32(round))
		expectPartition(t, pc.recv(req, int32(round)), 0, ends[p])
		want := fmt.Sprintf("err=0 p0:code=0 p1:code=0 [%d+1]", ends[p])
		if p == 0 {
			want = fmt.Sprintf("err=0 p0:code=0 [%d+1] p1:code=0", ends[p])
		}
		for range 2 {
			r := <-results
			if r.err != nil {
				t.Fatalf("round %d, connection %d: %v", round, r.i, r.err)
			}
			if got := fetchAnswer(r.resp); got != want {
				t.Fatalf("round %d, connection %d: woken long poll answered %q, want %q", round, r.i, got, want)
			}
		}
		ends[p]++
	}
}
