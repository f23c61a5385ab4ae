package api

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/quota"
	"github.com/klassik/klassik/config"
)

// answersCluster is the metadata the answer tests serve: brokers 1 and 2
// on PLAINTEXT and EXTERNAL, broker 3 on PLAINTEXT only; topic "a" of 12
// partitions led by 1, 2, 3 and the dead 4 (LISTENER_NOT_FOUND on
// EXTERNAL, LEADER_NOT_AVAILABLE, and v0's REPLICA_NOT_AVAILABLE), topic
// "b" of 2 partitions and the internal "__consumer_offsets".
func answersUpdate(leaderOfA0 int32, epoch int32) *kmsg.UpdateMetadataRequest {
	r := kmsg.NewPtrUpdateMetadataRequest()
	r.Version, r.ControllerID, r.ControllerEpoch = 7, 2, 1
	for id := int32(1); id <= 3; id++ {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		listeners := []string{"PLAINTEXT", "EXTERNAL"}
		if id == 3 {
			listeners = listeners[:1]
		}
		for i, l := range listeners {
			ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			ep.Host, ep.Port, ep.ListenerName = fmt.Sprintf("h%d", id), int32(9092+i), l
			lb.Endpoints = append(lb.Endpoints, ep)
		}
		if id == 1 {
			lb.Rack = kmsg.StringPtr("r1")
		}
		r.LiveBrokers = append(r.LiveBrokers, lb)
	}
	topic := func(name string, id byte, n int32) {
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = name, [16]byte{id}
		for p := int32(0); p < n; p++ {
			ps := kmsg.NewUpdateMetadataRequestTopicPartition()
			ps.Topic, ps.Partition, ps.LeaderEpoch = name, p, epoch
			ps.Leader = p%4 + 1
			if name == "a" && p == 0 {
				ps.Leader = leaderOfA0
			}
			ps.Replicas = []int32{ps.Leader, (ps.Leader)%4 + 1, (ps.Leader+1)%4 + 1}
			ps.ISR = ps.Replicas[:2]
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		r.TopicStates = append(r.TopicStates, ts)
	}
	topic("a", 1, 12)
	topic("b", 2, 2)
	topic("__consumer_offsets", 3, 3)
	return r
}

type answersHarness struct {
	t     *testing.T
	cache *metadata.Cache
	a     *Apis
}

func newAnswersHarness(t *testing.T, authz Authorizer, quotas *quota.Managers) *answersHarness {
	t.Helper()
	cfg, err := config.FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:1/x", "broker.id": "1", "log.dirs": t.TempDir(),
		"auto.create.topics.enable": "true"})
	if err != nil {
		t.Fatal(err)
	}
	h := &answersHarness{t: t, cache: metadata.New(1, "cluster-1")}
	h.cache.Update(answersUpdate(1, 5))
	h.a = New(Config{BrokerID: 1, ClusterID: "cluster-1", Broker: cfg, ZK: newFakeZK("a"), Metadata: h.cache,
		Controller: fakeController{active: true}, Authorizer: authz, Quotas: quotas, Logger: slog.New(slog.DiscardHandler)})
	h.a.SetReady()
	return h
}

