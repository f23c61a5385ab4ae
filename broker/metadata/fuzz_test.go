package metadata

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzUpdateAndRespond decodes arbitrary bytes as UpdateMetadata and
// Metadata requests (kmsg's decoders, at a fuzzed version), applies the
// update and builds the response. Invariants: no panic; the response
// encodes and decodes again at its version; every broker listed has an
// endpoint on the listener; no partition leader is reported that is not a
// listed broker; deleted partitions are gone from the cache.
func FuzzUpdateAndRespond(f *testing.F) {
	seed := umr(8, 1, threeBrokers,
		part{topic: "a", id: idA, p: 0, leader: 1, epoch: 5, isr: []int32{1, 2}, replicas: []int32{1, 2}},
		part{topic: "a", id: idA, p: 1, leader: -2},
		part{topic: "b", id: idB, p: 3, leader: 9, isr: []int32{9}, replicas: []int32{9, 1}, offline: []int32{9}})
	f.Add(int8(8), seed.AppendTo(nil), int8(12), metaReq(12, "a", "b", "c").AppendTo(nil))
	f.Add(int8(4), umr(4, 1, threeBrokers, part{topic: "x", p: 0, leader: 1}).AppendTo(nil), int8(0), metaReq(0).AppendTo(nil))
	f.Add(int8(0), umr(0, 1, threeBrokers[:1], part{topic: "y", p: 0, leader: 1, replicas: []int32{1, 2}}).AppendTo(nil), int8(1), []byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, uv int8, ub []byte, mv int8, mb []byte) {
		um := kmsg.NewPtrUpdateMetadataRequest()
		um.Version = int16(uint8(uv) % 9)
		if um.ReadFrom(ub) != nil {
			return
		}
		c := New(1, "fuzz")
		deleted := c.Update(um)
		for _, tp := range deleted {
			if _, ok := c.Partition(tp.Topic, tp.Partition); ok {
				t.Fatalf("deleted %v still cached", tp)
			}
		}
		mr := kmsg.NewPtrMetadataRequest()
		mr.Version = int16(uint8(mv) % 13)
		if mr.ReadFrom(mb) != nil {
			return
		}
		c.MarkCreating("c")
		_ = c.MissingTopics(mr)
		resp := c.MetadataResponse(mr, "PLAINTEXT")
		listed := map[int32]bool{}
		for _, b := range resp.Brokers {
			if _, _, ok := c.Endpoint(b.NodeID, "PLAINTEXT"); !ok {
				t.Fatalf("broker %d listed without a PLAINTEXT endpoint", b.NodeID)
			}
			listed[b.NodeID] = true
		}
		for _, tp := range resp.Topics {
			for _, p := range tp.Partitions {
				if p.Leader != -1 && !listed[p.Leader] {
					t.Fatalf("leader %d of %v not among the brokers", p.Leader, tp.Topic)
				}
			}
		}
		back := kmsg.NewPtrMetadataResponse()
		back.Version = resp.Version
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("v%d response does not decode: %v", resp.Version, err)
		}
	})
}
