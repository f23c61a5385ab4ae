package metadata

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func metaReq(v int16, topics ...string) *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = v
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = str(tp)
		r.Topics = append(r.Topics, rt)
	}
	return r
}

// fixture: brokers 1, 2 on PLAINTEXT and INTERNAL, 3 on INTERNAL only;
// topic a has partitions covering every leader situation.
func fixture() *Cache {
	c := New(1, "cluster-x")
	c.Update(umr(8, 2, threeBrokers,
		part{topic: "a", id: idA, p: 0, leader: 1, epoch: 5, isr: []int32{1, 2}, replicas: []int32{1, 2}},
		part{topic: "a", id: idA, p: 1, leader: 3, epoch: 1, isr: []int32{3, 1}, replicas: []int32{3, 1}},                   // leader lacks PLAINTEXT
		part{topic: "a", id: idA, p: 2, leader: -1, epoch: 2, isr: []int32{}, replicas: []int32{2}},                         // no leader
		part{topic: "a", id: idA, p: 3, leader: 4, epoch: 3, isr: []int32{4}, replicas: []int32{4, 1}},                      // leader dead
		part{topic: "a", id: idA, p: 4, leader: 1, epoch: 4, isr: []int32{1}, replicas: []int32{1, 4}, offline: []int32{4}}, // replica dead
		part{topic: "__consumer_offsets", id: idB, p: 0, leader: 2, epoch: 0, isr: []int32{2}, replicas: []int32{2}},
	))
	return c
}

type pexp struct {
	code     int16
	leader   int32
	epoch    int32
	replicas []int32
}

func partsOf(t kmsg.MetadataResponseTopic) []pexp {
	var out []pexp
	for _, p := range t.Partitions {
		out = append(out, pexp{p.ErrorCode, p.Leader, p.LeaderEpoch, p.Replicas})
	}
	return out
}

func names(r *kmsg.MetadataResponse) []string {
	var out []string
	for _, t := range r.Topics {
		if t.Topic == nil {
			out = append(out, "<nil>")
		} else {
			out = append(out, *t.Topic)
		}
	}
	return out
}

// roundTrip encodes the response at its version and decodes it again, so
// every table case also proves the response is encodable as built.
func roundTrip(t *testing.T, r *kmsg.MetadataResponse) *kmsg.MetadataResponse {
	t.Helper()
	back := kmsg.NewPtrMetadataResponse()
	back.Version = r.Version
	if err := back.ReadFrom(r.AppendTo(nil)); err != nil {
		t.Fatalf("v%d response does not decode: %v", r.Version, err)
	}
	return back
}

