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

func (d dataFake) ProduceOrClose(_ context.Context, req *kmsg.ProduceRequest) (*kmsg.ProduceResponse, error) {
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
		return nil, nil
	}
	return resp, nil
}

// FetchAuthorized applies mayRead as the replica manager does (its own
// test covers sessions).
func (d dataFake) FetchAuthorized(_ context.Context, req *kmsg.FetchRequest, mayRead func(string) bool) (kmsg.Response, error) {
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
	t    *testing.T
	a    *Apis
	acls *aclScript
	log  *reachLog
	zk   *fakeZK
}

func newAuthzHarness(t *testing.T, props map[string]string) *authzHarness {
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
		h.reached(name+" denied")
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
		"missing": deniedEntry,
		"new":     fmt.Sprintf("code=%d parts=0 id=false internal=false ops=%d", kerr.LeaderNotAvailable.Code, opBits(opCreate, opDescribe)),
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
