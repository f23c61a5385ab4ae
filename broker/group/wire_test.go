package group_test

// An end-to-end check with a real client library: franz-go's consumer
// group (JoinGroup v9 with MEMBER_ID_REQUIRED, SyncGroup v5, Heartbeat v4,
// LeaveGroup v5, OffsetFetch v8, FindCoordinator v4 batched keys) and its
// admin client, talking to the coordinator through the broker's socket
// server. The handler here is also a sketch of how the api layer wires
// the coordinator.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/network/networktest"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	nodeID     = 1
	topic      = "t"
	partitions = 3
)

type wireHandler struct {
	c    *group.Coordinator
	host string
	port int32
}

// maxVersions are Kafka 3.4's maxima for the keys served here.
var maxVersions = map[kmsg.Key]int16{
	kmsg.Metadata: 12, kmsg.FindCoordinator: 4, kmsg.JoinGroup: 9, kmsg.SyncGroup: 5, kmsg.Heartbeat: 4,
	kmsg.LeaveGroup: 5, kmsg.OffsetCommit: 8, kmsg.OffsetFetch: 8, kmsg.DescribeGroups: 5, kmsg.ListGroups: 4,
	kmsg.DeleteGroups: 2, kmsg.OffsetDelete: 0, kmsg.ListOffsets: 7, kmsg.Fetch: 12, kmsg.ApiVersions: 3,
}

func (h *wireHandler) Versions(key int16) (int16, int16, bool) {
	max, ok := maxVersions[kmsg.Key(key)]
	return 0, max, ok
}

func (h *wireHandler) Handle(ctx context.Context, req *network.Request) (kmsg.Response, error) {
	switch r := req.Body.(type) {
	case *kmsg.MetadataRequest:
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: nodeID, Host: h.host, Port: h.port}}
		resp.ControllerID = nodeID
		name := topic
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = &name
		for p := int32(0); p < partitions; p++ {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.Replicas, mp.ISR = p, nodeID, []int32{nodeID}, []int32{nodeID}
			mt.Partitions = append(mt.Partitions, mp)
		}
		resp.Topics = []kmsg.MetadataResponseTopic{mt}
		return resp, nil
	case *kmsg.FindCoordinatorRequest:
		// FindCoordinator: key type 0 (group) maps to the leader of
		// __consumer_offsets partition c.PartitionFor(key); this single
		// broker leads them all. v4 batches keys.
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		if r.Version >= 4 {
			for _, k := range r.CoordinatorKeys {
				resp.Coordinators = append(resp.Coordinators, kmsg.FindCoordinatorResponseCoordinator{Key: k, NodeID: nodeID, Host: h.host, Port: h.port})
			}
		} else {
			resp.NodeID, resp.Host, resp.Port = nodeID, h.host, h.port
		}
		return resp, nil
	case *kmsg.JoinGroupRequest:
		host, _, _ := net.SplitHostPort(req.RemoteAddr.String())
		return h.c.JoinGroup(ctx, r, group.JoinInfo{ClientID: req.ClientIDOrEmpty(), ClientHost: "/" + host}), nil
	case *kmsg.SyncGroupRequest:
		return h.c.SyncGroup(ctx, r), nil
	case *kmsg.HeartbeatRequest:
		return h.c.Heartbeat(ctx, r), nil
	case *kmsg.LeaveGroupRequest:
		return h.c.LeaveGroup(ctx, r), nil
	case *kmsg.OffsetCommitRequest:
		return h.c.OffsetCommit(ctx, r), nil
	case *kmsg.OffsetFetchRequest:
		return h.c.OffsetFetch(ctx, r), nil
	case *kmsg.DescribeGroupsRequest:
		return h.c.DescribeGroups(ctx, r), nil
	case *kmsg.ListGroupsRequest:
		return h.c.ListGroups(ctx, r), nil
	case *kmsg.DeleteGroupsRequest:
		return h.c.DeleteGroups(ctx, r), nil
	case *kmsg.OffsetDeleteRequest:
		return h.c.OffsetDelete(ctx, r), nil
	case *kmsg.ListOffsetsRequest:
		resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition, rp.Offset, rp.Timestamp = p.Partition, 0, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	case *kmsg.FetchRequest:
		// An empty topic: wait out MaxWait and answer no records (a
		// partition left out of a fetch answer has nothing new).
		select {
		case <-time.After(time.Duration(min(r.MaxWaitMillis, 200)) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return r.ResponseKind(), nil
	}
	return nil, errors.New("unexpected request")
}

