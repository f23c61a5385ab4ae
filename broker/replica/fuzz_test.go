package replica

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzKeys are the APIs the manager serves, in the order the fuzz input's
// first byte selects them.
var fuzzKeys = []int16{0, 1, 2, 4, 5, 6, 21, 23}

// FuzzManagerRequests feeds arbitrary request bodies, decoded by kmsg for
// every served API and version, to the manager. Invariants: no panic, no
// hang (fetches never wait: max wait forced to 0), and every response
// encodes at the request's version.
func FuzzManagerRequests(f *testing.F) {
	seed := func(key int16, req kmsg.Request) {
		for i, k := range fuzzKeys {
			if k == key {
				f.Add(byte(i), byte(req.GetVersion()), req.AppendTo(nil))
			}
		}
	}
	seed(0, produceReq(1, "t", 0, makeBatch(1, "a")))
	seed(1, fetchReq("t", 0, 0))
	fr13 := fetchReq("", 0, 0, func(r *kmsg.FetchRequest) { r.Version = 13; r.Topics[0].TopicID = topicIDFor("t") })
	seed(1, fr13)
	seed(2, listOffsetsReq(7, "t", 0, -1))
	seed(4, lairReq(1, "t", topicIDFor("t"), 0, 1, 1, []int32{1}, []int32{1}))
	sr := kmsg.NewPtrStopReplicaRequest()
	sr.Version = 3
	seed(5, sr)
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version = 7
	seed(6, um)
	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.Version = 2
	seed(21, dr)
	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.Version = 4
	seed(23, oe)

	f.Fuzz(func(t *testing.T, which, version byte, body []byte) {
		key := fuzzKeys[int(which)%len(fuzzKeys)]
		req := kmsg.RequestForKey(key)
		if req == nil {
			t.Fatalf("no request type for key %d", key)
		}
		req.SetVersion(int16(version) % (req.MaxVersion() + 1))
		if err := req.ReadFrom(body); err != nil {
			return
		}
		m, _ := newTestManager(t, nil)
		makeLeader(t, m, "t", 0, 0)
		produceOne(t, m, 1, "t", 0, makeBatch(1, "x", "y"))
		ctx := context.Background()
		var resp kmsg.Response
		switch r := req.(type) {
		case *kmsg.ProduceRequest:
			if out := m.Produce(ctx, r); out != nil {
				resp = out
			}
		case *kmsg.FetchRequest:
			r.MaxWaitMillis = 0
			out, err := m.Fetch(ctx, r)
			if err != nil {
				t.Fatalf("fetch: %v", err)
			}
			resp = out
		case *kmsg.ListOffsetsRequest:
			resp = m.ListOffsets(ctx, r)
		case *kmsg.LeaderAndISRRequest:
			resp = m.LeaderAndIsr(ctx, r)
		case *kmsg.StopReplicaRequest:
			resp = m.StopReplica(ctx, r)
		case *kmsg.UpdateMetadataRequest:
			resp = m.UpdateMetadata(ctx, r)
		case *kmsg.DeleteRecordsRequest:
			resp = m.DeleteRecords(ctx, r)
		case *kmsg.OffsetForLeaderEpochRequest:
			resp = m.OffsetForLeaderEpoch(ctx, r)
		}
		if resp == nil {
			return
		}
		if resp.GetVersion() != req.GetVersion() {
			t.Fatalf("response version %d for request version %d", resp.GetVersion(), req.GetVersion())
		}
		_ = resp.AppendTo(nil)
	})
}