func TestMetadataResponseTopicsSelection(t *testing.T) {
	c := fixture()
	cases := []struct {
		name string
		req  *kmsg.MetadataRequest
		want []string
	}{
		{"v0 empty list is all", metaReq(0), []string{"__consumer_offsets", "a"}},
		{"v1 null is all", &kmsg.MetadataRequest{Version: 1}, []string{"__consumer_offsets", "a"}},
		{"v1 empty is none", &kmsg.MetadataRequest{Version: 1, Topics: []kmsg.MetadataRequestTopic{}}, nil},
		{"v12 null is all", &kmsg.MetadataRequest{Version: 12}, []string{"__consumer_offsets", "a"}},
		{"requested order, duplicates once", metaReq(4, "zz", "a", "zz"), []string{"zz", "a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := names(roundTrip(t, c.MetadataResponse(tc.req, "PLAINTEXT")))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("topics %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMetadataResponsePartitionErrors(t *testing.T) {
	c := fixture()
	lna, lnf, rna := kerr.LeaderNotAvailable.Code, kerr.ListenerNotFound.Code, kerr.ReplicaNotAvailable.Code
	cases := []struct {
		v    int16
		want []pexp
	}{
		// v0 filters replicas to those alive on the listener and reports
		// REPLICA_NOT_AVAILABLE; leader epoch is not on the wire before v7.
		{0, []pexp{{0, 1, -1, []int32{1, 2}}, {lna, -1, -1, []int32{1}}, {lna, -1, -1, []int32{2}}, {lna, -1, -1, []int32{1}}, {rna, 1, -1, []int32{1}}}},
		{5, []pexp{{0, 1, -1, []int32{1, 2}}, {lna, -1, -1, []int32{3, 1}}, {lna, -1, -1, []int32{2}}, {lna, -1, -1, []int32{4, 1}}, {0, 1, -1, []int32{1, 4}}}},
		{6, []pexp{{0, 1, -1, []int32{1, 2}}, {lnf, -1, -1, []int32{3, 1}}, {lna, -1, -1, []int32{2}}, {lna, -1, -1, []int32{4, 1}}, {0, 1, -1, []int32{1, 4}}}},
		{7, []pexp{{0, 1, 5, []int32{1, 2}}, {lnf, -1, 1, []int32{3, 1}}, {lna, -1, 2, []int32{2}}, {lna, -1, 3, []int32{4, 1}}, {0, 1, 4, []int32{1, 4}}}},
		{12, []pexp{{0, 1, 5, []int32{1, 2}}, {lnf, -1, 1, []int32{3, 1}}, {lna, -1, 2, []int32{2}}, {lna, -1, 3, []int32{4, 1}}, {0, 1, 4, []int32{1, 4}}}},
	}
	for _, tc := range cases {
		resp := roundTrip(t, c.MetadataResponse(metaReq(tc.v, "a"), "PLAINTEXT"))
		if got := partsOf(resp.Topics[0]); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("v%d partitions\n got %v\nwant %v", tc.v, got, tc.want)
		}
	}
	// On the INTERNAL listener broker 3 is reachable: a-1 is fine.
	resp := c.MetadataResponse(metaReq(12, "a"), "INTERNAL")
	if p := resp.Topics[0].Partitions[1]; p.ErrorCode != 0 || p.Leader != 3 {
		t.Fatalf("INTERNAL a-1: %+v", p)
	}
	if len(resp.Brokers) != 3 {
		t.Fatalf("INTERNAL brokers %v", resp.Brokers)
	}
	if off := c.MetadataResponse(metaReq(12, "a"), "PLAINTEXT").Topics[0].Partitions[4].OfflineReplicas; !reflect.DeepEqual(off, []int32{4}) {
		t.Fatalf("offline replicas %v", off)
	}
}

func TestMetadataResponseTopLevel(t *testing.T) {
	c := fixture()
	for _, v := range []int16{0, 1, 2, 4, 8, 9, 12} {
		resp := roundTrip(t, c.MetadataResponse(metaReq(v), "PLAINTEXT"))
		var ids []int32
		for _, b := range resp.Brokers {
			ids = append(ids, b.NodeID)
			if b.NodeID == 1 && b.Host != "h1" {
				t.Errorf("v%d broker 1 host %q", v, b.Host)
			}
			if b.NodeID == 1 && v >= 1 && (b.Rack == nil || *b.Rack != "r1") {
				t.Errorf("v%d broker 1 rack %v", v, b.Rack)
			}
		}
		if !reflect.DeepEqual(ids, []int32{1, 2}) {
			t.Errorf("v%d brokers %v (broker 3 has no PLAINTEXT endpoint)", v, ids)
		}
		if v >= 1 && resp.ControllerID != 2 {
			t.Errorf("v%d controller %d", v, resp.ControllerID)
		}
		if v >= 2 && (resp.ClusterID == nil || *resp.ClusterID != "cluster-x") {
			t.Errorf("v%d cluster id %v", v, resp.ClusterID)
		}
		if v >= 1 {
			for _, tp := range resp.Topics {
				if tp.IsInternal != (*tp.Topic == "__consumer_offsets") {
					t.Errorf("v%d is_internal of %s = %v", v, *tp.Topic, tp.IsInternal)
				}
			}
		}
		if v >= 10 {
			if resp.Topics[1].TopicID != idA {
				t.Errorf("v%d topic id %v", v, resp.Topics[1].TopicID)
			}
		}
		if v >= 8 && resp.Topics[0].AuthorizedOperations != AuthorizedOperationsOmitted {
			t.Errorf("v%d topic authorized operations %d without request", v, resp.Topics[0].AuthorizedOperations)
		}
	}
	// An empty cache knows no controller.
	if id := New(1, "").MetadataResponse(metaReq(1), "PLAINTEXT").ControllerID; id != -1 {
		t.Fatalf("controller %d", id)
	}
	if cid := New(1, "").MetadataResponse(metaReq(2), "PLAINTEXT").ClusterID; cid != nil {
		t.Fatalf("cluster id %q for an unknown id", *cid)
	}
}

func TestMetadataResponseAuthorizedOperations(t *testing.T) {
	c := fixture()
	r := metaReq(8, "a")
	r.IncludeClusterAuthorizedOperations, r.IncludeTopicAuthorizedOperations = true, true
	resp := roundTrip(t, c.MetadataResponse(r, "PLAINTEXT"))
	if resp.AuthorizedOperations != 8096 || resp.Topics[0].AuthorizedOperations != 3576 {
		t.Fatalf("cluster ops %d topic ops %d", resp.AuthorizedOperations, resp.Topics[0].AuthorizedOperations)
	}
	r.Version = 11 // cluster operations dropped from v11
	resp = c.MetadataResponse(r, "PLAINTEXT")
	if resp.AuthorizedOperations != AuthorizedOperationsOmitted || resp.Topics[0].AuthorizedOperations != 3576 {
		t.Fatalf("v11 cluster ops %d topic ops %d", resp.AuthorizedOperations, resp.Topics[0].AuthorizedOperations)
	}
}

func TestMetadataResponseTopicErrors(t *testing.T) {
	c := fixture()
	c.MarkCreating("coming")
	long := make([]byte, 250)
	for i := range long {
		long[i] = 'x'
	}
	cases := []struct {
		topic string
		code  int16
	}{
		{"unknown", kerr.UnknownTopicOrPartition.Code},
		{"bad name", kerr.InvalidTopicException.Code},
		{"..", kerr.InvalidTopicException.Code},
		{"", kerr.InvalidTopicException.Code},
		{string(long), kerr.InvalidTopicException.Code},
		{"coming", kerr.LeaderNotAvailable.Code},
		{"a", 0},
	}
	for _, v := range []int16{0, 4, 9, 12} {
		for _, tc := range cases {
			resp := roundTrip(t, c.MetadataResponse(metaReq(v, tc.topic), "PLAINTEXT"))
			tp := resp.Topics[0]
			if tp.ErrorCode != tc.code || *tp.Topic != tc.topic {
				t.Errorf("v%d %q: code %d, want %d", v, tc.topic, tp.ErrorCode, tc.code)
			}
			if tc.code != 0 && len(tp.Partitions) != 0 {
				t.Errorf("v%d %q: partitions on an error topic", v, tc.topic)
			}
		}
	}
}

func TestMetadataResponseTopicIDs(t *testing.T) {
	c := fixture()
	byID := func(v int16, id [16]byte, name *string) *kmsg.MetadataRequest {
		r := kmsg.NewPtrMetadataRequest()
		r.Version = v
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID, rt.Topic = id, name
		r.Topics = []kmsg.MetadataRequestTopic{rt}
		return r
	}
	// v12: by id.
	resp := roundTrip(t, c.MetadataResponse(byID(12, idA, nil), "PLAINTEXT"))
	if tp := resp.Topics[0]; tp.ErrorCode != 0 || *tp.Topic != "a" || tp.TopicID != idA || len(tp.Partitions) != 5 {
		t.Fatalf("v12 by id: %+v", tp)
	}
	resp = roundTrip(t, c.MetadataResponse(byID(12, [16]byte{9}, nil), "PLAINTEXT"))
	if tp := resp.Topics[0]; tp.ErrorCode != kerr.UnknownTopicID.Code || tp.Topic != nil || tp.TopicID != [16]byte{9} {
		t.Fatalf("v12 unknown id: %+v", tp)
	}
	// v10/v11: ids are not honoured → INVALID_REQUEST.
	for _, v := range []int16{10, 11} {
		resp = roundTrip(t, c.MetadataResponse(byID(v, idA, str("a")), "PLAINTEXT"))
		if tp := resp.Topics[0]; tp.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("v%d with id: %+v", v, tp)
		}
	}
}

func TestMissingTopics(t *testing.T) {
	c := fixture()
	c.MarkCreating("coming")
	got := c.MissingTopics(metaReq(4, "a", "new1", "bad name", "new1", "coming", "new2"))
	if !reflect.DeepEqual(got, []string{"new1", "new2"}) {
		t.Fatalf("missing %v", got)
	}
	if got := c.MissingTopics(metaReq(0)); got != nil {
		t.Fatalf("all-topics request: %v", got)
	}
	if got := c.MissingTopics(&kmsg.MetadataRequest{Version: 1}); got != nil {
		t.Fatalf("v1 null: %v", got)
	}
}

func TestValidTopicName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "A.b_c-9": true, ".": false, "..": false, "...": true, "": false,
		"a/b": false, "é": false, string(make([]byte, 249)): false,
	} {
		if got := ValidTopicName(name); got != want {
			t.Errorf("%q: %v", name, got)
		}
	}
	ok249 := make([]byte, 249)
	for i := range ok249 {
		ok249[i] = 'a'
	}
	if !ValidTopicName(string(ok249)) || ValidTopicName(string(ok249)+"a") {
		t.Fatal("length limit is 249")
	}
}
