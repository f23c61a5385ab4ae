package controller

import (
	"sync"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Per broker, FIFO and one at a time; on an I/O error the same
// request is resent after a reconnect.
func TestChannelManagerOrderAndResend(t *testing.T) {
	fb := startFakeBroker(t, 1)
	fb.mu.Lock()
	fb.dropNext = 1 // the first request's connection dies: it must be resent
	fb.mu.Unlock()
	var mu sync.Mutex
	var got []int32
	cm := newChannelManager(9, "PLAINTEXT", 5*time.Second, quietLogger(), func(b int32, o outgoingRequest, resp kmsg.Response) {
		mu.Lock()
		got = append(got, o.req.(*kmsg.UpdateMetadataRequest).ControllerEpoch)
		mu.Unlock()
	}, newChannelMetrics(gometrics.NewRegistry()))
	defer cm.shutdown()
	cm.addBroker(Broker{ID: 1, Endpoints: []Endpoint{fb.endpoint()}})
	var reqs []outgoingRequest
	for i := range 20 {
		r := kmsg.NewPtrUpdateMetadataRequest()
		r.Version = 8
		r.ControllerEpoch = int32(i)
		reqs = append(reqs, outgoingRequest{broker: 1, kind: kindUpdateMetadata, req: r})
	}
	cm.send(reqs)
	cm.send([]outgoingRequest{{broker: 42, kind: kindUpdateMetadata, req: kmsg.NewPtrUpdateMetadataRequest()}}) // unknown: dropped
	waitFor(t, "20 responses", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 20 })
	for i, e := range got {
		if e != int32(i) {
			t.Fatalf("responses out of order: %v", got)
		}
	}
	seen := fb.requests()
	if len(seen) != 20 {
		t.Fatalf("broker saw %d requests", len(seen))
	}
	for i, r := range seen {
		if r.(*kmsg.UpdateMetadataRequest).ControllerEpoch != int32(i) {
			t.Fatalf("broker saw requests out of order at %d", i)
		}
	}
	if v := cm.maxVersion(1, 4); v != 7 {
		t.Fatalf("advertised LeaderAndIsr max = %d", v)
	}
}

// Removing a broker stops its sender and discards the queue, even while it
// cannot connect.
func TestChannelManagerRemoveUnreachableBroker(t *testing.T) {
	cm := newChannelManager(1, "PLAINTEXT", time.Second, quietLogger(), nil, newChannelMetrics(gometrics.NewRegistry()))
	defer cm.shutdown()
	cm.addBroker(Broker{ID: 2, Endpoints: []Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 1}}})
	cm.send([]outgoingRequest{{broker: 2, kind: kindUpdateMetadata, req: kmsg.NewPtrUpdateMetadataRequest()}})
	done := make(chan struct{})
	go func() { cm.removeBroker(2); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("removeBroker did not stop the sender")
	}
}

// Versions are capped by what the recipient advertises (a Kafka 2.8
// broker: LeaderAndIsr ≤ 5, UpdateMetadata ≤ 7, StopReplica ≤ 3).
func TestChannelManagerCapsVersions(t *testing.T) {
	fb := startFakeBroker(t, 1)
	fb.maxVersions = map[int16]int16{4: 5, 6: 7, 5: 3}
	done := make(chan struct{}, 3)
	cm := newChannelManager(1, "PLAINTEXT", 5*time.Second, quietLogger(), func(int32, outgoingRequest, kmsg.Response) { done <- struct{}{} }, newChannelMetrics(gometrics.NewRegistry()))
	defer cm.shutdown()
	cm.addBroker(Broker{ID: 1, Endpoints: []Endpoint{fb.endpoint()}})
	lr := kmsg.NewPtrLeaderAndISRRequest()
	lr.Version = leaderAndIsrVersion
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version = updateMetadataVersion
	sr := kmsg.NewPtrStopReplicaRequest()
	sr.Version = stopReplicaVersion
	cm.send([]outgoingRequest{{broker: 1, kind: kindLeaderAndIsr, req: lr}, {broker: 1, kind: kindUpdateMetadata, req: um}, {broker: 1, kind: kindStopReplica, req: sr}})
	for range 3 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("no response")
		}
	}
	got := map[int16]int16{}
	for _, r := range fb.requests() {
		got[r.Key()] = r.GetVersion()
	}
	if got[4] != 5 || got[6] != 7 || got[5] != 3 {
		t.Fatalf("versions sent: %v", got)
	}
}
