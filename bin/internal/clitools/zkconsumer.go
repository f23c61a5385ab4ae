package clitools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// ZKConsumerConfig configures the classic ZooKeeper-coordinated consumer
// (Kafka's ZookeeperConsumerConnector, removed in Kafka 2.0). Property
// names in comments are the old consumer's.
type ZKConsumerConfig struct {
	Group string // group.id
	// ConsumerID overrides the generated "<group>_<host>-<ms>-<8 hex>"
	// (consumer.id).
	ConsumerID string
	Topics     []string // static subscription, one stream per topic
	// AutoCommit enables periodic offset commits to ZooKeeper
	// (auto.commit.enable, default true); offsets are also committed
	// before every rebalance and at Close.
	AutoCommit bool
	// AutoCommitInterval is auto.commit.interval.ms (default 60000).
	AutoCommitInterval time.Duration
	// AutoOffsetReset is "largest" (default) or "smallest": where to start
	// a partition without a committed offset (auto.offset.reset).
	AutoOffsetReset string
	// RebalanceMaxRetries (rebalance.max.retries, default 4) and
	// RebalanceBackoff (rebalance.backoff.ms, default 2000) bound the
	// attempts of one rebalance when owner nodes are still held.
	RebalanceMaxRetries int
	RebalanceBackoff    time.Duration
	Logger              *slog.Logger
}

// ZKConsumerDefaults returns the old consumer's defaults for group and
// topics.
func ZKConsumerDefaults(group string, topics ...string) ZKConsumerConfig {
	return ZKConsumerConfig{
		Group: group, Topics: topics, AutoCommit: true, AutoCommitInterval: 60 * time.Second,
		AutoOffsetReset: "largest", RebalanceMaxRetries: 4, RebalanceBackoff: 2 * time.Second,
	}
}

// ApplyProperties reads the old consumer's property names from props
// (--consumer-property / --consumer.config) into c.
func (c *ZKConsumerConfig) ApplyProperties(props map[string]string) error {
	var err error
	if v, ok := props["consumer.id"]; ok {
		c.ConsumerID = v
	}
	if c.AutoCommit, err = Bool(props, "auto.commit.enable", c.AutoCommit); err != nil {
		return err
	}
	if c.AutoCommitInterval, err = Millis(props, "auto.commit.interval.ms", c.AutoCommitInterval); err != nil {
		return err
	}
	if c.RebalanceBackoff, err = Millis(props, "rebalance.backoff.ms", c.RebalanceBackoff); err != nil {
		return err
	}
	if v, ok := props["rebalance.max.retries"]; ok {
		var n int
		if _, err := fmt.Sscanf(v, "%d", &n); err != nil || n < 1 {
			return fmt.Errorf("Invalid value %s for configuration rebalance.max.retries", v)
		}
		c.RebalanceMaxRetries = n
	}
	if v, ok := props["auto.offset.reset"]; ok {
		switch v {
		case "smallest", "largest":
			c.AutoOffsetReset = v
		default:
			return fmt.Errorf("Wrong value %s of auto.offset.reset in ConsumerConfig; Valid values are smallest and largest", v)
		}
	}
	return nil
}

// NewConsumerID builds the old consumer's id:
// "<group>_<hostname>-<currentTimeMillis>-<first 8 hex digits of a UUID>".
func NewConsumerID(group string, now time.Time) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s_%s-%d-%s", group, host, now.UnixMilli(), hex.EncodeToString(b[:]))
}

// Message is one record handed to the application.
type Message struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte // nil for a null key
	Value     []byte // nil for a null value
	Timestamp time.Time
	// LogAppendTime reports the timestamp type (false: CreateTime).
	LogAppendTime bool
	Headers       []kgo.RecordHeader
}

// MessageFromRecord converts a franz-go record.
func MessageFromRecord(r *kgo.Record) Message {
	return Message{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value,
		Timestamp: r.Timestamp, LogAppendTime: r.Attrs.TimestampType() == 1, Headers: r.Headers}
}