func (h *answersHarness) handle(req *kmsg.MetadataRequest, listener, principal string) kmsg.Response {
	h.t.Helper()
	resp, err := h.a.Handle(context.Background(), &network.Request{Key: 3, Version: req.Version, Body: req, Listener: listener,
		Session: &network.Session{Authenticated: true, Principal: principal}, RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

// fresh is the answer built from the cache now, as the handler built
// every answer before encoded answers were kept.
func (h *answersHarness) fresh(req *kmsg.MetadataRequest, listener string, throttle int32) []byte {
	resp := h.cache.MetadataResponse(req, listener)
	resp.ThrottleMillis = throttle
	return resp.AppendTo(nil)
}

type answerCase struct {
	name string
	req  *kmsg.MetadataRequest
}

func answerCases() []answerCase {
	var cs []answerCase
	named := func(v int16, names ...string) *kmsg.MetadataRequest {
		r := kmsg.NewPtrMetadataRequest()
		r.Version = v
		r.Topics = []kmsg.MetadataRequestTopic{}
		for _, n := range names {
			t := kmsg.NewMetadataRequestTopic()
			t.Topic = kmsg.StringPtr(n)
			r.Topics = append(r.Topics, t)
		}
		return r
	}
	for v := int16(0); v <= 12; v++ {
		all := kmsg.NewPtrMetadataRequest()
		all.Version = v
		if v == 0 {
			all.Topics = []kmsg.MetadataRequestTopic{}
		}
		cs = append(cs, answerCase{fmt.Sprintf("v%d all", v), all})
		cs = append(cs, answerCase{fmt.Sprintf("v%d b,a,b", v), named(v, "b", "a", "b")})
		cs = append(cs, answerCase{fmt.Sprintf("v%d a", v), named(v, "a")})
		if v >= 1 {
			cs = append(cs, answerCase{fmt.Sprintf("v%d none", v), named(v)})
		}
		if v >= 4 {
			r := named(v, "a", "__consumer_offsets")
			r.AllowAutoTopicCreation = true
			cs = append(cs, answerCase{fmt.Sprintf("v%d allow-auto", v), r})
		}
		if v >= 8 {
			r := named(v, "b")
			r.IncludeTopicAuthorizedOperations, r.IncludeClusterAuthorizedOperations = true, true
			cs = append(cs, answerCase{fmt.Sprintf("v%d ops", v), r})
			r = kmsg.NewPtrMetadataRequest()
			r.Version, r.IncludeClusterAuthorizedOperations = v, true
			cs = append(cs, answerCase{fmt.Sprintf("v%d all cluster-ops", v), r})
		}
		if v >= 10 {
			r := named(v, "a")
			t := kmsg.NewMetadataRequestTopic()
			t.TopicID = [16]byte{2} // by id: "b" (v12), invalid before
			r.Topics = append(r.Topics, t)
			t.TopicID = [16]byte{9} // unknown id
			r.Topics = append(r.Topics, t)
			cs = append(cs, answerCase{fmt.Sprintf("v%d ids", v), r})
		}
	}
	return cs
}

// TestMetadataAnswersAreTheBuiltOnes: without an authorizer every
// Metadata answer is sent from a kept encoding, and byte for byte it is
// the answer built from the cache: every version (v0, flexible v9+),
// both listeners (EXTERNAL lacks broker 3), all topics, named lists with
// duplicates, none, by id, with the authorized operations flags; asked
// twice (the second from the kept bytes) and again after every
// UpdateMetadata (a leader change, an epoch change, a broker's death),
// which the next answer shows.
func TestMetadataAnswersAreTheBuiltOnes(t *testing.T) {
	h := newAnswersHarness(t, nil, nil)
	check := func(stage string) {
		for _, c := range answerCases() {
			for _, l := range []string{"PLAINTEXT", "EXTERNAL"} {
				for i := 0; i < 2; i++ {
					resp := h.handle(c.req, l, "User:ANONYMOUS")
					if _, ok := resp.(*network.EncodedResponse); !ok {
						t.Fatalf("%s %s on %s: %T, want a kept encoding", stage, c.name, l, resp)
					}
					if got, want := resp.AppendTo(nil), h.fresh(c.req, l, 0); !bytes.Equal(got, want) {
						t.Fatalf("%s %s on %s (ask %d): answer differs from the built one", stage, c.name, l, i+1)
					}
				}
			}
		}
	}
	check("start")
	leaderOfA0 := func() int32 {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 7
		var got kmsg.MetadataResponse
		got.Version = 7
		if err := got.ReadFrom(h.handle(req, "PLAINTEXT", "User:ANONYMOUS").AppendTo(nil)); err != nil {
			t.Fatal(err)
		}
		for _, tp := range got.Topics {
			if *tp.Topic == "a" {
				return tp.Partitions[0].Leader
			}
		}
		t.Fatal("no topic a")
		return 0
	}
	if got := leaderOfA0(); got != 1 {
		t.Fatalf("leader of a-0 %d, want 1", got)
	}
	h.cache.Update(answersUpdate(2, 6)) // leader change of a-0
	if got := leaderOfA0(); got != 2 {
		t.Fatalf("after the leader change: leader of a-0 %d, want 2", got)
	}
	check("after a leader change")
	up := answersUpdate(2, 6)
	up.LiveBrokers = up.LiveBrokers[1:] // broker 1 died
	h.cache.Update(up)
	check("after broker 1's death")
	h.cache.SetClusterID("cluster-2")
	check("after a new cluster id")
}

// TestMetadataAnswersWithoutCache: a named topic the cache lacks is
// auto-created and answered LEADER_NOT_AVAILABLE from a built answer,
// never from a kept one; so is every answer with an authorizer, whose
// content depends on the principal (asked alternately by a principal who
// may Describe "a" and one who may not).
func TestMetadataAnswersWithoutCache(t *testing.T) {
	h := newAnswersHarness(t, nil, nil)
	req := kmsg.NewPtrMetadataRequest()
	req.Version, req.AllowAutoTopicCreation = 7, true
	for _, n := range []string{"a", "new-topic"} {
		tp := kmsg.NewMetadataRequestTopic()
		tp.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, tp)
	}
	for i := 0; i < 2; i++ {
		resp, ok := h.handle(req, "PLAINTEXT", "User:ANONYMOUS").(*kmsg.MetadataResponse)
		if !ok || len(resp.Topics) != 2 || resp.Topics[1].ErrorCode != kerr.LeaderNotAvailable.Code {
			t.Fatalf("ask %d: %+v, want a built answer with new-topic LEADER_NOT_AVAILABLE", i+1, resp)
		}
	}

	acls := &aclScript{}
	acls.grant("User:alice", kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, "a", "b", "__consumer_offsets")
	h = newAnswersHarness(t, acls, nil)
	all := kmsg.NewPtrMetadataRequest()
	all.Version = 12
	for i := 0; i < 2; i++ {
		for _, p := range []struct {
			principal string
			topics    int
		}{{"User:alice", 3}, {"User:bob", 0}} {
			resp, ok := h.handle(all, "PLAINTEXT", p.principal).(*kmsg.MetadataResponse)
			if !ok || len(resp.Topics) != p.topics {
				t.Fatalf("%s: %T with %d topics, want a built answer with %d", p.principal, resp, len(resp.Topics), p.topics)
			}
		}
	}
}

// TestMetadataAnswersThrottled: a request over its request quota gets its
// throttle_time_ms in the kept answer (v3+), as in the built one, and the
// next unthrottled request gets 0 from the same kept bytes.
func TestMetadataAnswersThrottled(t *testing.T) {
	qs := quota.New(quota.Config{WindowNum: 11, Window: time.Second})
	if err := qs.UpdateEntity(quota.Entity{User: quota.Named("slow")}, map[string]string{"request_percentage": "0.0001"}); err != nil {
		t.Fatal(err)
	}
	h := newAnswersHarness(t, nil, qs)
	for v := int16(0); v <= 12; v++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		if v == 0 {
			req.Topics = []kmsg.MetadataRequestTopic{}
		}
		var throttled bool
		for i := 0; i < 50 && !throttled; i++ { // until the quota is violated
			resp := h.handle(req, "PLAINTEXT", "User:slow")
			er, ok := resp.(*network.EncodedResponse)
			if !ok {
				t.Fatalf("v%d: %T, want a kept encoding", v, resp)
			}
			ms, _ := er.Throttle()
			throttled = ms > 0 || v < 3
			if got, want := resp.AppendTo(nil), h.fresh(req, "PLAINTEXT", ms); !bytes.Equal(got, want) {
				t.Fatalf("v%d throttle %d: answer differs from the built one", v, ms)
			}
		}
		if !throttled {
			t.Fatalf("v%d: never throttled", v)
		}
		resp := h.handle(req, "PLAINTEXT", "User:fast")
		if got, want := resp.AppendTo(nil), h.fresh(req, "PLAINTEXT", 0); !bytes.Equal(got, want) {
			t.Fatalf("v%d unthrottled after a throttled one: answer differs from the built one", v)
		}
	}
}

// TestMetadataAnswersBounded: the kept answers stay within their entry
// bound, and a newer generation drops the older one's.
func TestMetadataAnswersBounded(t *testing.T) {
	h := newAnswersHarness(t, nil, nil)
	for i := 0; i < 3*metadataAnswersMaxEntries; i++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 7
		for j := 0; j <= i%5; j++ {
			tp := kmsg.NewMetadataRequestTopic()
			tp.Topic = kmsg.StringPtr([]string{"a", "b"}[(i>>j)&1])
			req.Topics = append(req.Topics, tp)
		}
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr("a")})
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{TopicID: [16]byte{byte(i), byte(i >> 8)}})
		req.Version = 12
		h.handle(req, "PLAINTEXT", "User:ANONYMOUS")
	}
	m := &h.a.metaAnswers
	m.mu.Lock()
	n, size := len(m.entries), m.bytes
	m.mu.Unlock()
	if n > metadataAnswersMaxEntries || n < metadataAnswersMaxEntries/2 || size > metadataAnswersMaxBytes {
		t.Fatalf("%d answers of %d bytes kept, want at most %d", n, size, metadataAnswersMaxEntries)
	}
	h.cache.Update(answersUpdate(3, 7))
	all := kmsg.NewPtrMetadataRequest()
	all.Version = 12
	h.handle(all, "PLAINTEXT", "User:ANONYMOUS")
	m.mu.Lock()
	count := len(m.entries)
	m.mu.Unlock()
	if count != 1 {
		t.Fatalf("%d answers kept after a new generation, want 1", count)
	}
}

