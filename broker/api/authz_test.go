package api

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

// The request-path checks of every API family, each against a scripted
// authorizer: what Kafka's KafkaApis asks, the error code a denial
// answers, and that a denied resource never reaches the replica manager or
// the group coordinator while the allowed ones of the same request do.

const (
	alice   = "User:alice"   // granted what each case grants
	mallory = "User:mallory" // granted nothing
)

// aclScript allows exactly the granted (principal, operation, resource
// type, name) tuples; name "*" grants every name of the type. It applies
// no implied operations: each case grants what it means.
type aclScript struct {
	mu    sync.Mutex
	allow map[string]bool
	asked []Action
}

func aclKey(principal string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) string {
	return fmt.Sprintf("%s|%s|%s|%s", principal, op, rt, name)
}

func (s *aclScript) grant(principal string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allow == nil {
		s.allow = map[string]bool{}
	}
	for _, n := range names {
		s.allow[aclKey(principal, op, rt, n)] = true
	}
}

func (s *aclScript) Authorize(_ context.Context, act Action) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, act)
	if act.AnyResource {
		prefix := aclKey(act.Principal, act.Operation, act.ResourceType, "")
		for k := range s.allow {
			if strings.HasPrefix(k, prefix) {
				return true
			}
		}
		return false
	}
	return s.allow[aclKey(act.Principal, act.Operation, act.ResourceType, act.Name)] ||
		s.allow[aclKey(act.Principal, act.Operation, act.ResourceType, "*")]
}

// questions returns and forgets what was asked, as "op type name".
func (s *aclScript) questions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, a := range s.asked {
		out = append(out, fmt.Sprintf("%s %s %s", a.Operation, a.ResourceType, a.Name))
	}
	s.asked = nil
	return out
}

// reachLog records which topics and groups reached the data path or the
// coordinator.
type reachLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *reachLog) note(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

func (l *reachLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	sort.Strings(out)
	return out
}

// dataFake answers the data-path and controller-to-broker requests with
// success and records the topics that reached it.
type dataFake struct {
	ReplicaManager
	log *reachLog
}

func (d dataFake) ProduceInto(_ context.Context, req *kmsg.ProduceRequest, _ string, _ *kmsg.ProduceResponse) (*kmsg.ProduceResponse, network.Waiter, error) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		d.log.note("Produce %s", t.Topic)
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if req.Acks == 0 {
		return nil, nil, nil
	}
	return resp, nil, nil
}