// ErrConsumerTimeout is returned by Next when no message arrived in time
// (Kafka's ConsumerTimeoutException).
var ErrConsumerTimeout = errors.New("clitools: consumer timed out")

// ErrConsumerClosed is returned by Next after Close.
var ErrConsumerClosed = errors.New("clitools: consumer closed")

type topicPartition struct {
	topic     string
	partition int32
}

// ZKConsumer is one member of a ZooKeeper-coordinated consumer group. It
// registers /consumers/<g>/ids/<id>, rebalances with the range assignment
// whenever the group's members, the brokers or a subscribed topic change,
// claims partitions through ephemeral owner nodes, fetches from partition
// leaders and commits consumed offsets to /consumers/<g>/offsets.
//
// Goroutines: the rebalance loop (started by StartZKConsumer, stopped and
// waited for by Close) owns the assignment, the owner nodes and the
// fetcher; the fetcher goroutine (started by the loop after each
// successful rebalance, cancelled and waited for by the loop before the
// next one or at Close) hands messages to Next. ZooKeeper watch callbacks
// run on the zkclient's goroutines and only poke the loop.
type ZKConsumer struct {
	zk     *zkclient.Client
	cfg    ZKConsumerConfig
	id     string
	logger *slog.Logger

	msgs    chan Message
	trigger chan struct{}
	stop    chan struct{}
	done    chan struct{}
	cancels []func()

	closeOnce sync.Once
	closeErr  error

	// mu guards the following: consumed is the next offset to read per
	// owned partition (set by the fetcher after a message was handed
	// over, read by the loop when committing); owned is the current
	// claim (written by the loop, read by Owned).
	mu       sync.Mutex
	consumed map[topicPartition]int64
	owned    []topicPartition

	// Loop-owned state (no lock).
	committed map[topicPartition]int64
	fetchStop context.CancelFunc
	fetchDone chan struct{}
	fetchCl   *kgo.Client
}

// StartZKConsumer registers the consumer in the group and starts its
// rebalance loop. The caller keeps ownership of zkc and closes it after
// Close.
func StartZKConsumer(zkc *zkclient.Client, cfg ZKConsumerConfig) (*ZKConsumer, error) {
	if cfg.Group == "" || len(cfg.Topics) == 0 {
		return nil, errors.New("clitools: a group and at least one topic are required")
	}
	d := ZKConsumerDefaults(cfg.Group)
	if cfg.AutoCommitInterval <= 0 {
		cfg.AutoCommitInterval = d.AutoCommitInterval
	}
	if cfg.AutoOffsetReset == "" {
		cfg.AutoOffsetReset = d.AutoOffsetReset
	}
	if cfg.RebalanceMaxRetries <= 0 {
		cfg.RebalanceMaxRetries = d.RebalanceMaxRetries
	}
	if cfg.RebalanceBackoff <= 0 {
		cfg.RebalanceBackoff = d.RebalanceBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	id := cfg.ConsumerID
	if id == "" {
		id = NewConsumerID(cfg.Group, time.Now())
	}
	c := &ZKConsumer{
		zk: zkc, cfg: cfg, id: id, logger: cfg.Logger.With("group", cfg.Group, "consumer", id),
		msgs: make(chan Message), trigger: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		consumed: map[topicPartition]int64{}, committed: map[topicPartition]int64{},
	}
	for _, p := range []string{zkpaths.ConsumerIDsPath(cfg.Group), zkpaths.ConsumerGroupPath(cfg.Group) + "/owners",
		zkpaths.ConsumerGroupPath(cfg.Group) + "/offsets"} {
		if err := zkc.EnsurePath(p); err != nil {
			return nil, err
		}
	}
	if err := c.register(); err != nil {
		return nil, err
	}
	poke := func() {
		select {
		case c.trigger <- struct{}{}:
		default:
		}
	}
	c.cancels = append(c.cancels, zkc.WatchChildren(zkpaths.ConsumerIDsPath(cfg.Group), poke),
		zkc.WatchChildren(zkpaths.BrokerIDsPath, poke))
	for _, t := range cfg.Topics {
		c.cancels = append(c.cancels, zkc.WatchData(zkpaths.TopicPath(t), poke))
	}
	// After a session expiry the registration is gone; the loop re-creates
	// it before rebalancing.
	c.cancels = append(c.cancels, zkc.OnNewSession(poke))
	poke()
	go c.loop()
	return c, nil
}

// ConsumerID is the id registered under /consumers/<g>/ids.
func (c *ZKConsumer) ConsumerID() string { return c.id }

// Owned lists the partitions currently claimed, sorted.
func (c *ZKConsumer) Owned() map[string][]int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]int32{}
	for _, tp := range c.owned {
		out[tp.topic] = append(out[tp.topic], tp.partition)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

func (c *ZKConsumer) register() error {
	reg := zkpaths.ConsumerRegistration{Subscription: map[string]int{}, Pattern: "static", Timestamp: time.Now().UnixMilli()}
	for _, t := range c.cfg.Topics {
		reg.Subscription[t] = 1
	}
	_, err := c.zk.CreateRecursive(zkpaths.ConsumerIDPath(c.cfg.Group, c.id), reg.Encode(), zkclient.Ephemeral)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil // still ours: the session survived
	}
	return err
}

