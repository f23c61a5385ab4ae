package e2e_test

// The group coordinator as a whole cluster shows it, rather than the
// coordinator alone: the offsets topic as created on first use (partition
// count, replication, compaction; refused with COORDINATOR_NOT_AVAILABLE on
// a cluster smaller than its replication factor) with records that
// bin/kafka-dump-log.sh --offsets-decoder reads back from a broker's own
// segment file; FindCoordinator in every version (v4 with batched keys)
// naming the leader of partition abs(javaHashCode(group)) % 50; and the
// admin group APIs (ListGroups with a states filter, OffsetDelete,
// DeleteGroups) through a real client.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// groupConsume joins group g on topic, reads want records, commits them
// and returns the client (still a member) and the member id.
func groupConsume(t *testing.T, ctx context.Context, c *testcluster.Cluster, g, topic string, want int) *kgo.Client {
	t.Helper()
	cons := c.Client(kgo.ConsumerGroup(g), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.Balancers(kgo.RangeBalancer()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < want {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group %s consumed %d of %d records: %v", g, got, want, fs.Errors())
		}
		got += len(fs.Records())
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("group %s commit: %v", g, err)
	}
	return cons
}

func spreadProduce(t *testing.T, ctx context.Context, c *testcluster.Cluster, topic string, partitions int32, per int) {
	t.Helper()
	prod := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite())
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < per; i++ {
			r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%s-%d-%d", topic, p, i))}
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %s-%d: %v", topic, p, err)
			}
		}
	}
}