// FetchInto applies mayRead as the replica manager does (its own
// test covers sessions).
func (d dataFake) FetchInto(_ context.Context, req *kmsg.FetchRequest, mayRead func(string) bool, _ *network.FetchScratch) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = t.Topic
		ok := mayRead == nil || mayRead(t.Topic)
		if ok {
			d.log.note("Fetch %s", t.Topic)
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = p.Partition
			if !ok {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (d dataFake) ListOffsets(_ context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, t := range req.Topics {
		d.log.note("ListOffsets %s", t.Topic)
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Offset = p.Partition, 5
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (d dataFake) DeleteRecords(_ context.Context, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, t := range req.Topics {
		d.log.note("DeleteRecords %s", t.Topic)
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark = p.Partition, p.Offset
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (d dataFake) OffsetForLeaderEpoch(_ context.Context, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range req.Topics {
		d.log.note("OffsetForLeaderEpoch %s", t.Topic)
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.EndOffset = p.Partition, 9
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (d dataFake) LeaderAndIsr(_ context.Context, req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse {
	d.log.note("LeaderAndIsr")
	return req.ResponseKind().(*kmsg.LeaderAndISRResponse)
}

func (d dataFake) StopReplica(_ context.Context, req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse {
	d.log.note("StopReplica")
	return req.ResponseKind().(*kmsg.StopReplicaResponse)
}

func (d dataFake) UpdateMetadata(_ context.Context, req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse {
	d.log.note("UpdateMetadata")
	return req.ResponseKind().(*kmsg.UpdateMetadataResponse)
}

// groupsFake answers the group APIs with success and records the groups
// and topics that reached it. Group "g-busy" has a coordinator error.
type groupsFake struct {
	GroupCoordinator
	log *reachLog
}

func (g groupsFake) PartitionFor(string) int32 { return 0 }

func (g groupsFake) JoinGroup(_ context.Context, req *kmsg.JoinGroupRequest, _ group.JoinInfo) *kmsg.JoinGroupResponse {
	g.log.note("JoinGroup %s", req.Group)
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation, resp.MemberID = 1, "m-1"
	return resp
}

func (g groupsFake) SyncGroup(_ context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	g.log.note("SyncGroup %s", req.Group)
	return req.ResponseKind().(*kmsg.SyncGroupResponse)
}

func (g groupsFake) Heartbeat(_ context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	g.log.note("Heartbeat %s", req.Group)
	return req.ResponseKind().(*kmsg.HeartbeatResponse)
}

func (g groupsFake) LeaveGroup(_ context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	g.log.note("LeaveGroup %s", req.Group)
	return req.ResponseKind().(*kmsg.LeaveGroupResponse)
}

func (g groupsFake) OffsetCommit(_ context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range req.Topics {
		g.log.note("OffsetCommit %s %s", req.Group, t.Topic)
		resp.Topics = append(resp.Topics, offsetCommitErrorTopic(t, 0))
	}
	return resp
}

// OffsetFetch answers offset 3 for each requested partition; a nil topic
// list (all offsets) answers topics "open" and "secret".
func (g groupsFake) OffsetFetch(_ context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	answer := func(group string, topics []string, parts [][]int32) []kmsg.OffsetFetchResponseTopic {
		var out []kmsg.OffsetFetchResponseTopic
		for i, t := range topics {
			g.log.note("OffsetFetch %s %s", group, t)
			rt := offsetFetchErrorTopic(t, parts[i], 0)
			for j := range rt.Partitions {
				rt.Partitions[j].Offset = 3
			}
			out = append(out, rt)
		}
		return out
	}
	all := []string{"open", "secret"}
	allParts := [][]int32{{0}, {0}}
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			out := kmsg.NewOffsetFetchResponseGroup()
			out.Group = rg.Group
			topics, parts := all, allParts
			if rg.Topics != nil {
				topics, parts = nil, nil
				for _, t := range rg.Topics {
					topics, parts = append(topics, t.Topic), append(parts, t.Partitions)
				}
			}
			for _, t := range answer(rg.Group, topics, parts) {
				gt := kmsg.NewOffsetFetchResponseGroupTopic()
				gt.Topic = t.Topic
				for _, p := range t.Partitions {
					gt.Partitions = append(gt.Partitions, kmsg.OffsetFetchResponseGroupTopicPartition{Partition: p.Partition, Offset: p.Offset, ErrorCode: p.ErrorCode})
				}
				out.Topics = append(out.Topics, gt)
			}
			resp.Groups = append(resp.Groups, out)
		}
		return resp
	}
	if req.Group == "g-busy" {
		resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
		return resp
	}
	topics, parts := all, allParts
	if req.Topics != nil {
		topics, parts = nil, nil
		for _, t := range req.Topics {
			topics, parts = append(topics, t.Topic), append(parts, t.Partitions)
		}
	}
	resp.Topics = answer(req.Group, topics, parts)
	return resp
}

func (g groupsFake) OffsetDelete(_ context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	g.log.note("OffsetDelete %s", req.Group)
	for _, t := range req.Topics {
		g.log.note("OffsetDelete %s %s", req.Group, t.Topic)
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (g groupsFake) DescribeGroups(_ context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		g.log.note("DescribeGroups %s", id)
		out := kmsg.NewDescribeGroupsResponseGroup()
		out.Group, out.State, out.ProtocolType = id, "Stable", "consumer"
		if id == "g-busy" {
			out.ErrorCode = kerr.CoordinatorLoadInProgress.Code
		}
		resp.Groups = append(resp.Groups, out)
	}
	return resp
}

func (g groupsFake) ListGroups(_ context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	for _, id := range []string{"g", "g-denied"} {
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType = id, "consumer"
		resp.Groups = append(resp.Groups, lg)
	}
	return resp
}

func (g groupsFake) DeleteGroups(_ context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		g.log.note("DeleteGroups %s", id)
		out := kmsg.NewDeleteGroupsResponseGroup()
		out.Group = id
		resp.Groups = append(resp.Groups, out)
	}
	return resp
}

// metaFake knows topics "open" and "secret" (one partition each, leader
// 1) and answers the others unknown, as the metadata cache does.
type metaFake struct {
	fakeMeta
}

func (m *metaFake) MetadataResponse(req *kmsg.MetadataRequest, _ string) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	known := func(name string) kmsg.MetadataResponseTopic {
		rt := kmsg.NewMetadataResponseTopic()
		n := name
		rt.Topic, rt.TopicID = &n, [16]byte{byte(len(name))}
		rp := kmsg.NewMetadataResponseTopicPartition()
		rp.Leader = 1
		rt.Partitions = []kmsg.MetadataResponseTopicPartition{rp}
		if req.IncludeTopicAuthorizedOperations {
			rt.AuthorizedOperations = 0x7ffff // the cache's "no authorizer" answer; the handler replaces it
		}
		return rt
	}
	if req.Topics == nil {
		resp.Topics = []kmsg.MetadataResponseTopic{known("open"), known("secret")}
		return resp
	}
	for _, t := range req.Topics {
		if t.Topic == nil { // by id (v10+): unknown here
			rt := kmsg.NewMetadataResponseTopic()
			rt.TopicID, rt.ErrorCode = t.TopicID, kerr.UnknownTopicID.Code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if *t.Topic == "open" || *t.Topic == "secret" {
			resp.Topics = append(resp.Topics, known(*t.Topic))
			continue
		}
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, kerr.UnknownTopicOrPartition.Code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// authzHarness is one broker's request path with the fakes and the
// scripted authorizer.
type authzHarness struct {
	t    testing.TB
	a    *Apis
	acls *aclScript
	log  *reachLog
	zk   *fakeZK
}

func newAuthzHarness(t testing.TB, props map[string]string) *authzHarness {
	t.Helper()
	all := map[string]string{"zookeeper.connect": "127.0.0.1:1/x", "broker.id": "1", "log.dirs": t.TempDir()}
	maps.Copy(all, props)
	cfg, err := config.FromMap(all)
	if err != nil {
		t.Fatal(err)
	}
	h := &authzHarness{t: t, acls: &aclScript{}, log: &reachLog{}, zk: newFakeZK("a")}
	h.zk.topics["open"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}
	h.zk.topics["secret"] = zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}
	m := &metaFake{fakeMeta{leaders: map[string]map[int32]int32{"open": {0: 1}, "secret": {0: 1}}}}
	h.a = New(Config{BrokerID: 1, ClusterID: "c1", Broker: cfg, ZK: h.zk, Metadata: m,
		Replicas: dataFake{log: h.log}, Groups: groupsFake{log: h.log}, Controller: fakeController{active: true},
		Authorizer: h.acls, FixedStartIndex: 0, Logger: slog.New(slog.DiscardHandler)})
	h.a.SetReady()
	return h
}

// send handles req as principal; a nil response (acks=0) or a closed
// connection come back as (nil, err).
func (h *authzHarness) send(principal string, req kmsg.Request) (kmsg.Response, error) {
	return h.a.Handle(context.Background(), &network.Request{Key: req.Key(), Version: req.GetVersion(), Body: req,
		Listener: "PLAINTEXT", Session: &network.Session{Authenticated: true, Principal: principal},
		RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}})
}

func (h *authzHarness) must(principal string, req kmsg.Request) kmsg.Response {
	h.t.Helper()
	resp, err := h.send(principal, req)
	if err != nil {
		h.t.Fatalf("%s as %s: %v", kmsg.NameForKey(req.Key()), principal, err)
	}
	return resp
}

func (h *authzHarness) reached(what string, want ...string) {
	h.t.Helper()
	got := h.log.take()
	sort.Strings(want)
	if !slices.Equal(got, want) {
		h.t.Errorf("%s: reached %q, want %q", what, got, want)
	}
}

func wantCodeMap(t *testing.T, what string, got, want map[string]int16) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

var (
	opRead     = kmsg.ACLOperationRead
	opWrite    = kmsg.ACLOperationWrite
	opCreate   = kmsg.ACLOperationCreate
	opDelete   = kmsg.ACLOperationDelete
	opAlter    = kmsg.ACLOperationAlter
	opDescribe = kmsg.ACLOperationDescribe
	opClusterA = kmsg.ACLOperationClusterAction
	opDescCfg  = kmsg.ACLOperationDescribeConfigs
	opAlterCfg = kmsg.ACLOperationAlterConfigs
	rtTopic    = kmsg.ACLResourceTypeTopic
	rtGroup    = kmsg.ACLResourceTypeGroup
	rtCluster  = kmsg.ACLResourceTypeCluster
)

// twoTopics names "open" and "secret", partition 0 each, in a request's
// topic list built by mk.
func twoTopics[T any](mk func(topic string) T) []T { return []T{mk("open"), mk("secret")} }

// TestAuthorizeDataPath: Produce needs Write, a consumer Fetch Read and a
// follower Fetch ClusterAction, ListOffsets Describe, DeleteRecords
// Delete, OffsetForLeaderEpoch ClusterAction or Describe; each topic is
// decided once per request.
func TestAuthorizeDataPath(t *testing.T) {
	h := newAuthzHarness(t, nil)
	for _, op := range []kmsg.ACLOperation{opWrite, opRead, opDescribe, opDelete} {
		h.acls.grant(alice, op, rtTopic, "open")
	}
	h.acls.grant("User:broker", opClusterA, rtCluster, clusterResource)

	produce := func(acks int16, topics ...string) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks = 9, acks
		for _, topic := range topics {
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			rt.Partitions = []kmsg.ProduceRequestTopicPartition{kmsg.NewProduceRequestTopicPartition()}
			req.Topics = append(req.Topics, rt)
		}
		return req
	}
	produceCodes := func(resp kmsg.Response) map[string]int16 {
		return codes(resp.(*kmsg.ProduceResponse).Topics, func(t kmsg.ProduceResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		})
	}
	wantCodeMap(t, "Produce as alice", produceCodes(h.must(alice, produce(-1, "open", "secret", "open"))),
		map[string]int16{"open-0": 0, "secret-0": kerr.TopicAuthorizationFailed.Code})
	h.reached("Produce as alice", "Produce open", "Produce open")
	if q := h.acls.questions(); len(q) != 2 {
		t.Errorf("Produce naming open twice asked %q, want one question per topic", q)
	}
	wantCodeMap(t, "Produce as mallory", produceCodes(h.must(mallory, produce(1, "open"))),
		map[string]int16{"open-0": kerr.TopicAuthorizationFailed.Code})
	h.reached("Produce as mallory")
	if _, err := h.send(alice, produce(0, "open", "secret")); err == nil {
		t.Error("acks=0 produce to a denied topic kept the connection")
	}
	h.reached("acks=0 Produce as alice", "Produce open")
	if resp, err := h.send(alice, produce(0, "open")); err != nil || resp != nil {
		t.Errorf("acks=0 produce allowed: %v, %v", resp, err)
	}
	h.reached("acks=0 Produce allowed", "Produce open")
	txnal := produce(-1, "open")
	txnal.Topics[0].Partitions[0].Records = transactionalBatchHeader()
	wantCodeMap(t, "transactional batches without a transactional id", produceCodes(h.must(alice, txnal)),
		map[string]int16{"open-0": kerr.TransactionalIDAuthorizationFailed.Code})
	h.reached("transactional Produce without id")

	fetch := func(replica int32) *kmsg.FetchRequest {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID = 12, replica
		req.Topics = twoTopics(func(topic string) kmsg.FetchRequestTopic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = topic
			rt.Partitions = []kmsg.FetchRequestTopicPartition{kmsg.NewFetchRequestTopicPartition()}
			return rt
		})
		return req
	}
	fetchCodes := func(resp kmsg.Response) map[string]int16 {
		return codes(resp.(*kmsg.FetchResponse).Topics, func(t kmsg.FetchResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		})
	}
	taf := kerr.TopicAuthorizationFailed.Code
	for _, c := range []struct {
		name      string
		principal string
		replica   int32
		want      map[string]int16
		reached   []string
	}{
		{"consumer", alice, -1, map[string]int16{"open-0": 0, "secret-0": taf}, []string{"Fetch open"}},
		{"debugging replica id", alice, -2, map[string]int16{"open-0": 0, "secret-0": taf}, []string{"Fetch open"}},
		{"follower without ClusterAction", alice, 2, map[string]int16{"open-0": taf, "secret-0": taf}, nil},
		{"follower", "User:broker", 2, map[string]int16{"open-0": 0, "secret-0": 0}, []string{"Fetch open", "Fetch secret"}},
	} {
		wantCodeMap(t, "Fetch "+c.name, fetchCodes(h.must(c.principal, fetch(c.replica))), c.want)
		h.reached("Fetch "+c.name, c.reached...)
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 5
	lo.Topics = twoTopics(func(topic string) kmsg.ListOffsetsRequestTopic {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{kmsg.NewListOffsetsRequestTopicPartition()}
		return rt
	})
	lr := h.must(alice, lo).(*kmsg.ListOffsetsResponse)
	wantCodeMap(t, "ListOffsets", codes(lr.Topics, func(t kmsg.ListOffsetsResponseTopic, add func(string, int32, int16)) {
		for _, p := range t.Partitions {
			add(t.Topic, p.Partition, p.ErrorCode)
			if p.ErrorCode != 0 && (p.Offset != -1 || p.Timestamp != -1) {
				panic("a denied ListOffsets partition carries an offset")
			}
		}
	}), map[string]int16{"open-0": 0, "secret-0": taf})
	h.reached("ListOffsets", "ListOffsets open")

	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.Topics = twoTopics(func(topic string) kmsg.DeleteRecordsRequestTopic {
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 4}}
		return rt
	})
	wantCodeMap(t, "DeleteRecords", codes(h.must(alice, dr).(*kmsg.DeleteRecordsResponse).Topics,
		func(t kmsg.DeleteRecordsResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		}), map[string]int16{"open-0": 0, "secret-0": taf})
	h.reached("DeleteRecords", "DeleteRecords open")

	ofle := kmsg.NewPtrOffsetForLeaderEpochRequest()
	ofle.Version = 3
	ofle.Topics = twoTopics(func(topic string) kmsg.OffsetForLeaderEpochRequestTopic {
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{kmsg.NewOffsetForLeaderEpochRequestTopicPartition()}
		return rt
	})
	ofleCodes := func(p string) map[string]int16 {
		return codes(h.must(p, ofle).(*kmsg.OffsetForLeaderEpochResponse).Topics,
			func(t kmsg.OffsetForLeaderEpochResponseTopic, add func(string, int32, int16)) {
				for _, p := range t.Partitions {
					add(t.Topic, p.Partition, p.ErrorCode)
				}
			})
	}
	wantCodeMap(t, "OffsetForLeaderEpoch as a consumer", ofleCodes(alice), map[string]int16{"open-0": 0, "secret-0": taf})
	h.reached("OffsetForLeaderEpoch as a consumer", "OffsetForLeaderEpoch open")
	wantCodeMap(t, "OffsetForLeaderEpoch with ClusterAction", ofleCodes("User:broker"), map[string]int16{"open-0": 0, "secret-0": 0})
	h.reached("OffsetForLeaderEpoch with ClusterAction", "OffsetForLeaderEpoch open", "OffsetForLeaderEpoch secret")
}

// TestAuthorizeInterBrokerRequests: the controller's requests and
// ControlledShutdown need ClusterAction; without it the request's error
// response carries CLUSTER_AUTHORIZATION_FAILED and nothing reaches the
// replica manager or the controller.
func TestAuthorizeInterBrokerRequests(t *testing.T) {
	h := newAuthzHarness(t, nil)
	h.acls.grant("User:broker", opClusterA, rtCluster, clusterResource)
	caf := kerr.ClusterAuthorizationFailed.Code

	lai5 := kmsg.NewPtrLeaderAndISRRequest()
	lai5.Version = 5
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic, ts.TopicID = "open", [16]byte{1}
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Topic, ps.Partition = "open", 0
	ts.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{ps}
	lai5.TopicStates = []kmsg.LeaderAndISRRequestTopicState{ts}
	lai1 := kmsg.NewPtrLeaderAndISRRequest()
	lai1.Version = 1
	lai1.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{ps}
	sr := kmsg.NewPtrStopReplicaRequest()
	sr.Version = 3
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = "open"
	st.PartitionStates = []kmsg.StopReplicaRequestTopicPartitionState{kmsg.NewStopReplicaRequestTopicPartitionState()}
	sr.Topics = []kmsg.StopReplicaRequestTopic{st}
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version = 7
	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.Version, cs.BrokerID = 3, 2

	for _, c := range []struct {
		req     kmsg.Request
		codes   func(kmsg.Response) []int16 // top level first
		reached string
	}{
		{lai5, func(r kmsg.Response) []int16 {
			resp := r.(*kmsg.LeaderAndISRResponse)
			out := []int16{resp.ErrorCode}
			for _, t := range resp.Topics {
				if t.TopicID != [16]byte{1} {
					panic("LeaderAndIsr error response without the topic id")
				}
				for _, p := range t.Partitions {
					out = append(out, p.ErrorCode)
				}
			}
			return out
		}, "LeaderAndIsr"},
		{lai1, func(r kmsg.Response) []int16 {
			resp := r.(*kmsg.LeaderAndISRResponse)
			out := []int16{resp.ErrorCode}
			for _, p := range resp.Partitions {
				out = append(out, p.ErrorCode)
			}
			return out
		}, "LeaderAndIsr"},
		{sr, func(r kmsg.Response) []int16 {
			resp := r.(*kmsg.StopReplicaResponse)
			out := []int16{resp.ErrorCode}
			for _, p := range resp.Partitions {
				out = append(out, p.ErrorCode)
			}
			return out
		}, "StopReplica"},
		{um, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.UpdateMetadataResponse).ErrorCode} }, "UpdateMetadata"},
		{cs, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ControlledShutdownResponse).ErrorCode} }, ""},
	} {
		name := fmt.Sprintf("%s v%d", kmsg.NameForKey(c.req.Key()), c.req.GetVersion())
		got := c.codes(h.must(alice, c.req))
		if len(got) == 0 || slices.ContainsFunc(got, func(code int16) bool { return code != caf }) {
			t.Errorf("%s without ClusterAction: codes %v, want all %d", name, got, caf)
		}
		if name != "ControlledShutdown v3" && len(got) < 2 && c.reached != "UpdateMetadata" {
			t.Errorf("%s without ClusterAction: no per-partition errors %v", name, got)
		}
		h.reached(name + " denied")
		got = c.codes(h.must("User:broker", c.req))
		if slices.ContainsFunc(got, func(code int16) bool { return code != 0 }) {
			t.Errorf("%s with ClusterAction: codes %v", name, got)
		}
		if c.reached != "" {
			h.reached(name+" allowed", c.reached)
		}
	}
}