// Next returns the next message, waiting at most timeout (≤ 0: forever)
// or until ctx ends.
func (c *ZKConsumer) Next(ctx context.Context, timeout time.Duration) (Message, error) {
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case m := <-c.msgs:
		return m, nil
	case <-tc:
		return Message{}, ErrConsumerTimeout
	case <-ctx.Done():
		return Message{}, ctx.Err()
	case <-c.done:
		return Message{}, ErrConsumerClosed
	}
}

// Close stops fetching, commits the consumed offsets (when auto commit is
// on), releases the owner nodes and removes the registration.
func (c *ZKConsumer) Close() error {
	c.closeOnce.Do(func() {
		for _, cancel := range c.cancels {
			cancel()
		}
		close(c.stop)
		<-c.done
	})
	return c.closeErr
}

// CommitOffsets writes the consumed offset of every owned partition that
// moved since the last commit. It is only called from the loop.
func (c *ZKConsumer) commitOffsets() error {
	c.mu.Lock()
	pending := map[topicPartition]int64{}
	for _, tp := range c.owned {
		if off, ok := c.consumed[tp]; ok && off != c.committed[tp] {
			pending[tp] = off
		}
	}
	c.mu.Unlock()
	var errs []error
	for tp, off := range pending {
		if err := c.zk.SetConsumerOffset(c.cfg.Group, tp.topic, tp.partition, off); err != nil {
			errs = append(errs, err)
			continue
		}
		c.committed[tp] = off
	}
	return errors.Join(errs...)
}

func (c *ZKConsumer) loop() {
	defer close(c.done)
	ticker := time.NewTicker(c.cfg.AutoCommitInterval)
	defer ticker.Stop()
	var retry <-chan time.Time
	for {
		select {
		case <-c.stop:
			c.closeErr = c.shutdown()
			return
		case <-ticker.C:
			if c.cfg.AutoCommit {
				if err := c.commitOffsets(); err != nil {
					c.logger.Warn("committing offsets to ZooKeeper failed", "err", err)
				}
			}
			continue
		case <-c.trigger:
		case <-retry:
		}
		retry = nil
		if !c.rebalance() {
			// Kafka gives up after rebalance.max.retries and waits for the
			// next change; we also try again after a backoff so that a
			// consumer never stays idle for good.
			retry = time.After(c.cfg.RebalanceBackoff)
		}
	}
}

