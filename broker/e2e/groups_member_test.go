package e2e_test

// Go consumer-group members (franz-go, sarama, kafka-go) run as child
// processes so the suite can kill them with SIGKILL: the test binary
// re-executes itself with KLASSIK_GROUP_MEMBER set, and
// TestGroupMemberProcess becomes the member, speaking the line protocol
// described in groups_test.go. Without the variable it does nothing.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const memberEnv = "KLASSIK_GROUP_MEMBER"

// goMember is the child's configuration: the spec plus which library.
type goMember struct {
	Lib string `json:"lib"`
	memberSpec
}

// goMemberClient is a groupClient whose members are this test binary.
func goMemberClient(name, lib string, describe bool) groupClient {
	return groupClient{name: name, describeAssignments: describe, command: func(t *testing.T, s memberSpec) *exec.Cmd {
		exe, err := os.Executable()
		if err != nil {
			t.Fatalf("test binary path: %v", err)
		}
		b, _ := json.Marshal(goMember{Lib: lib, memberSpec: s})
		cmd := exec.Command(exe, "-test.run=^TestGroupMemberProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), memberEnv+"="+string(b))
		return cmd
	}}
}

// TestGroupMemberProcess is the entry point of a Go member child process.
func TestGroupMemberProcess(t *testing.T) {
	cfg := os.Getenv(memberEnv)
	if cfg == "" {
		return // not a child: nothing to do
	}
	var m goMember
	if err := json.Unmarshal([]byte(cfg), &m); err != nil {
		fmt.Fprintln(os.Stderr, "bad member config:", err)
		os.Exit(3)
	}
	ctx, stop := context.WithCancel(context.Background())
	go func() { // stdin EOF asks for a clean stop; the process ends with the member
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	out := &memberOut{w: bufio.NewWriterSize(os.Stdout, 1<<16)}
	var err error
	switch m.Lib {
	case "franz-go":
		err = runKgoMember(ctx, m.memberSpec, out)
	case "sarama":
		err = runSaramaMember(ctx, m.memberSpec, out)
	case "kafka-go":
		err = runKafkaGoMember(ctx, m.memberSpec, out)
	default:
		err = fmt.Errorf("unknown member library %q", m.Lib)
	}
	out.flush()
	if err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		os.Exit(1)
	}
	// Exit here so the testing package prints nothing on stdout.
	os.Exit(0)
}

// memberOut writes the line protocol; lines are flushed before any commit
// that covers them.
type memberOut struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (o *memberOut) printf(format string, args ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.w, format+"\n", args...)
	o.mu.Unlock()
}

func (o *memberOut) flush() {
	o.mu.Lock()
	_ = o.w.Flush()
	o.mu.Unlock()
}

func (o *memberOut) assign(ps []int32) {
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	if len(ps) == 0 {
		o.printf("ASSIGN -")
	} else {
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(int(p))
		}
		o.printf("ASSIGN %s", strings.Join(s, ","))
	}
	o.flush()
}

// ---- franz-go ----

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

// ---- sarama ----

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

// ---- kafka-go ----

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