func opBits(ops ...kmsg.ACLOperation) int32 {
	var b int32
	for _, op := range ops {
		b |= 1 << uint(op)
	}
	return b
}

// TestAuthorizeMetadata: topics the principal may not Describe are hidden
// from "all topics" and answered TOPIC_AUTHORIZATION_FAILED (no id, no
// partitions) when named; auto-creation needs Create on the Cluster or the
// topic; authorized operations are the principal's when requested.
func TestAuthorizeMetadata(t *testing.T) {
	h := newAuthzHarness(t, nil)
	h.acls.grant(alice, opDescribe, rtTopic, "open", "missing", "new", "__transaction_state")
	h.acls.grant(alice, opRead, rtTopic, "open")
	h.acls.grant(alice, opCreate, rtTopic, "new")
	h.acls.grant("User:admin", opDescribe, rtTopic, "*")
	h.acls.grant("User:admin", opCreate, rtCluster, clusterResource)
	h.acls.grant("User:admin", opDescribe, rtCluster, clusterResource)
	h.acls.grant("User:admin", opAlter, rtCluster, clusterResource)

	md := func(principal string, version int16, topics ...string) *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = version, true
		req.IncludeTopicAuthorizedOperations, req.IncludeClusterAuthorizedOperations = true, true
		if topics != nil {
			req.Topics = []kmsg.MetadataRequestTopic{}
		}
		for _, n := range topics {
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(n)
			req.Topics = append(req.Topics, mt)
		}
		return h.must(principal, req).(*kmsg.MetadataResponse)
	}
	summary := func(resp *kmsg.MetadataResponse) map[string]string {
		out := map[string]string{}
		for _, t := range resp.Topics {
			out[deref(t.Topic)] = fmt.Sprintf("code=%d parts=%d id=%v internal=%v ops=%d", t.ErrorCode, len(t.Partitions), t.TopicID != [16]byte{},
				t.IsInternal, t.AuthorizedOperations)
		}
		return out
	}
	omitted := authorizedOperationsOmitted
	deniedEntry := fmt.Sprintf("code=%d parts=0 id=false internal=false ops=%d", kerr.TopicAuthorizationFailed.Code, omitted)
	openEntry := fmt.Sprintf("code=0 parts=1 id=true internal=false ops=%d", opBits(opRead, opDescribe))

	all := md(alice, 10)
	if got, want := summary(all), map[string]string{"open": openEntry}; !maps.Equal(got, want) {
		t.Errorf("all topics as alice: %v, want %v", got, want)
	}
	if all.AuthorizedOperations != 0 {
		t.Errorf("cluster operations without Describe on the cluster: %d, want 0", all.AuthorizedOperations)
	}
	named := md(alice, 10, "open", "secret", "missing", "new", "__transaction_state")
	want := map[string]string{
		"open":   openEntry,
		"secret": deniedEntry,
		// Describe but no Create: refused rather than created.
		"missing":             deniedEntry,
		"new":                 fmt.Sprintf("code=%d parts=0 id=false internal=false ops=%d", kerr.LeaderNotAvailable.Code, opBits(opCreate, opDescribe)),
		"__transaction_state": fmt.Sprintf("code=%d parts=0 id=false internal=true ops=%d", kerr.TopicAuthorizationFailed.Code, omitted),
	}
	if got := summary(named); !maps.Equal(got, want) {
		t.Errorf("named topics as alice:\n got %v\nwant %v", got, want)
	}
	h.zk.mu.Lock()
	_, created := h.zk.topics["new"]
	_, createdDenied := h.zk.topics["missing"]
	h.zk.mu.Unlock()
	if !created || createdDenied {
		t.Errorf("auto-created new=%v missing=%v, want only new", created, createdDenied)
	}

	// Create on the cluster creates any topic; the cluster's operations
	// are the principal's.
	admin := md("User:admin", 10, "other")
	if admin.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Errorf("auto-create with Create on the cluster: %d", admin.Topics[0].ErrorCode)
	}
	if want := opBits(opCreate, opAlter, opDescribe); admin.AuthorizedOperations != want {
		t.Errorf("cluster operations: %d, want %d", admin.AuthorizedOperations, want)
	}
	if v11 := md("User:admin", 11); v11.AuthorizedOperations != omitted || len(v11.Topics) != 2 {
		t.Errorf("v11 (no cluster operations in Metadata): ops %d, %d topics", v11.AuthorizedOperations, len(v11.Topics))
	}

	// Not requested: −2^31.
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 10
	if r := h.must(alice, req).(*kmsg.MetadataResponse); len(r.Topics) != 1 || r.Topics[0].AuthorizedOperations != omitted || r.AuthorizedOperations != omitted {
		t.Errorf("operations not requested: %+v", r)
	}
	// Auto-creation off: an unknown topic the principal may Describe is
	// unknown, not denied.
	off := newAuthzHarness(t, map[string]string{"auto.create.topics.enable": "false"})
	off.acls.grant(alice, opDescribe, rtTopic, "missing")
	req = kmsg.NewPtrMetadataRequest()
	req.Version = 1
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("missing")}, {Topic: kmsg.StringPtr("secret")}}
	r := off.must(alice, req).(*kmsg.MetadataResponse)
	if len(r.Topics) != 2 || r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || r.Topics[1].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("auto-creation off: %+v", r.Topics)
	}
}

