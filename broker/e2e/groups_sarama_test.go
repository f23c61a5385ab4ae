package e2e_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The consumer-group suite with sarama members: this test binary
// re-executed as a member (groups_member_test.go), running
// runSaramaMember. The shared driver is groups_driver_test.go.

func TestGroupsSarama(t *testing.T) {
	runGroupSuite(t, groupSuite{client: goMemberClient("sarama", "sarama", false),
		membershipAssignor: "range", failoverAssignor: "roundrobin"})
}

func runSaramaMember(ctx context.Context, s memberSpec, out *memberOut) error {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_1_0_0 // sarama's default protocol level
	cfg.ClientID = s.Name
	cfg.Consumer.Group.Session.Timeout = time.Duration(s.SessionMs) * time.Millisecond
	cfg.Consumer.Group.Heartbeat.Interval = time.Second
	cfg.Consumer.Group.Rebalance.Timeout = 20 * time.Second
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 500 * time.Millisecond
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	cfg.Net.DialTimeout = 3 * time.Second
	cfg.Net.ReadTimeout = 10 * time.Second
	cfg.Net.WriteTimeout = 5 * time.Second
	switch s.Assignor {
	case "range", "":
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	case "roundrobin":
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRoundRobin()}
	case "sticky":
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategySticky()}
	default:
		return fmt.Errorf("unknown assignor %q", s.Assignor)
	}
	brokers := strings.Split(s.Bootstrap, ",")
	cg, err := sarama.NewConsumerGroup(brokers, s.Group, cfg)
	if err != nil {
		return err
	}
	adm, err := kadm.NewOptClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // logs group errors until the group is closed
		defer wg.Done()
		for e := range cg.Errors() {
			fmt.Fprintln(os.Stderr, "sarama:", e)
		}
	}()
	h := &saramaHandler{s: s, out: out, adm: adm}
	for ctx.Err() == nil {
		if err := cg.Consume(ctx, []string{s.Topic}, h); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "consume:", err)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	err = cg.Close()
	wg.Wait()
	h.commitMu.Lock()
	h.adm.Close()
	h.commitMu.Unlock()
	return err
}

// saramaHandler consumes claims and commits after each batch. sarama's
// Commit reports failures only asynchronously (and some not at all), so
// after committing the member asks the coordinator (OffsetFetch through
// kadm) what is committed and prints only that.
type saramaHandler struct {
	s   memberSpec
	out *memberOut
	// commitMu serialises Commit and the check that follows, and guards
	// adm.
	commitMu sync.Mutex
	adm      *kadm.Client
}

func (h *saramaHandler) Setup(sess sarama.ConsumerGroupSession) error {
	h.out.assign(append([]int32(nil), sess.Claims()[h.s.Topic]...))
	return nil
}

func (h *saramaHandler) Cleanup(sess sarama.ConsumerGroupSession) error {
	h.commitMu.Lock()
	sess.Commit()
	h.commitMu.Unlock()
	h.out.assign(nil)
	return nil
}

func (h *saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		var batch []*sarama.ConsumerMessage
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			batch = append(batch, m)
		case <-sess.Context().Done():
			return nil
		}
	more:
		for len(batch) < 500 {
			select {
			case m, ok := <-claim.Messages():
				if !ok {
					break more
				}
				batch = append(batch, m)
			default:
				break more
			}
		}
		for _, m := range batch {
			h.out.printf("REC %d %d %s", m.Partition, m.Offset, m.Value)
		}
		h.out.flush()
		last := batch[len(batch)-1]
		sess.MarkMessage(last, "")
		h.commit(sess, claim.Partition(), last.Offset+1)
	}
}

func (h *saramaHandler) commit(sess sarama.ConsumerGroupSession, p int32, want int64) {
	h.commitMu.Lock()
	defer h.commitMu.Unlock()
	sess.Commit()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offs, err := h.adm.FetchOffsets(ctx, h.s.Group)
	if err != nil {
		// kgo keeps a coordinator it cannot dial cached; start afresh.
		fmt.Fprintln(os.Stderr, "checking commit:", err)
		h.adm.Close()
		if h.adm, err = kadm.NewOptClient(kgo.SeedBrokers(strings.Split(h.s.Bootstrap, ",")...)); err != nil {
			fmt.Fprintln(os.Stderr, "new admin client:", err)
			os.Exit(1)
		}
		return
	}
	if o, ok := offs.Lookup(h.s.Topic, p); ok && o.Err == nil && o.At >= want {
		h.out.printf("COMMIT %d %d", p, want)
		h.out.flush()
	} else {
		fmt.Fprintf(os.Stderr, "commit of %d/%d not visible at the coordinator: %+v\n", p, want, o)
	}
}
