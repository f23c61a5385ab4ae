package broker

// Small adapters between the packages the broker wires together. Each one
// converts types only; no logic lives here.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/replica"
	"github.com/klassik/klassik/config"
)

// metaView is the api layer's read view of the metadata cache.
type metaView struct{ c *metadata.Cache }

var _ api.MetadataView = metaView{}

func (v metaView) MetadataResponse(req *kmsg.MetadataRequest, listener string) *kmsg.MetadataResponse {
	return v.c.MetadataResponse(req, listener)
}

func (v metaView) ControllerID() int32 { return v.c.ControllerID() }

func (v metaView) AliveBrokers(listener string) []api.BrokerEndpoint {
	var out []api.BrokerEndpoint
	for _, b := range v.c.AliveBrokers() {
		for _, e := range b.Endpoints {
			if e.Listener == listener {
				out = append(out, api.BrokerEndpoint{ID: b.ID, Host: e.Host, Port: e.Port, Rack: b.Rack})
				break
			}
		}
	}
	return out
}

func (v metaView) PartitionLeaders(topic string) (map[int32]int32, bool) {
	if !v.c.Contains(topic) {
		return nil, false
	}
	ps := v.c.Partitions(topic)
	out := make(map[int32]int32, len(ps))
	for p, s := range ps {
		out[p] = s.Leader
	}
	return out, true
}

// offsetStore is the group coordinator's persistence: the
// __consumer_offsets partitions this broker leads, written through the
// replica manager with acks=all and read back from the local log.
type offsetStore struct{ r *replica.Manager }

func (s offsetStore) Append(ctx context.Context, partition int32, batch []byte) error {
	tp := common.TopicPartition{Topic: config.GroupMetadataTopicName, Partition: partition}
	res, err := s.r.AppendToLocalLog(tp, batch, -1)
	if err != nil {
		return err
	}
	// acks=all: a commit is acknowledged only once every ISR member has it,
	// so it survives a coordinator failover. The coordinator bounds ctx by
	// offsets.commit.timeout.ms.
	timeout := 5 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	if code := s.r.WaitForReplication(ctx, tp, res.LastOffset, timeout); code != 0 {
		return kerr.ErrorForCode(code)
	}
	return nil
}

func (s offsetStore) Read(ctx context.Context, partition int32, fn func(batch []byte) error) error {
	return s.r.ReadLocalLog(ctx, common.TopicPartition{Topic: config.GroupMetadataTopicName, Partition: partition}, 0, fn)
}
