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
