package controller

import (
	"reflect"
	"slices"
	"testing"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
)

func alterReq(broker int32, epoch int64, topicID [16]byte, parts ...kmsg.AlterPartitionRequestTopicPartition) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 2
	req.BrokerID, req.BrokerEpoch = broker, epoch
	t := kmsg.NewAlterPartitionRequestTopic()
	t.TopicID = topicID
	t.Partitions = parts
	req.Topics = append(req.Topics, t)
	return req
}

func alterPart(p, leaderEpoch, partitionEpoch int32, isr ...int32) kmsg.AlterPartitionRequestTopicPartition {
	ap := kmsg.NewAlterPartitionRequestTopicPartition()
	ap.Partition, ap.LeaderEpoch, ap.PartitionEpoch, ap.NewISR = p, leaderEpoch, partitionEpoch, isr
	return ap
}

// AlterPartition's per-partition checks, in Kafka's order, on the in-memory
// ZooKeeper.
func TestAlterPartition(t *testing.T) {
	h := newHarness(t)
	h.exec("broker-up", []string{"1", "2", "3"})
	h.exec("start", []string{"1", "2"})
	h.exec("create-topic", []string{"a", "0:1,2,3", "1:2,3,1"})
	c := h.ctrls[1]
	id := c.ctx.TopicID("a")
	e1, _ := c.ctx.BrokerEpoch(1)
	code := func(resp *kmsg.AlterPartitionResponse, i int) int16 { return resp.Topics[0].Partitions[i].ErrorCode }

	// Not the controller; stale broker epoch.
	if resp, _ := h.ctrls[2].processAlterPartition(alterReq(1, e1, id, alterPart(0, 0, 0, 1, 2))); resp.ErrorCode != kerr.NotController.Code {
		t.Fatalf("standby: %d", resp.ErrorCode)
	}
	if resp, _ := c.processAlterPartition(alterReq(1, e1-1, id, alterPart(0, 0, 0, 1, 2))); resp.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("stale broker epoch: %d", resp.ErrorCode)
	}

	// The leader of a-0 shrinks its ISR: accepted and written.
	resp, err := c.processAlterPartition(alterReq(1, e1, id, alterPart(0, 0, 0, 1, 2), alterPart(1, 0, 0, 2, 3)))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if code(resp, 0) != 0 || resp.Topics[0].Partitions[0].PartitionEpoch != 1 || !reflect.DeepEqual(resp.Topics[0].Partitions[0].ISR, []int32{1, 2}) {
		t.Fatalf("a-0: %+v", resp.Topics[0].Partitions[0])
	}
	// a-1 is led by 2, not by the sender (Klassik's hardening).
	if code(resp, 1) != kerr.InvalidRequest.Code {
		t.Fatalf("a-1 from a non-leader: %d", code(resp, 1))
	}
	data, st, _ := h.get(zkpaths.PartitionStatePath("a", 0))
	s, _ := zkpaths.DecodeLeaderAndIsr(data, st.Version)
	if !reflect.DeepEqual(s.ISR, []int32{1, 2}) || s.ZkVersion != 1 || s.LeaderEpoch != 0 {
		t.Fatalf("state znode %s", s)
	}
	if h.output() == "" {
		t.Fatal("no UpdateMetadata after an ISR change")
	}

	cases := []struct {
		name string
		part kmsg.AlterPartitionRequestTopicPartition
		want int16
	}{
		{"idempotent retry", alterPart(0, 0, 1, 1, 2), 0},
		{"newer partition epoch", alterPart(0, 0, 5, 1, 2), kerr.NotController.Code},
		{"newer leader epoch", alterPart(0, 3, 1, 1, 2), kerr.NotController.Code},
		{"stale partition epoch", alterPart(0, 0, 0, 1, 2, 3), kerr.InvalidUpdateVersion.Code},
		{"unknown partition", alterPart(9, 0, 0, 1), kerr.UnknownTopicOrPartition.Code},
		{"leader outside the new ISR", alterPart(0, 0, 1, 2), kerr.InvalidRequest.Code},
		{"replica outside the assignment", alterPart(0, 0, 1, 1, 7), kerr.InvalidRequest.Code},
		{"duplicate ISR member", alterPart(0, 0, 1, 1, 1), kerr.InvalidRequest.Code},
	}
	for _, tc := range cases {
		resp, _ := c.processAlterPartition(alterReq(1, e1, id, tc.part))
		if got := code(resp, 0); got != tc.want {
			t.Errorf("%s: error %d, want %d", tc.name, got, tc.want)
		}
	}

	// Expanding with a dead broker: INELIGIBLE_REPLICA (v2+).
	h.exec("broker-down", []string{"3"})
	data, st, _ = h.get(zkpaths.PartitionStatePath("a", 0))
	s, _ = zkpaths.DecodeLeaderAndIsr(data, st.Version)
	resp, _ = c.processAlterPartition(alterReq(1, e1, id, alterPart(0, s.LeaderEpoch, s.ZkVersion, 1, 2, 3)))
	if code(resp, 0) != kerr.IneligibleReplica.Code {
		t.Fatalf("ineligible: %d", code(resp, 0))
	}
	// a-1 lost replica 3 from its ISR (leader epoch 1 now): its leader's
	// request with the old leader epoch 0 is fenced.
	e2, _ := c.ctx.BrokerEpoch(2)
	if l, _ := c.ctx.Leadership(common.TopicPartition{Topic: "a", Partition: 1}); l.LeaderEpoch != 1 {
		t.Fatalf("a-1 leadership %s", l)
	}
	resp, _ = c.processAlterPartition(alterReq(2, e2, id, alterPart(1, 0, 1, 2)))
	if code(resp, 0) != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("fenced: %d", code(resp, 0))
	}
	// Unknown topic id.
	resp, _ = c.processAlterPartition(alterReq(1, e1, [16]byte{9}, alterPart(0, 0, 0, 1)))
	if code(resp, 0) != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown topic id: %d", code(resp, 0))
	}
}

