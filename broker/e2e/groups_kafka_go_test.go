package e2e_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// The consumer-group suite with kafka-go members: this test binary
// re-executed as a member (groups_member_test.go), running
// runKafkaGoMember. The shared driver is groups_driver_test.go.

// TestGroupsKafkaGo: kafka-go's Reader does not expose its assignment, so
// the split is read from DescribeGroups (members keyed by client id); it
// commits late across generations (groupClient.lateCommits).
func TestGroupsKafkaGo(t *testing.T) {
	client := goMemberClient("kafka-go", "kafka-go", true)
	client.lateCommits = true
	runGroupSuite(t, groupSuite{client: client,
		membershipAssignor: "range", failoverAssignor: "roundrobin"})
}

func runKafkaGoMember(ctx context.Context, s memberSpec, out *memberOut) error {
	var bal kafkago.GroupBalancer
	switch s.Assignor {
	case "range", "":
		bal = kafkago.RangeGroupBalancer{}
	case "roundrobin":
		bal = kafkago.RoundRobinGroupBalancer{}
	default:
		return fmt.Errorf("unknown assignor %q", s.Assignor)
	}
	r := kafkago.NewReader(kafkago.ReaderConfig{
		Brokers:           strings.Split(s.Bootstrap, ","),
		GroupID:           s.Group,
		Topic:             s.Topic,
		Dialer:            &kafkago.Dialer{ClientID: s.Name, Timeout: 10 * time.Second},
		GroupBalancers:    []kafkago.GroupBalancer{bal},
		SessionTimeout:    time.Duration(s.SessionMs) * time.Millisecond,
		HeartbeatInterval: time.Second,
		RebalanceTimeout:  20 * time.Second,
		JoinGroupBackoff:  500 * time.Millisecond,
		CommitInterval:    0, // CommitMessages is synchronous
		StartOffset:       kafkago.FirstOffset,
		MaxWait:           200 * time.Millisecond,
		ErrorLogger:       kafkago.LoggerFunc(func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }),
	})
	defer r.Close()
	for ctx.Err() == nil {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintln(os.Stderr, "fetch:", err)
			continue
		}
		batch := []kafkago.Message{m}
		// Gather what is already buffered, then commit once.
		for len(batch) < 500 {
			bctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			m, err := r.FetchMessage(bctx)
			cancel()
			if err != nil {
				break
			}
			batch = append(batch, m)
		}
		next := map[int]int64{}
		for _, m := range batch {
			out.printf("REC %d %d %s", m.Partition, m.Offset, m.Value)
			next[m.Partition] = m.Offset + 1
		}
		out.flush()
		cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = r.CommitMessages(cctx, batch...)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "commit:", err)
			continue
		}
		for p, o := range next {
			out.printf("COMMIT %d %d", p, o)
		}
		out.flush()
	}
	return nil
}
