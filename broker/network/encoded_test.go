package network

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// encodedTestResponse is a Metadata answer with several topics, partitions
// and error codes (more than eight distinct ones, so Encode's counting
// goes past errorCounts' fixed slots).
func encodedTestResponse(v int16, throttle int32) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = v
	resp.ThrottleMillis = throttle
	resp.ClusterID = kmsg.StringPtr("cluster")
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = 1, "h1", 9092
	resp.Brokers = append(resp.Brokers, b)
	codes := []int16{0, kerr.LeaderNotAvailable.Code, kerr.ListenerNotFound.Code, kerr.ReplicaNotAvailable.Code,
		kerr.UnknownTopicOrPartition.Code, kerr.InvalidTopicException.Code, kerr.TopicAuthorizationFailed.Code,
		kerr.InvalidRequest.Code, kerr.UnknownTopicID.Code, kerr.NotLeaderForPartition.Code}
	for i, c := range codes {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr("t" + string(rune('a'+i)))
		t.ErrorCode = c
		for p := int32(0); p < 3; p++ {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.ErrorCode = p, 1, codes[(i+int(p))%len(codes)]
			mp.Replicas, mp.ISR = []int32{1, 2}, []int32{1}
			t.Partitions = append(t.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// TestEncodedResponseIsTheBuiltOne: for every Metadata version, an
// Encoded answer sent through the server (vectored write) is byte for byte
// the frame of the same response built and encoded for the request, with
// the request's throttle patched in (v3+) or ignored (v0–v2), and Encode
// counts the same error codes as the walk of the built response.
func TestEncodedResponseIsTheBuiltOne(t *testing.T) {
	encs := map[int16]*Encoded{}
	for v := int16(0); v <= 12; v++ {
		at := -1
		if v >= 3 {
			at = 0
		}
		e, err := Encode(encodedTestResponse(v, 0), at)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		encs[v] = e
	}
	if _, err := Encode(encodedTestResponse(5, 0), 8); err == nil {
		t.Fatal("Encode accepted a wrong throttle offset")
	}
	const throttle = 1234
	s := startServer(t, Config{}, handlerFunc{versions: testVersions, fn: func(_ context.Context, req *Request) (kmsg.Response, error) {
		body := req.Body.(*kmsg.MetadataRequest)
		switch *body.Topics[0].Topic {
		case "built":
			return encodedTestResponse(req.Version, 0), nil
		case "built-throttled":
			return encodedTestResponse(req.Version, throttle), nil
		case "encoded":
			return encs[req.Version].Response(), nil
		default:
			r := encs[req.Version].Response()
			r.SetThrottle(throttle)
			return r, nil
		}
	}})
	c := rawDial(t, s)
	frame := func(req kmsg.Request) []byte {
		writeReq(t, c, req, 7)
		f, err := readResponseFrame(c)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for v := int16(0); v <= 12; v++ {
		for _, pair := range [][2]string{{"built", "encoded"}, {"built-throttled", "encoded-throttled"}} {
			want := frame(metadataReq(v, pair[0]))
			got := frame(metadataReq(v, pair[1]))
			if !bytes.Equal(got, want) {
				t.Errorf("v%d %s: %d bytes differ from the built %d", v, pair[1], len(got), len(want))
			}
		}
		// The shared body was not written.
		if !bytes.Equal(encs[v].body, encodedTestResponse(v, 0).AppendTo(nil)) {
			t.Errorf("v%d: the shared body changed", v)
		}
		c := errorCounts{}
		countErrors(encodedTestResponse(v, 0), &c)
		var want []codeCount
		for i := 0; i < c.n; i++ {
			want = append(want, codeCount{c.codes[i], c.counts[i]})
		}
		want = append(want, c.more...)
		if !slices.Equal(encs[v].errs, want) || len(want) <= len(c.codes) {
			t.Errorf("v%d: counted %v, want %v (more than %d codes)", v, encs[v].errs, want, len(c.codes))
		}
	}
}
