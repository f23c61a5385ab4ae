package controller

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/network/networktest"
)

// fakeBroker is a tiny Kafka endpoint built on broker/network's Server that
// records the control requests it receives and answers them with success
// (per-partition NONE for StopReplica with delete, so topic deletion
// completes).
type fakeBroker struct {
	id  int32
	srv *network.Server

	// maxVersions overrides the advertised maximum per API key (an older
	// broker); set before the first connection.
	maxVersions map[int16]int16
	// observe, when set before the first connection, sees every request
	// on the connection's goroutine before it is answered.
	observe func(kmsg.Request)

	// mu guards the following.
	mu       sync.Mutex
	reqs     []kmsg.Request
	dropNext int // close the connection instead of answering this many requests
}

func startFakeBroker(t testing.TB, id int32) *fakeBroker {
	t.Helper()
	fb := &fakeBroker{id: id}
	fb.srv = networktest.Start(t, fb, quietLogger())
	return fb
}

func (fb *fakeBroker) addr() (string, int32) {
	a := fb.srv.BoundAddr("PLAINTEXT").(*net.TCPAddr)
	return a.IP.String(), int32(a.Port)
}

func (fb *fakeBroker) endpoint() Endpoint {
	h, p := fb.addr()
	return Endpoint{Listener: "PLAINTEXT", Host: h, Port: p}
}

func (fb *fakeBroker) hostPort() string {
	h, p := fb.addr()
	return net.JoinHostPort(h, strconv.Itoa(int(p)))
}

func (fb *fakeBroker) Versions(key int16) (int16, int16, bool) {
	if v, ok := fb.maxVersions[key]; ok {
		return 0, v, true
	}
	switch key {
	case 4:
		return 0, 7, true
	case 5:
		return 0, 4, true
	case 6:
		return 0, 8, true
	case 18:
		return 0, 3, true
	}
	return 0, 0, false
}

func (fb *fakeBroker) Handle(_ context.Context, req *network.Request) (kmsg.Response, error) {
	fb.mu.Lock()
	if fb.dropNext > 0 {
		fb.dropNext--
		fb.mu.Unlock()
		return nil, net.ErrClosed
	}
	fb.reqs = append(fb.reqs, req.Body)
	fb.mu.Unlock()
	if fb.observe != nil {
		fb.observe(req.Body)
	}
	resp := req.Body.ResponseKind()
	if sr, ok := req.Body.(*kmsg.StopReplicaRequest); ok {
		r := resp.(*kmsg.StopReplicaResponse)
		for _, t := range sr.Topics {
			for _, p := range t.PartitionStates {
				rp := kmsg.NewStopReplicaResponsePartition()
				rp.Topic, rp.Partition = t.Topic, p.Partition
				r.Partitions = append(r.Partitions, rp)
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewStopReplicaResponsePartition()
				rp.Topic, rp.Partition = t.Topic, p
				r.Partitions = append(r.Partitions, rp)
			}
		}
	}
	return resp, nil
}

// requests returns a copy of the recorded requests.
func (fb *fakeBroker) requests() []kmsg.Request {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return append([]kmsg.Request(nil), fb.reqs...)
}

// leaderAndIsrFor returns the partition states of tp in every LeaderAndIsr
// received, with the request's controller epoch.
func (fb *fakeBroker) leaderAndIsrFor(tp common.TopicPartition) (states []kmsg.LeaderAndISRRequestTopicPartition, epochs []int32) {
	for _, r := range fb.requests() {
		lr, ok := r.(*kmsg.LeaderAndISRRequest)
		if !ok {
			continue
		}
		for _, ts := range lr.TopicStates {
			if ts.Topic != tp.Topic {
				continue
			}
			for _, p := range ts.PartitionStates {
				if p.Partition == tp.Partition {
					states = append(states, p)
					epochs = append(epochs, lr.ControllerEpoch)
				}
			}
		}
	}
	return states, epochs
}

func (fb *fakeBroker) count(key int16) int {
	n := 0
	for _, r := range fb.requests() {
		if r.Key() == key {
			n++
		}
	}
	return n
}
