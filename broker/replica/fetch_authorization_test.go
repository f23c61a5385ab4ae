package replica

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

// authorizedFetch runs FetchAuthorized and decodes the response as a client
// would.
func authorizedFetch(t *testing.T, m *Manager, req *kmsg.FetchRequest, mayRead func(string) bool) *kmsg.FetchResponse {
	t.Helper()
	raw, err := m.FetchAuthorized(context.Background(), req, mayRead)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return decodeFetch(t, raw, req.Version)
}

// byTopic maps "topic" to its first partition's answer.
func byTopic(resp *kmsg.FetchResponse) map[string]kmsg.FetchResponseTopicPartition {
	out := map[string]kmsg.FetchResponseTopicPartition{}
	for _, rt := range resp.Topics {
		out[rt.Topic] = rt.Partitions[0]
	}
	return out
}

func twoTopicFetch(opts ...fetchOpt) *kmsg.FetchRequest {
	req := fetchReq("t", 0, 0, opts...)
	u := kmsg.NewFetchRequestTopic()
	u.Topic = "u"
	u.Partitions = []kmsg.FetchRequestTopicPartition{fetchPartition(0, 0)}
	req.Topics = append(req.Topics, u)
	return req
}

func denyTopic(denied string) func(string) bool {
	return func(topic string) bool { return topic != denied }
}

// TestFetchAuthorizedInSessions: the decision is made on every request over
// the partitions it covers, those of the session for an incremental fetch,
// and leaves no trace in the session: a revoked topic answers
// TOPIC_AUTHORIZATION_FAILED at the next incremental fetch, a restored one
// returns its data again.
func TestFetchAuthorizedInSessions(t *testing.T) {
	m, _ := newT0Leader(t)
	makeLeader(t, m, "u", 0, 0)
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a"))
	produceOne(t, m, 1, "u", 0, makeBatch(1, "b"))

	resp := authorizedFetch(t, m, twoTopicFetch(func(r *kmsg.FetchRequest) { r.SessionEpoch = 0 }), nil)
	sid := resp.SessionID
	if sid == 0 || len(byTopic(resp)["u"].RecordBatches) == 0 {
		t.Fatalf("session fetch: %+v", resp)
	}
	// Nothing new for t; u is revoked: only u is answered, with the error
	// and no records.
	resp = authorizedFetch(t, m, sessionFetchReq(sid, 1, map[int32]int64{0: 1}), denyTopic("u"))
	got := byTopic(resp)
	if u, ok := got["u"]; !ok || u.ErrorCode != kerr.TopicAuthorizationFailed.Code || len(u.RecordBatches) != 0 || u.HighWatermark != -1 {
		t.Fatalf("revoked topic in an incremental fetch: %+v", resp.Topics)
	}
	if _, ok := got["t"]; ok {
		t.Fatalf("unchanged allowed partition answered: %+v", resp.Topics)
	}
	// Restored: u's data, from the fetch offset the session kept.
	resp = authorizedFetch(t, m, sessionFetchReq(sid, 2, nil), nil)
	if u := byTopic(resp)["u"]; u.ErrorCode != 0 || len(u.RecordBatches) == 0 {
		t.Fatalf("restored topic: %+v", resp.Topics)
	}
}

// TestFetchAuthorizedLongPoll: denied partitions neither end a long poll
// early nor make one wait: a fetch of only denied partitions answers at
// once, a mixed one waits for data on the allowed partition.
func TestFetchAuthorizedLongPoll(t *testing.T) {
	m, _ := newT0Leader(t)
	makeLeader(t, m, "u", 0, 0)
	long := func(r *kmsg.FetchRequest) { r.MaxWaitMillis, r.MinBytes = 60_000, 1 }

	done := make(chan *kmsg.FetchResponse, 1)
	go func() {
		raw, err := m.FetchAuthorized(context.Background(), twoTopicFetch(long), func(string) bool { return false })
		if err != nil {
			t.Error(err)
		}
		done <- decodeFetch(t, raw, 12)
	}()
	select {
	case resp := <-done:
		for topic, p := range byTopic(resp) {
			if p.ErrorCode != kerr.TopicAuthorizationFailed.Code {
				t.Errorf("%s: code %d", topic, p.ErrorCode)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a fetch of denied partitions only waited for data")
	}

	go func() {
		raw, err := m.FetchAuthorized(context.Background(), twoTopicFetch(long), denyTopic("u"))
		if err != nil {
			t.Error(err)
		}
		done <- decodeFetch(t, raw, 12)
	}()
	waitFor(t, "the mixed fetch to park", func() bool {
		return m.fetches.Watched(partitionKey(common.TopicPartition{Topic: "t", Partition: 0})) > 0
	})
	produceOne(t, m, 1, "t", 0, makeBatch(1, "a"))
	select {
	case resp := <-done:
		got := byTopic(resp)
		if len(got["t"].RecordBatches) == 0 || got["u"].ErrorCode != kerr.TopicAuthorizationFailed.Code {
			t.Fatalf("mixed long poll: %+v", resp.Topics)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the mixed fetch did not complete on new data")
	}
}
