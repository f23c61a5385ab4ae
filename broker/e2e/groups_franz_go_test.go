package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer-group suite with franz-go members: this test binary
// re-executed as a member (groups_member_test.go), running runKgoMember.
// The shared driver is groups_driver_test.go.

// TestGroupsFranzGo: cooperative-sticky; the membership scenario's members
// are static (group.instance.id), so the killed one keeps its partitions
// until its session times out and then loses them.
func TestGroupsFranzGo(t *testing.T) {
	runGroupSuite(t, groupSuite{client: goMemberClient("franz-go", "franz-go", false),
		membershipAssignor: "cooperative-sticky", failoverAssignor: "cooperative-sticky", static: true})
}

func runKgoMember(ctx context.Context, s memberSpec, out *memberOut) error {
	var bal kgo.GroupBalancer
	switch s.Assignor {
	case "cooperative-sticky", "":
		bal = kgo.CooperativeStickyBalancer()
	case "sticky":
		bal = kgo.StickyBalancer()
	case "range":
		bal = kgo.RangeBalancer()
	case "roundrobin":
		bal = kgo.RoundRobinBalancer()
	default:
		return fmt.Errorf("unknown assignor %q", s.Assignor)
	}
	var mu sync.Mutex
	owned := map[int32]bool{}
	report := func(add bool, m map[string][]int32) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range m[s.Topic] {
			if add {
				owned[p] = true
			} else {
				delete(owned, p)
			}
		}
		var ps []int32
		for p := range owned {
			ps = append(ps, p)
		}
		out.assign(ps)
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(s.Bootstrap, ",")...),
		kgo.ClientID(s.Name),
		kgo.ConsumerGroup(s.Group),
		kgo.ConsumeTopics(s.Topic),
		kgo.Balancers(bal),
		kgo.SessionTimeout(time.Duration(s.SessionMs) * time.Millisecond),
		kgo.HeartbeatInterval(time.Second),
		kgo.RebalanceTimeout(20 * time.Second),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { report(true, m) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { report(false, m) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			fmt.Fprintf(os.Stderr, "%s partitions lost: %v\n", time.Now().Format("15:04:05.000"), m)
			report(false, m)
		}),
	}
	if s.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(s.InstanceID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollRecords(ctx, 1000)
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", t, p, err)
			}
		})
		recs := fs.Records()
		if len(recs) > 0 {
			next := map[int32]kgo.EpochOffset{}
			for _, r := range recs {
				out.printf("REC %d %d %s", r.Partition, r.Offset, r.Value)
				next[r.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
			}
			out.flush()
			// A commit of what was just handed out, while rebalances are
			// blocked, so no partition can move between read and commit.
			cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			cl.CommitOffsetsSync(cctx, map[string]map[int32]kgo.EpochOffset{s.Topic: next},
				func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
					if err != nil {
						fmt.Fprintln(os.Stderr, "commit:", err)
						return
					}
					for _, t := range resp.Topics {
						for _, p := range t.Partitions {
							if p.ErrorCode != 0 {
								fmt.Fprintf(os.Stderr, "commit %s/%d: error %d\n", t.Topic, p.Partition, p.ErrorCode)
								continue
							}
							out.printf("COMMIT %d %d", p.Partition, next[p.Partition].Offset)
						}
					}
				})
			cancel()
			out.flush()
		}
		cl.AllowRebalance()
	}
	cl.AllowRebalance()
	return nil
}
