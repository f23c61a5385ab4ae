package e2e_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// BenchmarkGroupRebalance measures how long a 10-member franz-go group
// (cooperative-sticky, 30 partitions) takes to be Stable again, with every
// partition assigned once and the newcomer owning some, after an 11th member
// joins; the newcomer leaves (untimed) before the next round.
//
//	go test -run '^$' -bench GroupRebalance -benchtime 5x ./broker/e2e/
func BenchmarkGroupRebalance(b *testing.B) {
	const (
		topic      = "bench-rebalance"
		group      = "bench-rebalance"
		members    = 10
		partitions = 30
	)
	c := startGroupCluster(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Admin().CreateTopic(ctx, partitions, 3, nil, topic); err != nil {
		b.Fatal(err)
	}
	newMember := func(name string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Bootstrap()...), kgo.ClientID(name), kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic), kgo.SessionTimeout(groupSessionMs*time.Millisecond),
			kgo.HeartbeatInterval(200*time.Millisecond), kgo.FetchMaxWait(100*time.Millisecond))
		if err != nil {
			b.Fatal(err)
		}
		// Polling drives the group's rebalance callbacks.
		go func() { // ends when the client is closed
			for {
				fs := cl.PollFetches(context.Background())
				if fs.IsClientClosed() {
					return
				}
			}
		}()
		return cl
	}
	for i := 0; i < members; i++ {
		cl := newMember(fmt.Sprintf("bench-%d", i))
		defer cl.Close()
	}
	adm := c.Admin()
	stable := func(want int, newcomer string) bool {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		gs, err := adm.DescribeGroups(dctx, group)
		if err != nil {
			return false
		}
		g := gs[group]
		if g.Err != nil || g.State != "Stable" || len(g.Members) != want {
			return false
		}
		seen := map[int32]bool{}
		newcomerOwns := newcomer == ""
		for _, m := range g.Members {
			a, ok := m.Assigned.AsConsumer()
			if !ok {
				return false
			}
			for _, t := range a.Topics {
				for _, p := range t.Partitions {
					if seen[p] {
						return false
					}
					seen[p] = true
					if m.ClientID == newcomer {
						newcomerOwns = true
					}
				}
			}
		}
		return len(seen) == partitions && newcomerOwns
	}
	if !testcluster.Poll(60*time.Second, func() bool { return stable(members, "") }) {
		b.Fatalf("the %d-member group did not stabilise", members)
	}
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		joiner := newMember("joiner")
		if !testcluster.Poll(60*time.Second, func() bool { return stable(members+1, "joiner") }) {
			b.Fatalf("round %d: the group did not stabilise with the joiner", i)
		}
		total += time.Since(start)
		b.StopTimer()
		joiner.Close() // LeaveGroup
		if !testcluster.Poll(60*time.Second, func() bool { return stable(members, "") }) {
			b.Fatalf("round %d: the group did not stabilise after the joiner left", i)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/stabilise")
}

// BenchmarkGroupOffsetCommits measures OffsetCommit throughput through one
// coordinator: 8×GOMAXPROCS concurrent committers of a simple (memberless) group, one
// partition per request, on a __consumer_offsets replicated 3 ways (acks=all).
//
//	go test -run '^$' -bench GroupOffsetCommits -benchtime 2000x ./broker/e2e/
func BenchmarkGroupOffsetCommits(b *testing.B) {
	const (
		topic = "bench-commits"
		group = "bench-commits"
	)
	c := startGroupCluster(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Admin().CreateTopic(ctx, 8, 3, nil, topic); err != nil {
		b.Fatal(err)
	}
	adm := c.Admin()
	// The first commit creates __consumer_offsets and waits for the
	// coordinator.
	if !testcluster.Poll(60*time.Second, func() bool {
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 0, LeaderEpoch: -1})
		r, err := adm.CommitOffsets(ctx, group, os)
		return err == nil && r.Error() == nil
	}) {
		b.Fatal("no coordinator accepted a commit within 60s")
	}
	var next atomic.Int64
	var failed atomic.Int64
	b.SetParallelism(8) // 8 committers per GOMAXPROCS
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			var os kadm.Offsets
			os.Add(kadm.Offset{Topic: topic, Partition: int32(n % 8), At: n, LeaderEpoch: -1})
			r, err := adm.CommitOffsets(context.Background(), group, os)
			if err != nil || r.Error() != nil {
				failed.Add(1)
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d commits failed", f, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
}