func (c *ZKConsumer) shutdown() error {
	c.stopFetcher()
	var errs []error
	if c.cfg.AutoCommit {
		errs = append(errs, c.commitOffsets())
	}
	errs = append(errs, c.release())
	if err := c.zk.Delete(zkpaths.ConsumerIDPath(c.cfg.Group, c.id), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// rebalance runs Kafka's syncedRebalance: up to RebalanceMaxRetries
// attempts, each releasing everything, recomputing the assignment and
// claiming it; an attempt fails when another consumer still owns one of
// our partitions (it has not rebalanced yet).
func (c *ZKConsumer) rebalance() bool {
	for attempt := 0; attempt < c.cfg.RebalanceMaxRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-c.stop:
				return true
			case <-time.After(c.cfg.RebalanceBackoff):
			}
		}
		ok, err := c.rebalanceOnce()
		if err != nil {
			c.logger.Warn("rebalance attempt failed", "attempt", attempt+1, "err", err)
		}
		if ok {
			return true
		}
	}
	c.logger.Error("rebalance failed after retries", "retries", c.cfg.RebalanceMaxRetries)
	return false
}

func (c *ZKConsumer) rebalanceOnce() (bool, error) {
	c.stopFetcher()
	if c.cfg.AutoCommit {
		if err := c.commitOffsets(); err != nil {
			c.logger.Warn("committing offsets before rebalance failed", "err", err)
		}
	}
	if err := c.release(); err != nil {
		return false, err
	}
	if err := c.register(); err != nil {
		return false, err
	}
	mine, err := c.assignment()
	if err != nil {
		return false, err
	}
	claimed, err := c.claim(mine)
	if err != nil || !claimed {
		return false, err
	}
	if len(mine) == 0 {
		return true, nil
	}
	if err := c.startFetcher(mine); err != nil {
		_ = c.release()
		return false, err
	}
	return true, nil
}

