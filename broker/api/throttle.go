package api

// Client quotas at the request edge (Kafka's KafkaApis throttling and
// RequestHandlerHelper.sendResponseMaybeThrottle): each request is
// recorded against the quotas of its user and client id; a violated quota
// answers throttle_time_ms in the response (the versions that have it)
// and mutes the connection for that long (network.Request.Throttle,
// KIP-219). The response itself goes out at once: a throttled produce is
// appended and acknowledged like any other.
//
//   - Produce (00_) records the request size against producer_byte_rate,
//     Fetch (01_) the response's size against consumer_byte_rate (and caps
//     a consumer's fetch size so it cannot exceed what the quota allows in
//     one window); both take the larger of that and the request quota.
//   - CreateTopics, CreatePartitions and DeleteTopics take partitions from
//     the controller_mutation_rate token bucket (19_, 20_, 37_), strictly
//     (THROTTLING_QUOTA_EXCEEDED) from the versions that know it.
//   - Every other request (Handle, applyRequestQuota) records its handler
//     time, less any wait for a delayed operation, as a percentage of one
//     thread against request_percentage. The requests between brokers
//     (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown,
//     WriteTxnMarkers, follower fetches) are exempt, as in Kafka.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/quota"
)

// quotaIdentity is who a request is recorded for: the sanitized user of
// its principal and its client id.
func (r *request) quotaIdentity() (user, clientID string) {
	principal := "User:ANONYMOUS"
	if r.net.Session != nil && r.net.Session.Principal != "" {
		principal = r.net.Session.Principal
	}
	return quota.UserOf(principal), r.net.ClientIDOrEmpty()
}

// exemptFromRequestQuota: Kafka's cluster actions (sendResponseExemptThrottle).
func exemptFromRequestQuota(r *request) bool {
	switch r.net.Key {
	case 4, 5, 6, 7, 27:
		return true
	case 1:
		f, ok := r.body.(*kmsg.FetchRequest)
		return ok && f.ReplicaID >= 0
	}
	return false
}

// requestThrottle records r's handler time so far against the request
// quota and returns its throttle.
func (a *Apis) requestThrottle(ctx context.Context, r *request) time.Duration {
	if a.quotas == nil || exemptFromRequestQuota(r) {
		return 0
	}
	end := time.Now()
	if local := network.LocalDoneAt(ctx); !local.IsZero() && local.Before(end) {
		end = local
	}
	percent := float64(end.Sub(r.start).Nanoseconds()) * 100 / float64(time.Second)
	user, client := r.quotaIdentity()
	return a.quotas.Request.Record(user, client, percent, time.Now())
}

// applyRequestQuota is the request quota of every key that has no quota
// of its own to combine it with (Produce and Fetch do it themselves).
func (a *Apis) applyRequestQuota(ctx context.Context, r *request, resp kmsg.Response) {
	if a.quotas == nil || r.net.Key == 0 || r.net.Key == 1 || !a.quotas.Request.Enabled() {
		return
	}
	a.throttle(r, resp, a.requestThrottle(ctx, r), a.quotas.Request)
}

// throttle answers throttle d (if any) in resp and mutes the connection
// for it, counting it in m's throttle-time. A response that already has a
// longer throttle keeps it.
func (a *Apis) throttle(r *request, resp kmsg.Response, d time.Duration, m *quota.Manager) {
	if d <= 0 {
		return
	}
	if tr, ok := resp.(kmsg.ThrottleResponse); ok {
		ms := int32(min(d.Milliseconds(), 1<<31-1))
		if cur, _ := tr.Throttle(); cur < ms {
			if st, ok := resp.(kmsg.SetThrottleResponse); ok {
				st.SetThrottle(ms)
			}
		}
	}
	r.net.Throttle(d)
	user, client := r.quotaIdentity()
	m.Throttled(user, client, d, time.Now())
}

// throttleMax throttles r by the larger of a bandwidth (or mutation)
// throttle of bm and the request quota's, as Kafka's produce and fetch
// paths do.
func (a *Apis) throttleMax(r *request, resp kmsg.Response, bw time.Duration, bm *quota.Manager, req time.Duration) {
	if bw > req {
		a.throttle(r, resp, bw, bm)
	} else {
		a.throttle(r, resp, req, a.quotas.Request)
	}
}

// mutationQuota is the controller mutation quota of r, strict from
// version strictSince on (nil without quotas).
func (a *Apis) mutationQuota(r *request, strictSince int16) *quota.Mutation {
	if a.quotas == nil {
		return nil
	}
	user, client := r.quotaIdentity()
	return a.quotas.NewMutation(user, client, r.net.Version >= strictSince)
}

// throttleMutations answers the throttle of q in resp.
func (a *Apis) throttleMutations(r *request, resp kmsg.Response, q *quota.Mutation) {
	if q != nil {
		a.throttle(r, resp, q.ThrottleTime(), a.quotas.ControllerMutation)
	}
}