// TestMetadataAnswersConcurrent: clients asking at the same time as
// UpdateMetadata changes the leader of a-0 (and its epoch) each see one
// consistent state per answer (leader and epoch of one update), never an
// older one than their previous answer's, and the last answer is the
// one built from the last state.
func TestMetadataAnswersConcurrent(t *testing.T) {
	h := newAnswersHarness(t, nil, nil)
	leaderFor := func(epoch int32) int32 { return epoch%3 + 1 }
	h.cache.Update(answersUpdate(leaderFor(10), 10))
	const updates, clients, asks = 40, 4, 100
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		go func() {
			req := kmsg.NewPtrMetadataRequest()
			req.Version = int16(7 + 5*(c%2)) // v7 and flexible v12
			last := int32(0)
			for i := 0; i < asks; i++ {
				resp, err := h.a.Handle(context.Background(), &network.Request{Key: 3, Version: req.Version, Body: req, Listener: "PLAINTEXT"})
				if err != nil {
					errs <- err
					return
				}
				got := kmsg.NewPtrMetadataResponse()
				got.Version = req.Version
				if err := got.ReadFrom(resp.AppendTo(nil)); err != nil {
					errs <- err
					return
				}
				for _, tp := range got.Topics {
					if *tp.Topic != "a" {
						continue
					}
					p := tp.Partitions[0]
					if p.LeaderEpoch < last || p.Leader != leaderFor(p.LeaderEpoch) {
						errs <- fmt.Errorf("client %d ask %d: a-0 leader %d epoch %d after epoch %d", c, i, p.Leader, p.LeaderEpoch, last)
						return
					}
					last = p.LeaderEpoch
				}
			}
			errs <- nil
		}()
	}
	for e := int32(11); e < 11+updates; e++ {
		h.cache.Update(answersUpdate(leaderFor(e), e))
		time.Sleep(time.Millisecond)
	}
	for c := 0; c < clients; c++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, v := range []int16{7, 12} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		if got, want := h.handle(req, "PLAINTEXT", "User:ANONYMOUS").AppendTo(nil), h.fresh(req, "PLAINTEXT", 0); !bytes.Equal(got, want) {
			t.Errorf("v%d: the last answer differs from the built one", v)
		}
	}
}