// FuzzAlterPartition feeds arbitrary AlterPartition request bodies (any
// version) to the controller. Invariants: no panic; the response has one
// topic per request topic and one partition per request partition; the
// state znodes keep leader ∈ ISR.
func FuzzAlterPartition(f *testing.F) {
	for v := int16(0); v <= 3; v++ {
		req := alterReq(1, 0, [16]byte{}, alterPart(0, 0, 0, 1, 2))
		req.Version = v
		req.Topics[0].Topic = "a"
		f.Add(v, req.AppendTo(nil))
	}
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		version = (version%4 + 4) % 4
		req := kmsg.NewPtrAlterPartitionRequest()
		req.Version = version
		if err := req.ReadFrom(body); err != nil {
			return
		}
		h := newHarness(t)
		h.exec("broker-up", []string{"1", "2"})
		h.exec("start", []string{"1"})
		h.exec("create-topic", []string{"a", "0:1,2"})
		c := h.ctrls[1]
		if e, ok := c.ctx.BrokerEpoch(req.BrokerID); ok && req.BrokerEpoch == 0 {
			req.BrokerEpoch = e // reach the per-partition checks more often
		}
		resp, _ := c.processAlterPartition(req)
		if resp == nil {
			t.Fatal("nil response")
		}
		if resp.ErrorCode == 0 {
			if len(resp.Topics) != len(req.Topics) {
				t.Fatalf("%d topics for %d", len(resp.Topics), len(req.Topics))
			}
			for i := range req.Topics {
				if len(resp.Topics[i].Partitions) != len(req.Topics[i].Partitions) {
					t.Fatalf("topic %d: %d partitions for %d", i, len(resp.Topics[i].Partitions), len(req.Topics[i].Partitions))
				}
			}
		}
		data, st, err := h.get(zkpaths.PartitionStatePath("a", 0))
		if err != nil {
			t.Fatal(err)
		}
		s, err := zkpaths.DecodeLeaderAndIsr(data, st.Version)
		if err != nil {
			t.Fatal(err)
		}
		if s.Leader >= 0 && !slices.Contains(s.ISR, s.Leader) {
			t.Fatalf("leader %d not in ISR %v", s.Leader, s.ISR)
		}
	})
}
