package network

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's RequestMetrics (kafka.network:type=RequestMetrics), per request
// name: RequestsPerSec (tagged request and version), RequestBytes, and the
// time breakdown of RequestChannel.updateRequestMetrics, in milliseconds:
//
//	RequestQueueTimeMs   frame read -> handler called (decoding; Klassik has no queue)
//	LocalTimeMs          handler called -> local work done (parked in purgatory, or answered)
//	RemoteTimeMs         parked -> the delayed operation completed (acks=all, fetch long polls;
//	                     for a deferred acks=all response, until the connection's writer
//	                     found it completed, so also while earlier responses were written)
//	ResponseQueueTimeMs  handler returned -> response being written
//	ResponseSendTimeMs   writing the response
//	TotalTimeMs          frame read -> response written
//
// Fetch is split as Kafka splits it: FetchConsumer and FetchFollower
// (a fetch with a replica id ≥ 0), each also recorded under Fetch. The
// ErrorsPerSec meters are in errormetrics.go. Everything is registered up front
// except the per-version meters, created at a version's first request;
// recording takes no lock and allocates nothing.

// requestMetrics are the per-API metrics of one server.
type requestMetrics struct {
	reg           gometrics.Registry
	byKey         []*apiMetrics // by API key; nil for keys not served
	fetchFollower *apiMetrics
}

// apiMetrics are one request name's metrics.
type apiMetrics struct {
	name                                             string
	requestQueue, local, remote, responseQueue, send gometrics.Timer
	total                                            gometrics.Timer
	bytes                                            gometrics.Histogram
	// also is Fetch's own metrics for FetchConsumer and FetchFollower:
	// Kafka records a fetch under both names.
	also *apiMetrics
	// errs are the ErrorsPerSec meters of the API's name (shared by
	// Fetch, FetchConsumer and FetchFollower).
	errs *errorMeters
	// versions holds RequestsPerSec per version, created on first use.
	versions [maxVersions]atomic.Pointer[gometrics.StandardMeter]
	mu       sync.Mutex // serialises the creation of version meters
}

const maxVersions = 32

// kafkaAPINames are Kafka's ApiKeys names where kmsg spells them
// differently (RequestMetrics tags use Kafka's spelling).
var kafkaAPINames = map[int16]string{
	4: "LeaderAndIsr", 17: "SaslHandshake", 22: "InitProducerId", 29: "DescribeAcls", 30: "CreateAcls",
	31: "DeleteAcls", 36: "SaslAuthenticate", 45: "AlterPartitionReassignments",
	50: "DescribeUserScramCredentials", 51: "AlterUserScramCredentials", 56: "AlterIsr", 67: "AllocateProducerIds",
}

// KafkaAPIName is Kafka's name of an API key (ApiKeys.name), "" if unknown.
func KafkaAPIName(key int16) string {
	if n, ok := kafkaAPINames[key]; ok {
		return n
	}
	return kmsg.NameForKey(key)
}

func newRequestMetrics(r gometrics.Registry, h Handler) *requestMetrics {
	rm := &requestMetrics{reg: r, byKey: make([]*apiMetrics, maxProbeKey+1)}
	for k := int16(0); k <= maxProbeKey; k++ {
		name := KafkaAPIName(k)
		if name == "" {
			continue
		}
		if _, _, ok := h.Versions(k); !ok && k != int16(kmsg.ApiVersions) {
			continue
		}
		if k == int16(kmsg.Fetch) {
			fetch := newAPIMetrics(r, name)
			rm.byKey[k] = newAPIMetrics(r, "FetchConsumer")
			rm.fetchFollower = newAPIMetrics(r, "FetchFollower")
			for _, am := range []*apiMetrics{rm.byKey[k], rm.fetchFollower} {
				am.also, am.errs = fetch, fetch.errs
			}
			continue
		}
		rm.byKey[k] = newAPIMetrics(r, name)
	}
	return rm
}

