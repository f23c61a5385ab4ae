package api

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
)

// FuzzAdminRequests feeds arbitrary request bodies, decoded by kmsg at every
// advertised version of the admin keys, to the handlers over the in-memory
// fakes. Invariants: a handler never panics on client input (Handle turns a
// panic into an error containing "panic", which fails here), and every
// request that decodes gets a response of the request's version.
func FuzzAdminRequests(f *testing.F) {
	seed := func(req kmsg.Request) {
		f.Add(req.Key(), req.GetVersion(), req.AppendTo(nil))
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 7
	ct.TimeoutMillis = 0
	ct.Topics = []kmsg.CreateTopicsRequestTopic{topicReq("t", 3, 1, "retention.ms", "1")}
	seed(ct)
	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.Version = 6
	dt.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("t")}}
	seed(dt)
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 4}}
	seed(cp)
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Version = 4
	dc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: 2, ResourceName: "t"}, {ResourceType: 4, ResourceName: "1"}}
	seed(dc)
	ia := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ia.Version = 1
	ia.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: 2, ResourceName: "t",
		Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "cleanup.policy", Op: 2, Value: kmsg.StringPtr("compact")}}}}
	seed(ia)
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Version = 2
	ac.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: 2, ResourceName: "t"}}
	seed(ac)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.AllowAutoTopicCreation = true
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("auto")}}
	seed(md)
	seed(kmsg.NewPtrInitProducerIDRequest())
	seed(kmsg.NewPtrDescribeClusterRequest())
	seed(kmsg.NewPtrApiVersionsRequest())
	seed(kmsg.NewPtrControlledShutdownRequest())

	z := newFakeZK("a", "b", "c")
	a, _ := newTestApis(f, z, nil)
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		minV, maxV, ok := a.Versions(key)
		if !ok || version < minV || version > maxV {
			return
		}
		req := kmsg.RequestForKey(key)
		req.SetVersion(version)
		if err := req.ReadFrom(body); err != nil {
			return // the network layer closes such connections
		}
		if tr, ok := req.(kmsg.TimeoutRequest); ok && tr.Timeout() > 0 {
			// Admin waits are bounded by the request; keep fuzzing fast.
			switch r := req.(type) {
			case *kmsg.CreateTopicsRequest:
				r.TimeoutMillis = 0
			case *kmsg.DeleteTopicsRequest:
				r.TimeoutMillis = 0
			case *kmsg.CreatePartitionsRequest:
				r.TimeoutMillis = 0
			}
		}
		resp, err := a.Handle(context.Background(), &network.Request{Key: key, Version: version, Body: req, Listener: "PLAINTEXT"})
		if err != nil {
			if strings.Contains(err.Error(), "panic") {
				t.Fatalf("handler panicked: %v", err)
			}
			return
		}
		if resp != nil && resp.GetVersion() != version && key != 18 {
			t.Fatalf("response version %d for request version %d", resp.GetVersion(), version)
		}
		if resp != nil {
			_ = resp.AppendTo(nil) // must encode
		}
	})
}