// startWire serves a coordinator that leads every __consumer_offsets
// partition on a loopback socket server.
func startWire(t *testing.T) (string, *group.Coordinator) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := group.DefaultConfig()
	cfg.InitialRebalanceDelay = 100 * time.Millisecond
	cfg.OffsetsTopicPartitions = 5
	c, err := group.New(cfg, group.NewMemStore(), purgatory.RealClock(), logger)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: the server shuts down before the
	// coordinator closes, so no handler is parked in a closed coordinator.
	t.Cleanup(c.Close)
	h := &wireHandler{c: c}
	srv := networktest.Start(t, h, logger)
	addr := srv.BoundAddr("PLAINTEXT").String()
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	h.host, h.port = host, int32(p)
	for p := int32(0); p < cfg.OffsetsTopicPartitions; p++ {
		c.OnBecomeLeader(p)
	}
	return addr, c
}

// waitDescribed polls DescribeGroups through kadm until want accepts the
// group's description.
func waitDescribed(ctx context.Context, t *testing.T, adm *kadm.Client, g, what string, want func(kadm.DescribedGroup) bool) kadm.DescribedGroup {
	t.Helper()
	var last kadm.DescribedGroup
	for ctx.Err() == nil {
		if ds, err := adm.DescribeGroups(ctx, g); err == nil {
			last = ds[g]
			if want(last) {
				return last
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last %+v", what, last)
	return last
}

func ownedPartitions(d kadm.DescribedGroup) int {
	n := 0
	for _, m := range d.Members {
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				n += len(t.Partitions)
			}
		}
	}
	return n
}

func newAdmin(t *testing.T, addr string) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func TestFranzGoConsumerGroup(t *testing.T) {
	addr, _ := startWire(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newConsumer := func() *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("cg"), kgo.ConsumeTopics(topic),
			kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(200*time.Millisecond), kgo.FetchMaxWait(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		pollCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for pollCtx.Err() == nil {
				cl.PollFetches(pollCtx)
			}
		}()
		t.Cleanup(func() { stop(); <-done; cl.Close() })
		return cl
	}
	adm := newAdmin(t, addr)
	waitGroup := func(what string, want func(kadm.DescribedGroup) bool) kadm.DescribedGroup {
		t.Helper()
		return waitDescribed(ctx, t, adm, "cg", what, want)
	}

	c1 := newConsumer()
	c2 := newConsumer()
	d := waitGroup("two stable members", func(d kadm.DescribedGroup) bool {
		return d.State == "Stable" && len(d.Members) == 2 && ownedPartitions(d) == partitions
	})
	if d.ProtocolType != "consumer" || d.Protocol != "cooperative-sticky" {
		t.Errorf("protocol %q/%q", d.ProtocolType, d.Protocol)
	}
	for _, m := range d.Members {
		if m.ClientHost != "/127.0.0.1" {
			t.Errorf("client host %q", m.ClientHost)
		}
	}

	// A simple (admin) commit on another group, fetched back.
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: topic, Partition: 1, At: 17, LeaderEpoch: -1, Metadata: "note"})
	if err := adm.CommitAllOffsets(ctx, "admin-group", offs); err != nil {
		t.Fatal(err)
	}
	fetched, err := adm.FetchOffsets(ctx, "admin-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup(topic, 1); !ok || o.At != 17 || o.Metadata != "note" {
		t.Fatalf("fetched %+v", fetched)
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 2 || listed["cg"].State != "Stable" || listed["admin-group"].State != "Empty" {
		t.Errorf("listed %+v", listed)
	}
	dr, err := adm.DeleteGroups(ctx, "cg")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(dr["cg"].Err, kerr.NonEmptyGroup) {
		t.Errorf("delete of an active group: %v", dr["cg"].Err)
	}

	// One consumer leaves: the other takes every partition.
	c1.LeaveGroup()
	waitGroup("one member", func(d kadm.DescribedGroup) bool {
		return d.State == "Stable" && len(d.Members) == 1 && ownedPartitions(d) == partitions
	})
	c2.LeaveGroup()
	waitGroup("empty group", func(d kadm.DescribedGroup) bool { return d.State == "Empty" })
	dr, err = adm.DeleteGroups(ctx, "cg", "admin-group")
	if err != nil {
		t.Fatal(err)
	}
	for g, r := range dr {
		if r.Err != nil {
			t.Errorf("delete %s: %v", g, r.Err)
		}
	}
}
