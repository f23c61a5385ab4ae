package network

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// allKeys serves every key kmsg knows at every version kmsg knows, so the
// fuzzer reaches every body decoder.
func allKeys(key int16) (int16, int16, bool) {
	r := kmsg.RequestForKey(key)
	if r == nil {
		return 0, 0, false
	}
	return 0, r.MaxVersion(), true
}

// FuzzReadRequest feeds arbitrary bytes through the server's frame reader
// and request decoder. Invariants: no panic escapes; reading ends (the
// input is finite and every frame consumes at least 4 bytes); a frame that
// decodes has a body of the frame's key and version, or is an ApiVersions
// fallback with no body; an oversized size prefix is rejected before
// allocation.
func FuzzReadRequest(f *testing.F) {
	seeds := [][]byte{
		appendRequestFrame(nil, kmsg.NewPtrApiVersionsRequest(), 1, "c"),
		appendRequestFrame(nil, &kmsg.ApiVersionsRequest{Version: 3, ClientSoftwareName: "kgo", ClientSoftwareVersion: "1.0"}, 1, "c"),
		appendRequestFrame(nil, metadataReq(0), 2, "c"),
		appendRequestFrame(nil, metadataReq(12, "a", "b"), 3, ""),
		appendRequestFrame(nil, &kmsg.ControlledShutdownRequest{Version: 0, BrokerID: 1}, 4, ""),
		appendRequestFrame(nil, &kmsg.FetchRequest{Version: 12, Topics: []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0}}}}}, 5, "c"),
		appendRequestFrame(nil, &kmsg.ProduceRequest{Version: 9, Acks: -1, Topics: []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: []byte{1, 2, 3}}}}}}, 6, "c"),
		{0, 0, 0, 0x10, 0, 0x12, 0, 0x7f, 0, 0, 0, 1, 0, 1, 0x63, 0, 0xff, 0xff},
		{0xff, 0xff, 0xff, 0xff},
		{0x7f, 0xff, 0xff, 0xff, 1, 2},
		{0, 0, 0, 8, 0, 3, 0, 9, 0, 0, 0, 1},
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for frames := 0; ; frames++ {
			if frames > len(in)/4+1 {
				t.Fatalf("read %d frames from %d bytes", frames, len(in))
			}
			frame, err := readFrame(r, 1<<16)
			if err != nil {
				return
			}
			d, err := decodeRequest(frame, allKeys)
			if err != nil {
				continue
			}
			if d.fallback {
				if d.req.Key != int16(kmsg.ApiVersions) || d.req.Body != nil {
					t.Fatalf("fallback for key %d with body %v", d.req.Key, d.req.Body)
				}
				continue
			}
			if d.req.Body.Key() != d.req.Key || d.req.Body.GetVersion() != d.req.Version {
				t.Fatalf("body key/version %d/%d for header %d/%d", d.req.Body.Key(), d.req.Body.GetVersion(), d.req.Key, d.req.Version)
			}
			// What decoded must encode again without panicking.
			_ = d.req.Body.AppendTo(nil)
		}
	})
}

// FuzzDecodeResponse feeds arbitrary response frames to the client's
// decoder for a few request kinds. Invariants: no panic; a success returns
// a response of the request's key; a correlation mismatch is an error.
func FuzzDecodeResponse(f *testing.F) {
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	av.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MaxVersion: 3}}
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	f.Add(int8(0), append([]byte{0, 0, 0, 1}, av.AppendTo(nil)...))
	f.Add(int8(0), []byte{0, 0, 0, 1, 0, 0x23, 0, 0, 0, 1, 0, 0x12, 0, 0, 0, 3})
	f.Add(int8(1), append([]byte{0, 0, 0, 1, 0}, md.AppendTo(nil)...))
	f.Add(int8(2), []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	f.Add(int8(1), []byte{0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, which int8, frame []byte) {
		if len(frame) < 4 {
			return
		}
		var req kmsg.Request
		switch which % 3 {
		case 0:
			req = &kmsg.ApiVersionsRequest{Version: 3}
		case 1:
			req = &kmsg.MetadataRequest{Version: 12}
		default:
			req = &kmsg.LeaderAndISRRequest{Version: 7}
		}
		resp, err := decodeResponse(frame, req, 1)
		if err != nil {
			return
		}
		if resp.Key() != req.Key() {
			t.Fatalf("response key %d for request %d", resp.Key(), req.Key())
		}
		if frame[0] != 0 || frame[1] != 0 || frame[2] != 0 || frame[3] != 1 {
			t.Fatal("accepted a wrong correlation id")
		}
	})
}