// TestAuthorizeGroups: the group APIs need Read (join, sync, heartbeat,
// leave, commit), Describe (fetch offsets, describe, list) or Delete
// (delete groups, delete offsets) on the group, and Read or Describe on
// each topic.
func TestAuthorizeGroups(t *testing.T) {
	h := newAuthzHarness(t, nil)
	for _, g := range []string{"g", "g-busy", "g-all"} {
		for _, op := range []kmsg.ACLOperation{opRead, opDescribe, opDelete} {
			h.acls.grant(alice, op, rtGroup, g)
		}
	}
	h.acls.grant(alice, opRead, rtTopic, "open")
	h.acls.grant(alice, opDescribe, rtTopic, "open")
	h.acls.grant("User:admin", opDescribe, rtCluster, clusterResource)
	gaf, taf := kerr.GroupAuthorizationFailed.Code, kerr.TopicAuthorizationFailed.Code

	// Join, sync, heartbeat and leave: GROUP_AUTHORIZATION_FAILED at the
	// top level without reaching the coordinator.
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType = 5, "g-denied", "consumer"
	if r := h.must(alice, join).(*kmsg.JoinGroupResponse); r.ErrorCode != gaf || r.MemberID != "" || r.Generation != -1 {
		t.Errorf("JoinGroup denied: %+v", r)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group = 3, "g-denied"
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group = 3, "g-denied"
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 3, "g-denied"
	topCode := func(r kmsg.Response) int16 {
		switch r := r.(type) {
		case *kmsg.SyncGroupResponse:
			return r.ErrorCode
		case *kmsg.HeartbeatResponse:
			return r.ErrorCode
		case *kmsg.LeaveGroupResponse:
			return r.ErrorCode
		}
		return -100
	}
	for _, req := range []kmsg.Request{sync, hb, leave} {
		if code := topCode(h.must(alice, req)); code != gaf {
			t.Errorf("%s denied: %d", kmsg.NameForKey(req.Key()), code)
		}
	}
	h.reached("denied group membership")
	join.Group, sync.Group, hb.Group, leave.Group = "g", "g", "g", "g"
	for _, req := range []kmsg.Request{join, sync, hb, leave} {
		h.must(alice, req)
	}
	h.reached("allowed group membership", "JoinGroup g", "SyncGroup g", "Heartbeat g", "LeaveGroup g")

	// OffsetCommit: Read on the group, then Read per topic; v0 commits to
	// ZooKeeper with the same checks.
	commit := func(version int16, group string) map[string]int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group = version, group
		req.Topics = twoTopics(func(topic string) kmsg.OffsetCommitRequestTopic {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Offset = 7
			rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{rp}
			return rt
		})
		return codes(h.must(alice, req).(*kmsg.OffsetCommitResponse).Topics, func(t kmsg.OffsetCommitResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		})
	}
	wantCodeMap(t, "OffsetCommit denied group", commit(8, "g-denied"), map[string]int16{"open-0": gaf, "secret-0": gaf})
	wantCodeMap(t, "OffsetCommit", commit(8, "g"), map[string]int16{"open-0": 0, "secret-0": taf})
	h.reached("OffsetCommit", "OffsetCommit g open")
	wantCodeMap(t, "OffsetCommit v0", commit(0, "g"), map[string]int16{"open-0": 0, "secret-0": taf})
	h.zk.mu.Lock()
	stored := fmt.Sprint(h.zk.offsets)
	h.zk.mu.Unlock()
	if stored != "map[g/open/0:7]" {
		t.Errorf("v0 offsets in ZooKeeper: %s", stored)
	}

	// OffsetFetch: Describe on the group, then Describe per topic; all
	// offsets leave denied topics out; a coordinator error is alone.
	fetch := func(version int16, group string, all bool) *kmsg.OffsetFetchResponse {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group = version, group
		if !all {
			req.Topics = twoTopics(func(topic string) kmsg.OffsetFetchRequestTopic {
				return kmsg.OffsetFetchRequestTopic{Topic: topic, Partitions: []int32{0}}
			})
		}
		return h.must(alice, req).(*kmsg.OffsetFetchResponse)
	}
	fetchCodes := func(r *kmsg.OffsetFetchResponse) map[string]int16 {
		return codes(r.Topics, func(t kmsg.OffsetFetchResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
				if p.ErrorCode == taf && p.Offset != -1 {
					panic("a denied OffsetFetch partition carries an offset")
				}
			}
		})
	}
	if r := fetch(5, "g-denied", false); r.ErrorCode != gaf || len(r.Topics) != 0 {
		t.Errorf("OffsetFetch v5 denied group: %+v", r)
	}
	wantCodeMap(t, "OffsetFetch v1 denied group", fetchCodes(fetch(1, "g-denied", false)), map[string]int16{"open-0": gaf, "secret-0": gaf})
	wantCodeMap(t, "OffsetFetch v5", fetchCodes(fetch(5, "g", false)), map[string]int16{"open-0": 0, "secret-0": taf})
	h.reached("OffsetFetch", "OffsetFetch g open")
	wantCodeMap(t, "OffsetFetch v5 all offsets", fetchCodes(fetch(5, "g", true)), map[string]int16{"open-0": 0})
	h.log.take()
	if r := fetch(5, "g-busy", false); r.ErrorCode != kerr.CoordinatorLoadInProgress.Code || len(r.Topics) != 0 {
		t.Errorf("OffsetFetch coordinator error: %+v", r)
	}

	// OffsetFetch v8 batches groups, each decided on its own.
	of8 := kmsg.NewPtrOffsetFetchRequest()
	of8.Version = 8
	for _, g := range []string{"g", "g-denied", "g-all"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		if g != "g-all" {
			rg.Topics = twoTopics(func(topic string) kmsg.OffsetFetchRequestGroupTopic {
				return kmsg.OffsetFetchRequestGroupTopic{Topic: topic, Partitions: []int32{0}}
			})
		}
		of8.Groups = append(of8.Groups, rg)
	}
	got8 := map[string]string{}
	for _, g := range h.must(alice, of8).(*kmsg.OffsetFetchResponse).Groups {
		var parts []string
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				parts = append(parts, fmt.Sprintf("%s-%d=%d", t.Topic, p.Partition, p.ErrorCode))
			}
		}
		sort.Strings(parts)
		got8[g.Group] = fmt.Sprintf("%d %v", g.ErrorCode, parts)
	}
	want8 := map[string]string{"g": fmt.Sprintf("0 [open-0=0 secret-0=%d]", taf), "g-denied": fmt.Sprintf("%d []", gaf), "g-all": "0 [open-0=0]"}
	if !maps.Equal(got8, want8) {
		t.Errorf("OffsetFetch v8: %v, want %v", got8, want8)
	}
	h.reached("OffsetFetch v8", "OffsetFetch g open", "OffsetFetch g-all open", "OffsetFetch g-all secret")

	// DescribeGroups: Describe per group; authorized operations of the
	// described groups only.
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups, dg.IncludeAuthorizedOperations = 5, []string{"g", "g-denied", "g-busy"}, true
	gotDG := map[string]string{}
	for _, g := range h.must(alice, dg).(*kmsg.DescribeGroupsResponse).Groups {
		gotDG[g.Group] = fmt.Sprintf("%d %q %d", g.ErrorCode, g.State, g.AuthorizedOperations)
	}
	omitted := authorizedOperationsOmitted
	wantDG := map[string]string{
		"g":        fmt.Sprintf("0 \"Stable\" %d", opBits(opRead, opDescribe, opDelete)),
		"g-denied": fmt.Sprintf("%d \"\" %d", gaf, omitted),
		"g-busy":   fmt.Sprintf("%d \"Stable\" %d", kerr.CoordinatorLoadInProgress.Code, omitted),
	}
	if !maps.Equal(gotDG, wantDG) {
		t.Errorf("DescribeGroups: %v, want %v", gotDG, wantDG)
	}
	h.reached("DescribeGroups", "DescribeGroups g", "DescribeGroups g-busy")

	// ListGroups: Describe on the cluster lists all, else the groups the
	// principal may Describe.
	listed := func(p string) []string {
		var out []string
		for _, g := range h.must(p, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse).Groups {
			out = append(out, g.Group)
		}
		return out
	}
	if got := listed(alice); !slices.Equal(got, []string{"g"}) {
		t.Errorf("ListGroups as alice: %v", got)
	}
	if got := listed("User:admin"); !slices.Equal(got, []string{"g", "g-denied"}) {
		t.Errorf("ListGroups with Describe on the cluster: %v", got)
	}

	// DeleteGroups: Delete per distinct group.
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g", "g-denied", "g"}
	gotDel := map[string]int16{}
	for _, g := range h.must(alice, del).(*kmsg.DeleteGroupsResponse).Groups {
		gotDel[g.Group] = g.ErrorCode
	}
	wantCodeMap(t, "DeleteGroups", gotDel, map[string]int16{"g": 0, "g-denied": gaf})
	h.reached("DeleteGroups", "DeleteGroups g")

	// OffsetDelete: Delete on the group, then Read per topic.
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "g-denied"
	od.Topics = twoTopics(func(topic string) kmsg.OffsetDeleteRequestTopic {
		return kmsg.OffsetDeleteRequestTopic{Topic: topic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}
	})
	if r := h.must(alice, od).(*kmsg.OffsetDeleteResponse); r.ErrorCode != gaf || len(r.Topics) != 0 {
		t.Errorf("OffsetDelete denied group: %+v", r)
	}
	h.reached("OffsetDelete denied group")
	od.Group = "g"
	wantCodeMap(t, "OffsetDelete", codes(h.must(alice, od).(*kmsg.OffsetDeleteResponse).Topics,
		func(t kmsg.OffsetDeleteResponseTopic, add func(string, int32, int16)) {
			for _, p := range t.Partitions {
				add(t.Topic, p.Partition, p.ErrorCode)
			}
		}), map[string]int16{"open-0": 0, "secret-0": taf})
	h.reached("OffsetDelete", "OffsetDelete g", "OffsetDelete g open")
}