// assignment reads the group and the topics from ZooKeeper and returns the
// partitions the range assignment gives this consumer's thread.
func (c *ZKConsumer) assignment() ([]topicPartition, error) {
	ids, err := c.zk.Children(zkpaths.ConsumerIDsPath(c.cfg.Group))
	if err != nil {
		return nil, err
	}
	threadsByTopic := map[string][]string{}
	for _, id := range ids {
		data, _, err := c.zk.Get(zkpaths.ConsumerIDPath(c.cfg.Group, id))
		if errors.Is(err, zk.ErrNoNode) {
			continue // left meanwhile; its departure triggers another rebalance
		}
		if err != nil {
			return nil, err
		}
		reg, err := zkpaths.DecodeConsumerRegistration(data)
		if err != nil {
			c.logger.Warn("ignoring an unreadable consumer registration", "id", id, "err", err)
			continue
		}
		for t, n := range reg.Subscription {
			threadsByTopic[t] = append(threadsByTopic[t], ThreadIDs(id, n)...)
		}
	}
	me := c.id + "-0"
	var mine []topicPartition
	for _, t := range c.cfg.Topics {
		parts, ok, err := PartitionIDs(c.zk, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, p := range RangeAssign(threadsByTopic[t], parts)[me] {
			mine = append(mine, topicPartition{t, p})
		}
	}
	return mine, nil
}

// claim creates the ephemeral owner nodes; on NODEEXISTS it deletes what it
// created and reports false so that the attempt is retried.
func (c *ZKConsumer) claim(tps []topicPartition) (bool, error) {
	owner := []byte(c.id + "-0")
	var got []topicPartition
	for _, tp := range tps {
		_, err := c.zk.CreateRecursive(zkpaths.ConsumerOwnerPath(c.cfg.Group, tp.topic, tp.partition), owner, zkclient.Ephemeral)
		if err == nil {
			got = append(got, tp)
			continue
		}
		if errors.Is(err, zk.ErrNodeExists) {
			if data, _, gerr := c.zk.Get(zkpaths.ConsumerOwnerPath(c.cfg.Group, tp.topic, tp.partition)); gerr == nil && string(data) == string(owner) {
				got = append(got, tp) // left over from our own earlier claim
				continue
			}
			c.logger.Info("partition still owned by another consumer; will retry", "topic", tp.topic, "partition", tp.partition)
		}
		c.mu.Lock()
		c.owned = got
		c.mu.Unlock()
		if rerr := c.release(); rerr != nil {
			c.logger.Warn("releasing partial claim failed", "err", rerr)
		}
		if errors.Is(err, zk.ErrNodeExists) {
			return false, nil
		}
		return false, err
	}
	c.mu.Lock()
	c.owned = got
	c.mu.Unlock()
	return true, nil
}

// release deletes our owner nodes (Kafka's releasePartitionOwnership).
func (c *ZKConsumer) release() error {
	c.mu.Lock()
	owned := c.owned
	c.owned = nil
	c.mu.Unlock()
	var errs []error
	for _, tp := range owned {
		err := c.zk.Delete(zkpaths.ConsumerOwnerPath(c.cfg.Group, tp.topic, tp.partition), -1)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *ZKConsumer) startFetcher(tps []topicPartition) error {
	brokers, err := c.zk.GetAllBrokers()
	if err != nil {
		return err
	}
	seeds := BrokerBootstrap(brokers)
	if len(seeds) == 0 {
		return errors.New("clitools: no brokers registered in ZooKeeper")
	}
	reset := kgo.NewOffset().AtEnd()
	if c.cfg.AutoOffsetReset == "smallest" {
		reset = kgo.NewOffset().AtStart()
	}
	start := map[string]map[int32]kgo.Offset{}
	for _, tp := range tps {
		off, ok, err := c.zk.GetConsumerOffset(c.cfg.Group, tp.topic, tp.partition)
		if err != nil {
			return err
		}
		if start[tp.topic] == nil {
			start[tp.topic] = map[int32]kgo.Offset{}
		}
		if ok {
			start[tp.topic][tp.partition] = kgo.NewOffset().At(off)
			c.mu.Lock()
			c.consumed[tp] = off
			c.mu.Unlock()
			c.committed[tp] = off
		} else {
			start[tp.topic][tp.partition] = reset
			c.mu.Lock()
			delete(c.consumed, tp)
			c.mu.Unlock()
			delete(c.committed, tp)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID(c.cfg.Group),
		kgo.ConsumePartitions(start), kgo.ConsumeResetOffset(reset), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.fetchCl, c.fetchStop, c.fetchDone = cl, cancel, make(chan struct{})
	go c.fetch(ctx, cl, c.fetchDone)
	return nil
}

func (c *ZKConsumer) stopFetcher() {
	if c.fetchStop == nil {
		return
	}
	c.fetchStop()
	<-c.fetchDone
	c.fetchCl.Close()
	c.fetchStop, c.fetchDone, c.fetchCl = nil, nil, nil
}

// fetch hands records to Next one at a time; the consumed offset moves only
// after the hand-over, so that a commit made after the fetcher stopped
// covers exactly the messages the application received.
func (c *ZKConsumer) fetch(ctx context.Context, cl *kgo.Client, done chan struct{}) {
	defer close(done)
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				c.logger.Warn("fetch error", "topic", t, "partition", p, "err", err)
			}
		})
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			select {
			case c.msgs <- MessageFromRecord(r):
				c.mu.Lock()
				c.consumed[topicPartition{r.Topic, r.Partition}] = r.Offset + 1
				c.mu.Unlock()
			case <-ctx.Done():
				return
			}
		}
	}
}

// DescribeOwners is a convenience for tools and tests: the owner of every
// partition of topic in group, "" where unowned.
func DescribeOwners(zkc *zkclient.Client, group, topic string) (map[int32]string, error) {
	a, _, err := zkc.GetTopicAssignment(topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]string{}
	parts := make([]int32, 0, len(a.Partitions))
	for p := range a.Partitions {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		data, _, err := zkc.Get(zkpaths.ConsumerOwnerPath(group, topic, p))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			out[p] = ""
		case err != nil:
			return nil, err
		default:
			out[p] = strings.TrimSpace(string(data))
		}
	}
	return out, nil
}

// PartitionIDs lists a topic's partition ids in ascending order, read from
// its /brokers/topics/<topic> assignment; ok is false when the topic does
// not exist.
func PartitionIDs(zc *zkclient.Client, topic string) (ids []int32, ok bool, err error) {
	a, _, err := zc.GetTopicAssignment(topic)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	ids = make([]int32, 0, len(a.Partitions))
	for p := range a.Partitions {
		ids = append(ids, p)
	}
	slices.Sort(ids)
	return ids, true, nil
}