// TestGroupsOffsetsTopicAndDumpLog: the first group creates
// __consumer_offsets with 50 partitions, replication factor 3 and
// cleanup.policy=compact; the segment of the group's partition, read from
// the leader's log dir, decodes with bin/kafka-dump-log.sh
// --offsets-decoder into Kafka's offset_commit and group_metadata lines.
func TestGroupsOffsetsTopicAndDumpLog(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Overrides: map[string]string{"group.initial.rebalance.delay.ms": "0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Build the tool while the cluster works.
	repo := repoRoot(t)
	build := t.TempDir()
	type buildResult struct {
		out []byte
		err error
	}
	built := make(chan buildResult, 1)
	go func() { // one build; its result is received below or by the deferred drain
		cmd := exec.CommandContext(ctx, filepath.Join(repo, "bin", "kafka-run-class.sh"), "kafka-dump-log")
		cmd.Env = append(os.Environ(), "KLASSIK_BUILD_DIR="+build, "KLASSIK_BUILD_ONLY=1")
		out, err := cmd.CombinedOutput()
		built <- buildResult{out, err}
	}()
	received := false
	defer func() {
		if !received {
			cancel() // stops the build
			<-built
		}
	}()

	adm := c.Admin()
	if res, err := adm.CreateTopic(ctx, 2, 3, nil, "audit"); err != nil || res.Err != nil {
		t.Fatalf("create topic: %v / %v", err, res.Err)
	}
	spreadProduce(t, ctx, c, "audit", 2, 5)
	const g = "audit-dump"
	cons := groupConsume(t, ctx, c, g, "audit", 10)
	defer cons.Close()

	td, err := adm.ListTopics(ctx, offsetsTopic)
	if err != nil {
		t.Fatal(err)
	}
	d := td[offsetsTopic]
	if d.Err != nil || len(d.Partitions) != 50 || !d.IsInternal {
		t.Fatalf("%s: err %v, %d partitions (want 50), internal %v", offsetsTopic, d.Err, len(d.Partitions), d.IsInternal)
	}
	for _, p := range d.Partitions {
		if len(p.Replicas) != 3 {
			t.Fatalf("%s-%d replicas %v, want 3 (offsets.topic.replication.factor)", offsetsTopic, p.Partition, p.Replicas)
		}
	}
	if policy, _ := testcluster.TopicConfig(t, adm, offsetsTopic, "cleanup.policy"); policy != "compact" {
		t.Fatalf("%s cleanup.policy = %q, want compact", offsetsTopic, policy)
	}

	dg, err := adm.DescribeGroups(ctx, g)
	if err != nil || len(dg[g].Members) != 1 {
		t.Fatalf("describe %s: %v %+v", g, err, dg)
	}
	member := dg[g].Members[0].MemberID
	part := group.PartitionFor(g, 50)
	leader := d.Partitions[part].Leader
	seg := filepath.Join(c.Broker(c.Index(leader)).LogManager().Dirs()[0],
		fmt.Sprintf("%s-%d", offsetsTopic, part), "00000000000000000000.log")
	br := <-built
	received = true
	if br.err != nil {
		t.Fatalf("building kafka-dump-log: %v\n%s", br.err, br.out)
	}
	run := func() string {
		cmd := exec.CommandContext(ctx, filepath.Join(repo, "bin", "kafka-dump-log.sh"), "--offsets-decoder", "--files", seg)
		cmd.Env = append(os.Environ(), "KLASSIK_BUILD_DIR="+build)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kafka-dump-log.sh --offsets-decoder --files %s: %v\n%s", seg, err, out)
		}
		return string(out)
	}
	out := run()
	// kgo stores its member id as the commit metadata string.
	for p := 0; p < 2; p++ {
		want := fmt.Sprintf("key: offset_commit::group=%s,partition=audit-%d payload: offset=5,metadata=%s\n", g, p, member)
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	gm := regexp.MustCompile(`key: group_metadata::group=` + g + ` payload: \{"protocolType":"consumer","protocol":"range","generationId":(\d+),"assignment":"\{` +
		regexp.QuoteMeta(member) + `=\[audit-0, audit-1\]\}"\}` + "\n")
	if !gm.MatchString(out) {
		t.Errorf("no group_metadata line for %s with member %s owning audit-0, audit-1 in\n%s", g, member, out)
	}
	// The dump also starts with the segment header Kafka prints.
	if !strings.HasPrefix(out, "Dumping "+seg+"\n") {
		t.Errorf("dump does not start with the Dumping line:\n%s", out)
	}

	// Leaving the group writes an Empty group_metadata record (generation
	// bumped, no members) to the same segment.
	cons.Close()
	c.WaitFor(30*time.Second, "group empty", func() bool {
		dg, err := adm.DescribeGroups(ctx, g)
		return err == nil && dg[g].State == "Empty"
	})
	out = run()
	empty := regexp.MustCompile(`key: group_metadata::group=` + g + ` payload: \{"protocolType":"consumer","protocol":(null|""),"generationId":\d+,"assignment":"\{\}"\}` + "\n")
	if !empty.MatchString(out) {
		t.Errorf("no Empty group_metadata line after the member left:\n%s", out)
	}
}

// TestInternalTopicsRefusedBelowReplicationFactor: as in Kafka, with one
// broker and the default replication factor (3) of __consumer_offsets and
// __transaction_state, FindCoordinator answers COORDINATOR_NOT_AVAILABLE
// (retriable) for groups and transactions and creates neither topic; with
// the factors a single broker can meet (1, as config/server.properties sets
// them) the first consumer group gets its coordinator and the offsets topic
// has one replica per partition.
func TestInternalTopicsRefusedBelowReplicationFactor(t *testing.T) {
	t.Run("default factors", func(t *testing.T) {
		c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
			"offsets.topic.replication.factor": "3", "transaction.state.log.replication.factor": "3"}})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for _, typ := range []int8{0, 1} {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.Version, req.CoordinatorType, req.CoordinatorKey = 3, typ, "k"
			resp, err := req.RequestWith(ctx, c.Client())
			if err != nil {
				t.Fatalf("FindCoordinator type %d: %v", typ, err)
			}
			if resp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
				t.Errorf("FindCoordinator type %d: error %d, want COORDINATOR_NOT_AVAILABLE", typ, resp.ErrorCode)
			}
		}
		for _, topic := range []string{"__consumer_offsets", "__transaction_state"} {
			if _, _, err := c.ZK().GetTopicAssignment(topic); !errors.Is(err, zkclient.ErrTopicNotFound) {
				t.Errorf("%s: %v, want it not created", topic, err)
			}
		}
	})
	t.Run("factor 1", func(t *testing.T) {
		c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{"group.initial.rebalance.delay.ms": "0"}})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		adm := c.Admin()
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, "single"); err != nil {
			t.Fatal(err)
		}
		prod := c.Client(kgo.DefaultProduceTopic("single"))
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		groupConsume(t, ctx, c, "single-group", "single", 1)
		offsets, err := adm.FetchOffsets(ctx, "single-group")
		if err != nil {
			t.Fatal(err)
		}
		// The one record is at offset 0, so the commit after it is 1.
		if o, ok := offsets.Lookup("single", 0); !ok || o.At != 1 {
			t.Fatalf("committed offset = %+v (found %v), want 1", o, ok)
		}
		td, err := adm.ListTopics(ctx, "__consumer_offsets")
		if err != nil {
			t.Fatal(err)
		}
		d := td["__consumer_offsets"]
		if d.Err != nil || len(d.Partitions) == 0 {
			t.Fatalf("__consumer_offsets: %+v", d)
		}
		for _, p := range d.Partitions {
			if len(p.Replicas) != 1 {
				t.Fatalf("__consumer_offsets partition %d has replicas %v, want 1", p.Partition, p.Replicas)
			}
		}
	})
}

