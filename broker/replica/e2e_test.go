package replica

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/network/networktest"
)

// e2eHandler is a minimal KafkaApis for the end-to-end test: the data-path
// APIs go to the manager; Metadata is answered from the partitions this
// single broker hosts.
type e2eHandler struct {
	m    *Manager
	addr func() net.Addr

	// mu guards the following.
	mu               sync.Mutex
	maxFetchVersion  int16
	incrementalFetch int
	splicedFetch     int
}

// e2eVersions are the min and max versions the handler serves per API.
var e2eVersions = map[kmsg.Key][2]int16{
	kmsg.Produce:              {3, 9},
	kmsg.Fetch:                {4, 13},
	kmsg.ListOffsets:          {1, 7},
	kmsg.Metadata:             {1, 12},
	kmsg.OffsetForLeaderEpoch: {0, 4},
	kmsg.ApiVersions:          {0, 3},
}

func (h *e2eHandler) Versions(key int16) (int16, int16, bool) {
	v, ok := e2eVersions[kmsg.Key(key)]
	return v[0], v[1], ok
}

func (h *e2eHandler) Handle(ctx context.Context, req *network.Request) (kmsg.Response, error) {
	switch body := req.Body.(type) {
	case *kmsg.ProduceRequest:
		resp, err := h.m.ProduceOrClose(ContextWithClientID(ctx, req.ClientIDOrEmpty()), body)
		if err != nil || resp == nil {
			return nil, err // no typed nil: acks=0 sends nothing
		}
		return resp, nil
	case *kmsg.FetchRequest:
		resp, err := h.m.Fetch(ctx, body)
		h.mu.Lock()
		h.maxFetchVersion = max(h.maxFetchVersion, body.Version)
		if body.SessionID != 0 && body.SessionEpoch > 0 {
			h.incrementalFetch++
		}
		if _, ok := resp.(*network.FileFetchResponse); ok {
			h.splicedFetch++
		}
		h.mu.Unlock()
		return resp, err
	case *kmsg.ListOffsetsRequest:
		return h.m.ListOffsets(ctx, body), nil
	case *kmsg.OffsetForLeaderEpochRequest:
		return h.m.OffsetForLeaderEpoch(ctx, body), nil
	case *kmsg.MetadataRequest:
		return h.metadata(body), nil
	}
	return nil, fmt.Errorf("unexpected request key %d", req.Key)
}

func (h *e2eHandler) metadata(req *kmsg.MetadataRequest) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	resp.Version = req.Version
	host, portStr, _ := net.SplitHostPort(h.addr().String())
	port, _ := strconv.Atoi(portStr)
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID = h.m.cfg.BrokerID
	b.Host = host
	b.Port = int32(port)
	resp.Brokers = append(resp.Brokers, b)
	resp.ControllerID = h.m.cfg.BrokerID
	cluster := "e2e-cluster"
	resp.ClusterID = &cluster

	byTopic := map[string][]PartitionState{}
	parts := map[string][]int32{}
	for _, p := range h.m.Partitions() {
		tp := p.TopicPartition()
		byTopic[tp.Topic] = append(byTopic[tp.Topic], p.State())
		parts[tp.Topic] = append(parts[tp.Topic], tp.Partition)
	}
	var names []string
	if req.Topics == nil {
		for n := range byTopic {
			names = append(names, n)
		}
	} else {
		for _, t := range req.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
			}
		}
	}
	for _, n := range names {
		mt := kmsg.NewMetadataResponseTopic()
		name := n
		mt.Topic = &name
		states, ok := byTopic[n]
		if !ok {
			mt.ErrorCode = 3
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		mt.TopicID = states[0].TopicID
		for i, st := range states {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition = parts[n][i]
			mp.Leader = st.Leader
			mp.LeaderEpoch = st.LeaderEpoch
			mp.Replicas = st.Replicas
			mp.ISR = st.ISR
			mt.Partitions = append(mt.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, mt)
	}
	return resp
}

// startE2E serves a storage-backed manager leading topic's partitions over
// the real network layer on 127.0.0.1 and returns the handler and address.
func startE2E(t *testing.T, topic string, partitions int32) (*e2eHandler, string) {
	t.Helper()
	m, _, _ := newStorageManager(t, nil)
	for p := int32(0); p < partitions; p++ {
		makeLeader(t, m, topic, p, 0)
	}
	h := &e2eHandler{m: m}
	srv := networktest.Start(t, h, quietLogger())
	h.addr = func() net.Addr { return srv.BoundAddr("PLAINTEXT") }
	return h, h.addr().String()
}

// TestKgoProduceConsume runs franz-go's producer and consumer against the
// manager through the real network layer (Fetch v13 with topic ids, fetch
// sessions, sendfile).
func TestKgoProduceConsume(t *testing.T) {
	const topic = "e2e"
	const partitions = 3
	h, seed := startE2E(t, topic, partitions)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	prod, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.DisableIdempotentWrite(),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	cons, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()

	const n = 300
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Value: []byte(strconv.Itoa(i))})
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	seen := make(map[string]bool)
	lastOffset := map[int32]int64{}
	for len(seen) < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d before the deadline", len(seen), n)
		}
		fs.EachError(func(tp string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch error %s-%d: %v", tp, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if seen[string(r.Value)] {
				t.Fatalf("duplicate record %s", r.Value)
			}
			if last, ok := lastOffset[r.Partition]; ok && r.Offset != last+1 {
				t.Fatalf("partition %d: offset %d after %d", r.Partition, r.Offset, last)
			}
			lastOffset[r.Partition] = r.Offset
			seen[string(r.Value)] = true
		})
	}
	for p := int32(0); p < partitions; p++ {
		if lastOffset[p] != n/partitions-1 {
			t.Errorf("partition %d ends at %d, want %d", p, lastOffset[p], n/partitions-1)
		}
	}

	// A late record reaches the parked consumer through the long poll.
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("late")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("late record not consumed")
		}
		got := false
		fs.EachRecord(func(r *kgo.Record) { got = got || string(r.Value) == "late" })
		if got {
			break
		}
	}

	// The late record came through an incremental fetch of the session
	// created by the first fetch.
	h.mu.Lock()
	if h.maxFetchVersion != 13 || h.incrementalFetch == 0 || h.splicedFetch == 0 {
		t.Errorf("fetch path not exercised: max version %d, incremental fetches %d, spliced responses %d",
			h.maxFetchVersion, h.incrementalFetch, h.splicedFetch)
	}
	h.mu.Unlock()
}