// TestAuthorizedOperationsWithoutAuthorizer: without an authorizer every
// supported operation is reported, as Kafka does.
func TestAuthorizedOperationsWithoutAuthorizer(t *testing.T) {
	h := newAuthzHarness(t, nil)
	h.a.authorizer = nil
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups, dg.IncludeAuthorizedOperations = 5, []string{"g"}, true
	if r := h.must(alice, dg).(*kmsg.DescribeGroupsResponse); r.Groups[0].AuthorizedOperations != opBits(opRead, opDescribe, opDelete) {
		t.Errorf("group operations: %d", r.Groups[0].AuthorizedOperations)
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	want := opBits(opCreate, opClusterA, opDescCfg, opAlterCfg, kmsg.ACLOperationIdempotentWrite, opAlter, opDescribe)
	if r := h.must(alice, dc).(*kmsg.DescribeClusterResponse); r.ClusterAuthorizedOperations != want {
		t.Errorf("cluster operations: %d, want %d", r.ClusterAuthorizedOperations, want)
	}
}

// TestAuthorizeAdmin: topic administration needs Create (cluster or
// topic), Delete, Alter or the config operations on the topic; broker
// configs, elections and reassignments need the cluster operation; the
// cluster's authorized operations are the principal's.
func TestAuthorizeAdmin(t *testing.T) {
	h := newAuthzHarness(t, nil)
	h.acls.grant(alice, opCreate, rtTopic, "t-alice", "t-blind")
	h.acls.grant(alice, opDescCfg, rtTopic, "t-alice", "open")
	h.acls.grant(alice, opDelete, rtTopic, "open")
	h.acls.grant(alice, opAlter, rtTopic, "open")
	h.acls.grant(alice, opAlterCfg, rtTopic, "open")
	h.acls.grant("User:admin", opCreate, rtCluster, clusterResource)
	for _, op := range []kmsg.ACLOperation{opAlter, opDescribe, opDescCfg, opAlterCfg} {
		h.acls.grant("User:admin", op, rtCluster, clusterResource)
	}
	taf, caf := kerr.TopicAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code

	// CreateTopics.
	ct := createReq(0, true, topicReq("t-alice", 1, 1), topicReq("t-blind", 1, 1), topicReq("t-other", 1, 1))
	ct.Version = 5
	got := map[string]string{}
	for _, rt := range h.must(alice, ct).(*kmsg.CreateTopicsResponse).Topics {
		got[rt.Topic] = fmt.Sprintf("%d %q cfg=%d n=%d configs=%v", rt.ErrorCode, deref(rt.ErrorMessage), rt.ConfigErrorCode, rt.NumPartitions, len(rt.Configs) > 0)
	}
	want := map[string]string{
		"t-alice": "0 \"<nil>\" cfg=0 n=1 configs=true",
		"t-blind": fmt.Sprintf("0 \"<nil>\" cfg=%d n=-1 configs=false", taf),
		"t-other": fmt.Sprintf("%d \"Authorization failed.\" cfg=%d n=-1 configs=false", taf, taf),
	}
	if !maps.Equal(got, want) {
		t.Errorf("CreateTopics as alice:\n got %v\nwant %v", got, want)
	}
	if r := h.must("User:admin", createReq(0, true, topicReq("t-other", 1, 1))).(*kmsg.CreateTopicsResponse); r.Topics[0].ErrorCode != 0 {
		t.Errorf("CreateTopics with Create on the cluster: %d", r.Topics[0].ErrorCode)
	}

	// CreatePartitions: Alter per topic.
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.ValidateOnly = true
	cp.Topics = twoTopics(func(topic string) kmsg.CreatePartitionsRequestTopic {
		return kmsg.CreatePartitionsRequestTopic{Topic: topic, Count: 2}
	})
	gotCP := map[string]string{}
	for _, rt := range h.must(alice, cp).(*kmsg.CreatePartitionsResponse).Topics {
		gotCP[rt.Topic] = fmt.Sprintf("%d %q", rt.ErrorCode, deref(rt.ErrorMessage))
	}
	if want := map[string]string{"open": "0 \"<nil>\"", "secret": fmt.Sprintf("%d \"The topic authorization is failed.\"", taf)}; !maps.Equal(gotCP, want) {
		t.Errorf("CreatePartitions: %v, want %v", gotCP, want)
	}

	// DeleteTopics: Delete per topic; by id, a topic the principal may
	// not Describe keeps its name secret.
	h.zk.mu.Lock()
	sec := h.zk.topics["secret"]
	sec.TopicID = encodeTopicID([16]byte{9})
	h.zk.topics["secret"] = sec
	h.zk.mu.Unlock()
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version, dt.TopicNames, dt.TimeoutMillis = 4, []string{"open", "secret"}, 0
	gotDel := map[string]int16{}
	for _, rt := range h.must(alice, dt).(*kmsg.DeleteTopicsResponse).Topics {
		gotDel[deref(rt.Topic)] = rt.ErrorCode
	}
	wantCodeMap(t, "DeleteTopics", gotDel, map[string]int16{"open": 0, "secret": taf})
	h.zk.mu.Lock()
	marked := maps.Clone(h.zk.marked)
	h.zk.mu.Unlock()
	if !marked["open"] || marked["secret"] {
		t.Errorf("marked for deletion: %v", marked)
	}
	dt6 := kmsg.NewPtrDeleteTopicsRequest()
	dt6.Version, dt6.TimeoutMillis = 6, 0
	dt6.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: [16]byte{9}}}
	if r := h.must(alice, dt6).(*kmsg.DeleteTopicsResponse).Topics[0]; r.ErrorCode != taf || r.Topic != nil {
		t.Errorf("DeleteTopics by id without Describe: code %d name %v", r.ErrorCode, deref(r.Topic))
	}

	// DescribeConfigs, AlterConfigs, IncrementalAlterConfigs: the config
	// operation on the topic, or on the cluster for a broker.
	dc := kmsg.NewPtrDescribeConfigsRequest()
	for _, res := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "open"}, {kmsg.ConfigResourceTypeTopic, "secret"}, {kmsg.ConfigResourceTypeBroker, "1"}} {
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = res.typ, res.name
		dc.Resources = append(dc.Resources, rr)
	}
	describeConfigs := func(p string) map[string]string {
		out := map[string]string{}
		for _, rr := range h.must(p, dc).(*kmsg.DescribeConfigsResponse).Resources {
			out[rr.ResourceName] = fmt.Sprintf("%d %q %v", rr.ErrorCode, deref(rr.ErrorMessage), len(rr.Configs) > 0)
		}
		return out
	}
	if got, want := describeConfigs(alice), map[string]string{
		"open":   "0 \"<nil>\" true",
		"secret": fmt.Sprintf("%d %q false", taf, topicAuthorizationFailedMessage),
		"1":      fmt.Sprintf("%d %q false", caf, clusterAuthorizationFailedMessage),
	}; !maps.Equal(got, want) {
		t.Errorf("DescribeConfigs as alice: %v, want %v", got, want)
	}
	if got := describeConfigs("User:admin")["1"]; got != "0 \"<nil>\" true" {
		t.Errorf("DescribeConfigs of the broker with DescribeConfigs on the cluster: %s", got)
	}
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.ValidateOnly = true
	for _, res := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, "open"}, {kmsg.ConfigResourceTypeTopic, "secret"}, {kmsg.ConfigResourceTypeBroker, "1"}} {
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = res.typ, res.name
		ac.Resources = append(ac.Resources, rr)
	}
	gotAC := map[string]string{}
	for _, rr := range h.must(alice, ac).(*kmsg.AlterConfigsResponse).Resources {
		gotAC[rr.ResourceName] = fmt.Sprintf("%d %v", rr.ErrorCode, rr.ErrorMessage == nil)
	}
	if want := map[string]string{"open": "0 true", "secret": fmt.Sprintf("%d true", taf), "1": fmt.Sprintf("%d true", caf)}; !maps.Equal(gotAC, want) {
		t.Errorf("AlterConfigs as alice: %v, want %v", gotAC, want)
	}
	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac.ValidateOnly = true
	for _, name := range []string{"open", "secret"} {
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, name
		iac.Resources = append(iac.Resources, rr)
	}
	rrs := h.must(alice, iac).(*kmsg.IncrementalAlterConfigsResponse).Resources
	if len(rrs) != 2 || rrs[0].ErrorCode != 0 || rrs[1].ErrorCode != taf {
		t.Errorf("IncrementalAlterConfigs: %+v", rrs)
	}

	// Elections and reassignments: the cluster operation before the
	// controller check (the fake controller answers NOT_CONTROLLER).
	el := kmsg.NewPtrElectLeadersRequest()
	el.Version = 2
	el.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "open", Partitions: []int32{0}}}
	if r := h.must(alice, el).(*kmsg.ElectLeadersResponse); r.ErrorCode != caf || len(r.Topics) != 1 ||
		r.Topics[0].Partitions[0].ErrorCode != caf || r.Topics[0].Partitions[0].ErrorMessage != nil {
		t.Errorf("ElectLeaders denied: %+v", r)
	}
	if r := h.must("User:admin", el).(*kmsg.ElectLeadersResponse); r.ErrorCode != kerr.NotController.Code {
		t.Errorf("ElectLeaders with Alter on the cluster: %d", r.ErrorCode)
	}
	apr := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	apr.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "open", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{1}}}}}
	if r := h.must(alice, apr).(*kmsg.AlterPartitionAssignmentsResponse); r.ErrorCode != caf || r.Topics[0].Partitions[0].ErrorCode != caf {
		t.Errorf("AlterPartitionReassignments denied: %+v", r)
	}
	if r := h.must("User:admin", apr).(*kmsg.AlterPartitionAssignmentsResponse); r.ErrorCode != kerr.NotController.Code {
		t.Errorf("AlterPartitionReassignments with Alter on the cluster: %d", r.ErrorCode)
	}
	lpr := kmsg.NewPtrListPartitionReassignmentsRequest()
	if r := h.must(alice, lpr).(*kmsg.ListPartitionReassignmentsResponse); r.ErrorCode != caf {
		t.Errorf("ListPartitionReassignments denied: %d", r.ErrorCode)
	}
	if r := h.must("User:admin", lpr).(*kmsg.ListPartitionReassignmentsResponse); r.ErrorCode != kerr.NotController.Code {
		t.Errorf("ListPartitionReassignments with Describe on the cluster: %d", r.ErrorCode)
	}

	// DescribeCluster: the principal's cluster operations, 0 without
	// Describe, −2^31 when not requested.
	dcl := kmsg.NewPtrDescribeClusterRequest()
	if r := h.must(alice, dcl).(*kmsg.DescribeClusterResponse); r.ClusterAuthorizedOperations != authorizedOperationsOmitted {
		t.Errorf("DescribeCluster, not requested: %d", r.ClusterAuthorizedOperations)
	}
	dcl.IncludeClusterAuthorizedOperations = true
	if r := h.must(alice, dcl).(*kmsg.DescribeClusterResponse); r.ClusterAuthorizedOperations != 0 {
		t.Errorf("DescribeCluster without Describe: %d", r.ClusterAuthorizedOperations)
	}
	if r, want := h.must("User:admin", dcl).(*kmsg.DescribeClusterResponse), opBits(opCreate, opAlter, opDescribe, opDescCfg, opAlterCfg); r.ClusterAuthorizedOperations != want {
		t.Errorf("DescribeCluster as admin: %d, want %d", r.ClusterAuthorizedOperations, want)
	}
}