// TestGroupsFindCoordinatorVersions: every FindCoordinator version
// names the leader of the group's offsets partition; v4 answers batched
// keys one entry each; unknown key types are refused per Kafka; after the
// coordinator stops, the new leader is named and accepts commits, and the
// old broker, restarted as a follower, answers NOT_COORDINATOR.
func TestGroupsFindCoordinatorVersions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Overrides: map[string]string{"group.initial.rebalance.delay.ms": "0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if res, err := c.Admin().CreateTopic(ctx, 1, 3, nil, "fc"); err != nil || res.Err != nil {
		t.Fatalf("create fc: %v / %v", err, res.Err)
	}
	groups := []string{"alpha", "beta", "gamma", "delta", "console-consumer-12345"}

	// A raw connection keeps each request at the version set on it (a
	// kgo client would raise it to the highest both sides support).
	dial := func(i int) *network.Client {
		nc, err := network.Dial(ctx, c.Addr(i), "audit-find", 10*time.Second)
		if err != nil {
			t.Fatalf("dial broker %d: %v", c.BrokerID(i), err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc
	}
	raw := dial(0)
	send := func(nc *network.Client, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
		t.Helper()
		resp, err := nc.Request(ctx, req)
		if err != nil {
			t.Fatalf("FindCoordinator v%d: %v", req.Version, err)
		}
		return resp.(*kmsg.FindCoordinatorResponse)
	}
	find := func(version int16, keys ...string) *kmsg.FindCoordinatorResponse {
		t.Helper()
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version = version
		if version >= 4 {
			req.CoordinatorKeys = keys
		} else {
			req.CoordinatorKey = keys[0]
		}
		// Sent to one broker on purpose: any broker answers FindCoordinator.
		return send(raw, req)
	}
	// The first request creates the offsets topic; answers are
	// COORDINATOR_NOT_AVAILABLE until its leaders are elected.
	c.WaitFor(60*time.Second, "FindCoordinator answers a coordinator", func() bool {
		r := find(3, "alpha")
		return r.ErrorCode == 0
	})
	leaders := func() map[int32]int32 {
		td, err := c.Admin().ListTopics(ctx, offsetsTopic)
		if err != nil || td[offsetsTopic].Err != nil {
			return nil // metadata not yet propagated
		}
		m := map[int32]int32{}
		for _, p := range td[offsetsTopic].Partitions {
			m[p.Partition] = p.Leader
		}
		return m
	}
	var ldr map[int32]int32
	c.WaitFor(30*time.Second, "every offsets partition has a leader", func() bool {
		ldr = leaders()
		if len(ldr) != 50 {
			return false
		}
		for _, l := range ldr {
			if l < 0 {
				return false
			}
		}
		return true
	})
	addrOf := func(id int32) string { return c.Addr(c.Index(id)) }
	check := func(version int16, key string, node int32, host string, port int32, code int16) {
		t.Helper()
		want := ldr[group.PartitionFor(key, 50)]
		if code != 0 || node != want || fmt.Sprintf("%s:%d", host, port) != addrOf(want) {
			t.Errorf("v%d %q: node %d at %s:%d error %d; want node %d at %s (leader of %s-%d)",
				version, key, node, host, port, code, want, addrOf(want), offsetsTopic, group.PartitionFor(key, 50))
		}
	}
	for v := int16(0); v <= 3; v++ {
		for _, g := range groups {
			r := find(v, g)
			check(v, g, r.NodeID, r.Host, r.Port, r.ErrorCode)
		}
	}
	r := find(4, groups...)
	if len(r.Coordinators) != len(groups) {
		t.Fatalf("v4 batched: %d coordinators for %d keys", len(r.Coordinators), len(groups))
	}
	for i, co := range r.Coordinators {
		if co.Key != groups[i] {
			t.Errorf("v4 entry %d key %q, want %q", i, co.Key, groups[i])
		}
		check(4, co.Key, co.NodeID, co.Host, co.Port, co.ErrorCode)
	}
	// A key type other than group (0) and transaction (1) is refused.
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKey, req.CoordinatorType = 2, "alpha", 7
	bad := send(raw, req)
	if bad.ErrorCode != kerr.InvalidRequest.Code || bad.NodeID != -1 {
		t.Errorf("key type 7: error %d node %d, want INVALID_REQUEST (%d) and node -1", bad.ErrorCode, bad.NodeID, kerr.InvalidRequest.Code)
	}
	// Transaction keys: no transaction coordinator runs here.
	req.CoordinatorType = 1
	txn := send(raw, req)
	if txn.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Errorf("key type 1: error %d, want COORDINATOR_NOT_AVAILABLE (%d)", txn.ErrorCode, kerr.CoordinatorNotAvailable.Code)
	}

	// After the coordinator of "alpha" stops, FindCoordinator names the
	// new leader of its partition, and a commit there succeeds.
	part := group.PartitionFor("alpha", 50)
	old := ldr[part]
	c.StopBroker(c.Index(old))
	var moved *kmsg.FindCoordinatorResponse
	other := 0
	if c.Index(old) == 0 {
		other = 1
	}
	survivor := dial(other)
	c.WaitFor(60*time.Second, "alpha's coordinator moves", func() bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKey = 3, "alpha"
		r := send(survivor, req)
		if r.ErrorCode != 0 || r.NodeID == old {
			return false
		}
		moved = r
		return true
	})
	adm := c.Admin()
	oc := kadm.Offsets{}
	oc.Add(kadm.Offset{Topic: "fc", Partition: 0, At: 1, LeaderEpoch: -1})
	// A simple (generation -1) commit: the new coordinator accepts the
	// group and reads the commit back.
	resp, err := adm.CommitOffsets(ctx, "alpha", oc)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit to alpha's new coordinator %d: %v / %v", moved.NodeID, err, resp.Error())
	}
	fo, err := adm.FetchOffsets(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fo.Lookup("fc", 0); !ok || o.At != 1 {
		t.Fatalf("alpha fc-0 = %+v (%v), want 1", o, ok)
	}

	// The old coordinator comes back as a follower of alpha's partition:
	// asked directly, it answers NOT_COORDINATOR (after at most a
	// COORDINATOR_LOAD_IN_PROGRESS or a refused connection while it starts).
	c.RestartBroker(c.Index(old))
	var codes []int16
	c.WaitFor(60*time.Second, "the restarted broker answers NOT_COORDINATOR for alpha", func() bool {
		nc, err := network.Dial(ctx, c.Addr(c.Index(old)), "audit-old", 5*time.Second)
		if err != nil {
			return false
		}
		defer nc.Close()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group = 3, "alpha"
		resp, err := nc.Request(ctx, req)
		if err != nil {
			return false
		}
		code := resp.(*kmsg.OffsetFetchResponse).ErrorCode
		codes = append(codes, code)
		return code == kerr.NotCoordinator.Code
	})
	for _, code := range codes {
		if code != kerr.NotCoordinator.Code && code != kerr.CoordinatorLoadInProgress.Code {
			t.Errorf("old coordinator answered error %d for alpha, want only NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS (all: %v)", code, codes)
		}
	}
}