func newAPIMetrics(r gometrics.Registry, name string) *apiMetrics {
	const p = "kafka.network.RequestMetrics."
	tag := ".request=" + name
	timer := func(n string) gometrics.Timer { return gometrics.GetOrRegisterTimer(p+n+tag, r) }
	return &apiMetrics{
		name:          name,
		requestQueue:  timer("RequestQueueTimeMs"),
		local:         timer("LocalTimeMs"),
		remote:        timer("RemoteTimeMs"),
		responseQueue: timer("ResponseQueueTimeMs"),
		send:          timer("ResponseSendTimeMs"),
		total:         timer("TotalTimeMs"),
		bytes:         gometrics.GetOrRegisterHistogram(p+"RequestBytes"+tag, r, gometrics.NewExpDecaySample(1028, 0.015)),
		errs:          &errorMeters{name: name},
	}
}

// forRequest returns the metrics of req's name, nil when none.
func (rm *requestMetrics) forRequest(req *Request) *apiMetrics {
	if int(req.Key) >= len(rm.byKey) || req.Key < 0 {
		return nil
	}
	if req.Key == int16(kmsg.Fetch) {
		if f, ok := req.Body.(*kmsg.FetchRequest); ok && f.ReplicaID >= 0 {
			return rm.fetchFollower
		}
	}
	return rm.byKey[req.Key]
}

// requests returns the RequestsPerSec meter of version v.
func (am *apiMetrics) requests(r gometrics.Registry, v int16) gometrics.Meter {
	if v < 0 || int(v) >= maxVersions {
		return gometrics.NilMeter{}
	}
	if m := am.versions[v].Load(); m != nil {
		return m
	}
	am.mu.Lock()
	defer am.mu.Unlock()
	if m := am.versions[v].Load(); m != nil {
		return m
	}
	name := "kafka.network.RequestMetrics.RequestsPerSec.request=" + am.name + ".version=" + strconv.Itoa(int(v))
	m, ok := r.GetOrRegister(name, gometrics.NewMeter).(*gometrics.StandardMeter)
	if !ok {
		return gometrics.NilMeter{}
	}
	am.versions[v].Store(m)
	return m
}

// requestTimes are the instants of the request in flight on a connection
// (one at a time), written by the connection goroutine and the handler it
// calls.
type requestTimes struct {
	localDone time.Time
}

type requestTimesKey struct{}

// LocalDone marks the end of a request's local work: the handler is about
// to wait for a delayed operation (acks=all produce, fetch long poll).
// What follows until the handler returns is Kafka's RemoteTimeMs. Only the
// first call counts; a ctx that is not a request's is ignored.
func LocalDone(ctx context.Context) {
	if t, ok := ctx.Value(requestTimesKey{}).(*requestTimes); ok && t.localDone.IsZero() {
		t.localDone = time.Now()
	}
}

// LocalDoneAt is when the request of ctx called LocalDone (zero if it did
// not), so the handler can tell its own work from the wait for a delayed
// operation (the request quota counts only the former).
func LocalDoneAt(ctx context.Context) time.Time {
	if t, ok := ctx.Value(requestTimesKey{}).(*requestTimes); ok {
		return t.localDone
	}
	return time.Time{}
}

// record updates am for one request: read at received, handler called at
// handled, returned at returned, the response written between writeStart
// and sent.
func (am *apiMetrics) record(r gometrics.Registry, req *Request, frameLen int, t *requestTimes, handled, returned, writeStart, sent time.Time) {
	am.requests(r, req.Version).Mark(1)
	am.bytes.Update(int64(frameLen))
	localDone := t.localDone
	if localDone.IsZero() {
		localDone = returned
	}
	am.requestQueue.Update(handled.Sub(req.Received))
	am.local.Update(localDone.Sub(handled))
	am.remote.Update(returned.Sub(localDone))
	am.responseQueue.Update(writeStart.Sub(returned))
	am.send.Update(sent.Sub(writeStart))
	am.total.Update(sent.Sub(req.Received))
	if am.also != nil {
		am.also.record(r, req, frameLen, t, handled, returned, writeStart, sent)
	}
}

// recordErrors counts the error codes of the response sent (Kafka's
// updateErrorMetrics); nil resp (no response) counts nothing.
func (am *apiMetrics) recordErrors(r gometrics.Registry, resp kmsg.Response) {
	am.errs.recordErrors(r, resp)
}
