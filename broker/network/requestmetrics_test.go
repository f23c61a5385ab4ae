package network

import (
	"context"
	"testing"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type versionsOnly struct{}

func (versionsOnly) Handle(context.Context, *Request) (kmsg.Response, error) { return nil, nil }
func (versionsOnly) Versions(key int16) (int16, int16, bool)                 { return 0, 12, key <= 3 }

// Recording a request's metrics allocates nothing once its version's
// meter exists; a follower's fetch is FetchFollower, a consumer's
// FetchConsumer, and names follow Kafka's spelling.
func TestRequestMetricsRecordAllocFree(t *testing.T) {
	r := gometrics.NewRegistry()
	rm := newRequestMetrics(r, versionsOnly{})
	fetch := &kmsg.FetchRequest{ReplicaID: 2}
	req := &Request{Key: 1, Version: 12, Body: fetch, Received: time.Now()}
	if am := rm.forRequest(req); am == nil || am.name != "FetchFollower" {
		t.Fatalf("follower fetch metrics %+v", am)
	}
	fetch.ReplicaID = -1
	am := rm.forRequest(req)
	if am.name != "FetchConsumer" {
		t.Fatalf("consumer fetch metrics %q", am.name)
	}
	var times requestTimes
	now := time.Now()
	am.record(r, req, 100, &times, now, now, now, now) // creates the version meter
	if n := testing.AllocsPerRun(100, func() {
		am.record(r, req, 100, &times, now, now, now, now)
	}); n != 0 {
		t.Errorf("record allocates %v times per request", n)
	}
	if r.Get("kafka.network.RequestMetrics.RequestsPerSec.request=FetchConsumer.version=12") == nil {
		t.Error("no RequestsPerSec meter for FetchConsumer v12")
	}
	if KafkaAPIName(4) != "LeaderAndIsr" || KafkaAPIName(22) != "InitProducerId" || KafkaAPIName(0) != "Produce" {
		t.Errorf("names %q %q %q", KafkaAPIName(4), KafkaAPIName(22), KafkaAPIName(0))
	}
}

// ErrorsPerSec counts every error code of a response, NONE included, under
// the API's name (Fetch for both fetch kinds), with Kafka 2.8's error
// names, and counting allocates nothing once a code's meter exists.
func TestErrorsPerSec(t *testing.T) {
	r := gometrics.NewRegistry()
	rm := newRequestMetrics(r, versionsOnly{})
	count := func(request, errName string) int64 {
		t.Helper()
		m, ok := r.Get("kafka.network.RequestMetrics.ErrorsPerSec.request=" + request + ".error=" + errName).(gometrics.Meter)
		if !ok {
			return -1
		}
		return m.Count()
	}
	produce := rm.forRequest(&Request{Key: 0})
	pr := &kmsg.ProduceResponse{Topics: []kmsg.ProduceResponseTopic{{Partitions: []kmsg.ProduceResponseTopicPartition{
		{ErrorCode: 0}, {ErrorCode: 0}, {ErrorCode: 6}}}}}
	produce.recordErrors(r, pr)
	if n := count("Produce", "NONE"); n != 2 {
		t.Errorf("Produce NONE %d, want 2", n)
	}
	if n := count("Produce", "NOT_LEADER_OR_FOLLOWER"); n != 1 {
		t.Errorf("Produce NOT_LEADER_OR_FOLLOWER %d, want 1", n)
	}
	// Metadata goes through the reflective walk: topic and partition codes.
	md := rm.forRequest(&Request{Key: 3})
	mr := &kmsg.MetadataResponse{Topics: []kmsg.MetadataResponseTopic{
		{ErrorCode: 3}, {Partitions: []kmsg.MetadataResponseTopicPartition{{ErrorCode: 0}, {ErrorCode: 5}}}}}
	md.recordErrors(r, mr)
	if a, b, c := count("Metadata", "UNKNOWN_TOPIC_OR_PARTITION"), count("Metadata", "NONE"), count("Metadata", "LEADER_NOT_AVAILABLE"); a != 1 || b != 2 || c != 1 {
		t.Errorf("Metadata counts %d %d %d, want 1 2 1", a, b, c)
	}
	follower := rm.forRequest(&Request{Key: 1, Body: &kmsg.FetchRequest{ReplicaID: 1}})
	follower.recordErrors(r, &kmsg.FetchResponse{Topics: []kmsg.FetchResponseTopic{{Partitions: []kmsg.FetchResponseTopicPartition{{ErrorCode: 1}}}}})
	if a, b := count("Fetch", "NONE"), count("Fetch", "OFFSET_OUT_OF_RANGE"); a != 1 || b != 1 {
		t.Errorf("Fetch NONE %d OFFSET_OUT_OF_RANGE %d, want 1 1", a, b)
	}
	if count("FetchFollower", "NONE") != -1 {
		t.Error("errors counted under FetchFollower; Kafka counts them under Fetch")
	}
	if n := testing.AllocsPerRun(100, func() {
		produce.recordErrors(r, pr)
		md.recordErrors(r, mr)
	}); n != 0 {
		t.Errorf("recordErrors allocates %v times per response", n)
	}
	if KafkaErrorName(-1) != "UNKNOWN_SERVER_ERROR" || KafkaErrorName(300) != "UNKNOWN_SERVER_ERROR" || KafkaErrorName(104) != "INCONSISTENT_CLUSTER_ID" {
		t.Errorf("names %q %q %q", KafkaErrorName(-1), KafkaErrorName(300), KafkaErrorName(104))
	}
}

// BenchmarkRequestMetricsRecord is the per-request cost of the
// RequestMetrics for one produce of one partition: the time breakdown,
// RequestsPerSec, RequestBytes and ErrorsPerSec.
func BenchmarkRequestMetricsRecord(b *testing.B) {
	r := gometrics.NewRegistry()
	rm := newRequestMetrics(r, versionsOnly{})
	req := &Request{Key: 0, Version: 8, Received: time.Now()}
	am := rm.forRequest(req)
	resp := &kmsg.ProduceResponse{Topics: []kmsg.ProduceResponseTopic{{Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}}
	var times requestTimes
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		am.record(r, req, 100, &times, now, now, now, now)
		am.recordErrors(r, resp)
	}
}