// builtOnly hides Pin: the handler builds every answer (the path before
// answers were kept).
type builtOnly struct{ MetadataView }

// BenchmarkMetadata10k: the Metadata v7 answer of a topic of 10,000
// partitions (RF=3, 3 brokers), handled and encoded, built every time
// against sent from the kept encoding:
//
//	go test -run '^$' -bench Metadata10k -benchmem ./broker/api
func BenchmarkMetadata10k(b *testing.B) {
	r := kmsg.NewPtrUpdateMetadataRequest()
	r.Version, r.ControllerID, r.ControllerEpoch = 7, 1, 1
	for id := int32(1); id <= 3; id++ {
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
		ep.Host, ep.Port, ep.ListenerName = fmt.Sprintf("broker-%d", id), 9092, "PLAINTEXT"
		lb.Endpoints = append(lb.Endpoints, ep)
		r.LiveBrokers = append(r.LiveBrokers, lb)
	}
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic, ts.TopicID = "scale", [16]byte{1}
	for p := int32(0); p < 10000; p++ {
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Topic, ps.Partition, ps.Leader, ps.LeaderEpoch = "scale", p, p%3+1, 1
		ps.Replicas = []int32{p%3 + 1, (p+1)%3 + 1, (p+2)%3 + 1}
		ps.ISR = ps.Replicas
		ts.PartitionStates = append(ts.PartitionStates, ps)
	}
	r.TopicStates = append(r.TopicStates, ts)
	cache := metadata.New(1, "cluster-1")
	cache.Update(r)
	cfg, err := config.FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:1/x", "broker.id": "1", "log.dirs": b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 7
	tp := kmsg.NewMetadataRequestTopic()
	tp.Topic = kmsg.StringPtr("scale")
	req.Topics = append(req.Topics, tp)
	for _, bc := range []struct {
		name string
		meta MetadataView
	}{{"built", builtOnly{cache}}, {"kept", cache}} {
		b.Run(bc.name, func(b *testing.B) {
			a := New(Config{BrokerID: 1, ClusterID: "cluster-1", Broker: cfg, Metadata: bc.meta,
				Controller: fakeController{active: true}, Logger: slog.New(slog.DiscardHandler)})
			a.SetReady()
			nr := &network.Request{Key: 3, Version: 7, Body: req, Listener: "PLAINTEXT"}
			var buf []byte
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				resp, err := a.Handle(context.Background(), nr)
				if err != nil {
					b.Fatal(err)
				}
				buf = resp.AppendTo(buf[:0])
			}
			b.ReportMetric(float64(len(buf)), "resp-bytes")
		})
	}
}