// TestGroupsAdminAPIs: ListGroups filtered by state, OffsetDelete
// (refused for a subscribed partition, allowed otherwise) and DeleteGroups
// (refused for a non-empty group) through kadm against a 3-broker cluster.
func TestGroupsAdminAPIs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Overrides: map[string]string{"group.initial.rebalance.delay.ms": "0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := c.Admin()
	for _, tp := range []string{"adm-a", "adm-b"} {
		if res, err := adm.CreateTopic(ctx, 2, 2, nil, tp); err != nil || res.Err != nil {
			t.Fatalf("create %s: %v / %v", tp, err, res.Err)
		}
	}
	spreadProduce(t, ctx, c, "adm-a", 2, 3)
	spreadProduce(t, ctx, c, "adm-b", 2, 3)

	// A simple (generation -1) commit for adm-b into "live" while it has
	// no members (Kafka refuses one into a group with members): adm-b is
	// not subscribed later, so its offset may be deleted while the group
	// is Stable.
	ob := kadm.Offsets{}
	ob.Add(kadm.Offset{Topic: "adm-b", Partition: 1, At: 2, LeaderEpoch: -1})
	if r, err := adm.CommitOffsets(ctx, "live", ob); err != nil || r.Error() != nil {
		t.Fatalf("simple commit: %v / %v", err, r.Error())
	}
	live := groupConsume(t, ctx, c, "live", "adm-a", 6)
	defer live.Close()
	gone := groupConsume(t, ctx, c, "gone", "adm-a", 6)
	gone.Close()
	c.WaitFor(30*time.Second, "gone is Empty and live is Stable", func() bool {
		dg, err := adm.DescribeGroups(ctx, "live", "gone")
		return err == nil && dg["gone"].State == "Empty" && dg["live"].State == "Stable"
	})

	list := func(states ...string) string {
		t.Helper()
		l, err := adm.ListGroups(ctx, states...)
		if err != nil {
			t.Fatalf("ListGroups %v: %v", states, err)
		}
		var names []string
		for _, n := range l.Groups() {
			if n == "live" || n == "gone" {
				names = append(names, n+"="+l[n].State)
			}
		}
		return strings.Join(names, ",")
	}
	if got := list(); got != "gone=Empty,live=Stable" {
		t.Errorf("ListGroups: %s", got)
	}
	if got := list("Stable"); got != "live=Stable" {
		t.Errorf("ListGroups Stable: %s", got)
	}
	if got := list("Empty", "Dead"); got != "gone=Empty" {
		t.Errorf("ListGroups Empty,Dead: %s", got)
	}
	if got := list("PreparingRebalance"); got != "" {
		t.Errorf("ListGroups PreparingRebalance: %s", got)
	}

	// OffsetDelete: the subscribed topic is refused per partition, the
	// unsubscribed one is deleted.
	del, err := adm.DeleteOffsets(ctx, "live", kadm.TopicsSet{"adm-a": {0: {}}, "adm-b": {1: {}}})
	if err != nil {
		t.Fatalf("DeleteOffsets: %v", err)
	}
	if e := del["adm-a"][0]; !errorsIs(e, kerr.GroupSubscribedToTopic) {
		t.Errorf("delete subscribed adm-a-0: %v, want GROUP_SUBSCRIBED_TO_TOPIC", e)
	}
	if e := del["adm-b"][1]; e != nil {
		t.Errorf("delete adm-b-1: %v", e)
	}
	fo, err := adm.FetchOffsets(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fo.Lookup("adm-b", 1); ok && o.At >= 0 {
		t.Errorf("adm-b-1 still committed: %+v", o)
	}
	if o, ok := fo.Lookup("adm-a", 0); !ok || o.At != 3 {
		t.Errorf("adm-a-0 = %+v (%v), want 3", o, ok)
	}
	// OffsetDelete on a group that does not exist.
	if _, err := adm.DeleteOffsets(ctx, "nobody", kadm.TopicsSet{"adm-a": {0: {}}}); !errorsIs(err, kerr.GroupIDNotFound) {
		t.Errorf("DeleteOffsets nobody: %v, want GROUP_ID_NOT_FOUND", err)
	}

	// DeleteGroups: the Stable group is refused, the Empty one and its
	// offsets go, an unknown one is GROUP_ID_NOT_FOUND.
	dr, err := adm.DeleteGroups(ctx, "live", "gone", "nobody")
	if err != nil {
		t.Fatalf("DeleteGroups: %v", err)
	}
	if !errorsIs(dr["live"].Err, kerr.NonEmptyGroup) || dr["gone"].Err != nil || !errorsIs(dr["nobody"].Err, kerr.GroupIDNotFound) {
		t.Errorf("DeleteGroups: live %v (want NON_EMPTY_GROUP), gone %v (want nil), nobody %v (want GROUP_ID_NOT_FOUND)",
			dr["live"].Err, dr["gone"].Err, dr["nobody"].Err)
	}
	if got := list(); got != "live=Stable" {
		t.Errorf("ListGroups after delete: %s", got)
	}
	fo, err = adm.FetchOffsets(ctx, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fo.Lookup("adm-a", 0); ok && o.At >= 0 {
		t.Errorf("deleted group's offset survived: %+v", o)
	}
}

func errorsIs(err error, want *kerr.Error) bool { return errors.Is(err, want) }
