package main

// The stage's views of partitions and brokers that scenarios check their
// steps against: the state znode, what a broker answers, the log files.

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

// controller reads /controller and /controller_epoch.
func (s *Stage) controller() (id, epoch int32) {
	id, ok, err := s.zkc.GetController()
	if err != nil || !ok {
		s.Failf("no /controller: %v", err)
	}
	epoch, _, ok, err = s.zkc.GetControllerEpoch()
	if err != nil || !ok {
		s.Failf("no /controller_epoch: %v", err)
	}
	return id, epoch
}

// partState is a partition's state znode.
type partState struct {
	Leader, LeaderEpoch, ControllerEpoch int32
	ISR                                  []int32
}

// partition reads /brokers/topics/<t>/partitions/<p>/state.
func (s *Stage) partition(tp common.TopicPartition) partState {
	st, ok, err := s.zkc.GetPartitionState(tp)
	if err != nil || !ok {
		return partState{Leader: -1}
	}
	isr := slices.Clone(st.ISR)
	slices.Sort(isr)
	return partState{Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ControllerEpoch: st.ControllerEpoch, ISR: isr}
}

// waitPartition waits until the partition's state znode satisfies cond
// and broker informed (a broker id, or -1) answers Metadata with the same
// leader, so the brokers have applied it too.
func (s *Stage) waitPartition(tp common.TopicPartition, what string, cond func(partState) bool, informed int32) partState {
	var st partState
	s.WaitFor(30*time.Second, fmt.Sprintf(what, informed), func() bool {
		st = s.partition(tp)
		if !cond(st) {
			return false
		}
		return informed < 0 || s.metadataLeader(s.Broker(informed), tp) == st.Leader
	})
	return st
}

// metadataLeader asks broker b (Metadata) for the partition's leader, -1
// when it does not know one.
func (s *Stage) metadataLeader(b *Broker, tp common.TopicPartition) int32 {
	resp := s.request(b, func() kmsg.Request {
		req := kmsg.NewPtrMetadataRequest()
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(tp.Topic)
		req.Topics = append(req.Topics, t)
		return req
	}())
	if resp == nil {
		return -1
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		for _, p := range t.Partitions {
			if p.Partition == tp.Partition && p.ErrorCode == 0 {
				return p.Leader
			}
		}
	}
	return -1
}

// request sends req to broker b alone and returns the response, nil when
// it could not be sent.
func (s *Stage) request(b *Broker, req kmsg.Request) kmsg.Response {
	cl := s.brokerClient(b)
	ctx, cancel := s.Context(5 * time.Second)
	defer cancel()
	resp, err := cl.Request(ctx, req)
	if err != nil {
		return nil
	}
	return resp
}

// brokerClient is a client that knows only broker b (so every request
// goes to b), made once per broker.
func (s *Stage) brokerClient(b *Broker) *kgo.Client {
	if b.client == nil {
		b.client = s.Client(kgo.SeedBrokers(b.Addr))
	}
	return b.client
}

// produce sends one record with the client (its acks and partitioner, its
// default topic) and returns its offset.
func (s *Stage) produce(cl *kgo.Client, value string) int64 {
	off, err := s.tryProduce(cl, value, 30*time.Second)
	if err != nil {
		s.Failf("producing %q: %v", value, err)
	}
	return off
}

// tryProduce is produce for a step where a refusal is part of the story
// (NOT_ENOUGH_REPLICAS, a timeout): it returns the error.
func (s *Stage) tryProduce(cl *kgo.Client, value string, timeout time.Duration) (int64, error) {
	ctx, cancel := s.Context(timeout)
	defer cancel()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).First()
	if err != nil {
		return -1, err
	}
	return r.Offset, nil
}

// highWatermark asks the partition's leader (ListOffsets latest, which
// answers the high watermark) for it; -1 when it cannot be asked.
func (s *Stage) highWatermark(tp common.TopicPartition) int64 {
	st := s.partition(tp)
	if st.Leader < 0 {
		return -1
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = tp.Topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition = tp.Partition
	p.CurrentLeaderEpoch = -1
	p.Timestamp = -1 // latest
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp := s.request(s.Broker(st.Leader), req)
	if resp == nil {
		return -1
	}
	for _, t := range resp.(*kmsg.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			if p.Partition == tp.Partition && p.ErrorCode == 0 {
				return p.Offset
			}
		}
	}
	return -1
}

// segment is the path of broker b's segment file of tp with the base
// offset (".log").
func (s *Stage) segment(b *Broker, tp common.TopicPartition, base int64) string {
	return filepath.Join(b.LogDir, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition), fmt.Sprintf("%020d.log", base))
}

// logEndOffset reads broker b's log of tp from its segment files: the
// offset after the last batch (a batch header starts with the base offset
// and the batch length; the last offset delta sits 23 bytes in). It reads
// the files, not the broker, so it works on a paused broker too.
func (s *Stage) logEndOffset(b *Broker, tp common.TopicPartition) int64 {
	segs, _ := filepath.Glob(filepath.Join(b.LogDir, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition), "*.log"))
	slices.Sort(segs)
	leo := int64(0)
	for _, seg := range segs {
		data, err := os.ReadFile(seg)
		if err != nil {
			continue
		}
		for pos := 0; pos+27 <= len(data); {
			base := int64(binary.BigEndian.Uint64(data[pos:]))
			length := int(binary.BigEndian.Uint32(data[pos+8:]))
			if length <= 0 || pos+12+length > len(data) {
				break
			}
			leo = base + int64(binary.BigEndian.Uint32(data[pos+23:])) + 1
			pos += 12 + length
		}
	}
	return leo
}