// FuzzAuthorizedRequests feeds arbitrary request bodies of the keys whose
// checks authz.go and the handlers make, decoded by kmsg at every
// advertised version, to the request path with a scripted authorizer that
// allows some resources and denies the rest. Invariants: no handler
// panics on client input (Handle turns a panic into an error containing
// "panic"), a response has the request's version and encodes, and a
// denied topic never reaches the fakes behind the request path.
func FuzzAuthorizedRequests(f *testing.F) {
	seed := func(req kmsg.Request) { f.Add(req.Key(), req.GetVersion(), req.AppendTo(nil)) }
	prod := kmsg.NewPtrProduceRequest()
	prod.Version, prod.Acks = 9, -1
	prod.Topics = twoTopics(func(topic string) kmsg.ProduceRequestTopic {
		return kmsg.ProduceRequestTopic{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Records: transactionalBatchHeader()}}}
	})
	seed(prod)
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 12
	fetch.Topics = twoTopics(func(topic string) kmsg.FetchRequestTopic {
		return kmsg.FetchRequestTopic{Topic: topic, Partitions: []kmsg.FetchRequestTopicPartition{kmsg.NewFetchRequestTopicPartition()}}
	})
	seed(fetch)
	md := kmsg.NewPtrMetadataRequest()
	md.Version, md.IncludeTopicAuthorizedOperations, md.IncludeClusterAuthorizedOperations = 10, true, true
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("open")}, {Topic: kmsg.StringPtr("secret")}, {Topic: kmsg.StringPtr("new")}}
	seed(md)
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 8
	of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g"}, {Group: "g-denied", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "secret", Partitions: []int32{0}}}}}
	seed(of)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group = 8, "g"
	oc.Topics = twoTopics(func(topic string) kmsg.OffsetCommitRequestTopic {
		return kmsg.OffsetCommitRequestTopic{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{kmsg.NewOffsetCommitRequestTopicPartition()}}
	})
	seed(oc)
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups, dg.IncludeAuthorizedOperations = 5, []string{"g", "g-denied"}, true
	seed(dg)
	lai := kmsg.NewPtrLeaderAndISRRequest()
	lai.Version = 5
	seed(lai)
	seed(kmsg.NewPtrStopReplicaRequest())
	ct := createReq(0, true, topicReq("open-2", 1, 1), topicReq("secret-2", 1, 1))
	ct.Version = 7
	seed(ct)
	el := kmsg.NewPtrElectLeadersRequest()
	el.Version = 2
	seed(el)

	h := newAuthzHarness(f, nil)
	h.acls.grant(alice, opWrite, rtTopic, "open")
	h.acls.grant(alice, opRead, rtTopic, "open")
	h.acls.grant(alice, opDescribe, rtTopic, "open", "new")
	h.acls.grant(alice, opCreate, rtTopic, "open-2")
	h.acls.grant(alice, opRead, rtGroup, "g")
	h.acls.grant(alice, opDescribe, rtGroup, "g")
	fuzzed := map[int16]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true, 11: true,
		12: true, 13: true, 14: true, 15: true, 16: true, 19: true, 20: true, 21: true, 23: true, 32: true, 33: true, 37: true,
		42: true, 43: true, 44: true, 45: true, 46: true, 47: true, 60: true}
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		minV, maxV, ok := h.a.Versions(key)
		if !fuzzed[key] || !ok || version < minV || version > maxV {
			return
		}
		req := kmsg.RequestForKey(key)
		req.SetVersion(version)
		if err := req.ReadFrom(body); err != nil {
			return
		}
		switch r := req.(type) {
		case *kmsg.CreateTopicsRequest:
			r.TimeoutMillis = 0
		case *kmsg.DeleteTopicsRequest:
			r.TimeoutMillis = 0
		case *kmsg.CreatePartitionsRequest:
			r.TimeoutMillis = 0
		case *kmsg.FetchRequest:
			r.MaxWaitMillis = 0
		}
		resp, err := h.send(alice, req)
		if err != nil {
			if strings.Contains(err.Error(), "panic") {
				t.Fatalf("handler panicked: %v", err)
			}
			return
		}
		if resp != nil && resp.GetVersion() != version {
			t.Fatalf("response version %d for request version %d", resp.GetVersion(), version)
		}
		if resp != nil {
			_ = resp.AppendTo(nil)
		}
		for _, c := range h.log.take() {
			if strings.Contains(c, " secret") && !strings.HasPrefix(c, "OffsetFetch") {
				t.Fatalf("a denied topic reached the fakes: %s", c)
			}
		}
	})
}

// TestNoAuthorizerCostsNoAllocation: without an authorizer the per-topic
// checker is nil and its decisions allocate nothing, so the data path pays
// nothing for the checks.
func TestNoAuthorizerCostsNoAllocation(t *testing.T) {
	h := newAuthzHarness(t, nil)
	h.a.authorizer = nil
	r := &request{net: &network.Request{}, body: kmsg.NewPtrProduceRequest()}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c := h.a.topicChecker(ctx, r, opWrite)
		if !c.allowed("open") || !c.allowed("secret") || !h.a.authorize(ctx, r, opClusterA, rtCluster, clusterResource) {
			t.Fatal("denied without an authorizer")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request without an authorizer", allocs)
	}
}
