package replica

import (
	"context"
	"testing"
	"time"

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
	// Empty requests: StopReplica v3, UpdateMetadata v7, DeleteRecords v2,
	// OffsetForLeaderEpoch v4.
	for _, kv := range [][2]int16{{5, 3}, {6, 7}, {21, 2}, {23, 4}} {
		req := kmsg.RequestForKey(kv[0])
		req.SetVersion(kv[1])
		seed(kv[0], req)
	}

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
		m, _ := newT0Leader(t)
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

// FuzzTruncationOffset checks the invariants of the truncation rule for
// any leader answer and local epoch cache: the truncation point never
// exceeds the local log end, and when the follower knows the leader's
// epoch it never exceeds the leader's end of it either.
func FuzzTruncationOffset(f *testing.F) {
	f.Add(int32(0), int64(1), int64(2), int64(1), int32(0), int64(2))
	f.Add(int32(-1), int64(-1), int64(5), int64(3), int32(2), int64(5))
	f.Add(int32(3), int64(7), int64(9), int64(4), int32(1), int64(6))
	f.Fuzz(func(t *testing.T, le int32, lend, leo, fetch int64, localEpoch int32, localEnd int64) {
		if leo < 0 || fetch < 0 || fetch > leo || localEnd < 0 || localEnd > leo {
			return
		}
		local := func(e int32) (int32, int64) {
			if e < 0 || localEpoch < 0 {
				return -1, -1
			}
			if e >= localEpoch {
				return localEpoch, leo
			}
			return min(e, localEpoch), localEnd
		}
		off, done := truncationOffset(le, lend, local, leo, fetch)
		if off > leo {
			t.Fatalf("truncation offset %d beyond the log end %d", off, leo)
		}
		if fe, _ := local(le); done && lend >= 0 && le >= 0 && fe == le && off > lend {
			t.Fatalf("truncation offset %d beyond the leader's end %d of a shared epoch", off, lend)
		}
	})
}

// FuzzHighWatermarkCandidate checks: the candidate never
// exceeds the leader's log end and never exceeds the log end of a known
// ISR member.
func FuzzHighWatermarkCandidate(f *testing.F) {
	f.Add(int64(10), int64(7), int64(3), true, false, int64(1))
	f.Add(int64(0), int64(0), int64(-1), false, true, int64(20))
	f.Fuzz(func(t *testing.T, leaderLEO, leo2, leo3 int64, isr2, isr3 bool, agoSec int64) {
		if leaderLEO < 0 || leo2 < -1 || leo3 < -1 || leo2 > leaderLEO || leo3 > leaderLEO || agoSec < 0 || agoSec > 1<<20 {
			return
		}
		now := time.Unix(1<<30, 0)
		isr := []int32{1}
		if isr2 {
			isr = append(isr, 2)
		}
		if isr3 {
			isr = append(isr, 3)
		}
		remotes := map[int32]*remoteReplica{}
		for id, leo := range map[int32]int64{2: leo2, 3: leo3} {
			r := newRemoteReplica()
			r.leo = leo
			r.lastCaughtUp = now.Add(-time.Duration(agoSec) * time.Second)
			remotes[id] = r
		}
		got := highWatermarkCandidate(1, leaderLEO, []int32{1, 2, 3}, isr, remotes, now, 10*time.Second)
		if got > leaderLEO {
			t.Fatalf("candidate %d beyond the leader's log end %d", got, leaderLEO)
		}
		for _, id := range isr[1:] {
			if got > remotes[id].leo {
				t.Fatalf("candidate %d beyond ISR member %d's log end %d", got, id, remotes[id].leo)
			}
		}
	})
}
