package network

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// testVersions is the table the test handler serves: Kafka 3.4 ranges for
// a handful of keys.
var testVersions = map[int16][2]int16{
	0:  {0, 9},  // Produce
	1:  {4, 12}, // Fetch
	3:  {0, 12}, // Metadata
	7:  {0, 3},  // ControlledShutdown
	18: {0, 3},  // ApiVersions
}

// testHandler answers Metadata with the requested topic names echoed (so
// tests can match responses to requests); a topic named "panic" panics,
// "error" returns an error, "silent" returns no response, "block" waits
// for ctx. fetch, if set, serves Fetch.
type testHandler struct {
	versions map[int16][2]int16
	fetch    func(ctx context.Context, req *Request) (kmsg.Response, error)
	blocked  chan struct{} // receives when a "block" request starts
}

func (h *testHandler) Versions(key int16) (int16, int16, bool) {
	v := h.versions
	if v == nil {
		v = testVersions
	}
	r, ok := v[key]
	return r[0], r[1], ok
}

func (h *testHandler) Handle(ctx context.Context, req *Request) (kmsg.Response, error) {
	switch body := req.Body.(type) {
	case *kmsg.MetadataRequest:
		resp := body.ResponseKind().(*kmsg.MetadataResponse)
		for _, t := range body.Topics {
			if t.Topic == nil {
				continue
			}
			switch *t.Topic {
			case "panic":
				panic("test panic")
			case "error":
				return nil, errors.New("test error")
			case "silent":
				return nil, nil
			case "block":
				if h.blocked != nil {
					h.blocked <- struct{}{}
				}
				<-ctx.Done()
				return nil, ctx.Err()
			}
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic = t.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	case *kmsg.FetchRequest:
		if h.fetch != nil {
			return h.fetch(ctx, req)
		}
	case *kmsg.ControlledShutdownRequest:
		resp := body.ResponseKind().(*kmsg.ControlledShutdownResponse)
		return resp, nil
	}
	return nil, errors.New("unhandled")
}

func startServer(t *testing.T, cfg Config, h Handler) *Server {
	t.Helper()
	if cfg.Listeners == nil {
		cfg.Listeners = []ListenerConfig{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0, SecurityProtocol: "PLAINTEXT"}}
	}
	s, err := NewServer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func addrOf(s *Server) string { return s.BoundAddr("PLAINTEXT").String() }

// dialClient connects the package's broker-to-broker Client to s; the test
// closes it.
func dialClient(t *testing.T, s *Server) *Client {
	t.Helper()
	return dialClientAs(t, s, "broker-1", 5*time.Second)
}

// dialClientAs is dialClient with a client id and request timeout of the
// test's choosing; the client is closed when the test ends.
func dialClientAs(t *testing.T, s *Server, clientID string, timeout time.Duration) *Client {
	t.Helper()
	cl, err := Dial(context.Background(), addrOf(s), clientID, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func rawDial(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addrOf(s), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func metadataReq(version int16, topics ...string) *kmsg.MetadataRequest {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = version
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		r.Topics = append(r.Topics, rt)
	}
	return r
}

func writeReq(t *testing.T, c net.Conn, req kmsg.Request, corr int32) {
	t.Helper()
	if _, err := c.Write(appendRequestFrame(nil, req, corr, "test")); err != nil {
		t.Fatal(err)
	}
}

// roundTrip writes req on c with correlation id corr and reads its answer.
func roundTrip(t *testing.T, c net.Conn, req kmsg.Request, corr int32) kmsg.Response {
	t.Helper()
	writeReq(t, c, req, corr)
	return readResp(t, c, req, corr)
}

func readResp(t *testing.T, c net.Conn, req kmsg.Request, corr int32) kmsg.Response {
	t.Helper()
	frame, err := readResponseFrame(c)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	resp, err := decodeResponse(frame, req, corr)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// expectClosed asserts the server closes c (EOF or reset) without sending
// a response.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	n, err := c.Read(b[:])
	if n != 0 || err == nil {
		t.Fatalf("expected closed connection, read %d bytes, err %v", n, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after 5s")
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		t.Logf("closed with %v", err)
	}
}

func frameBytes(parts ...[]byte) []byte {
	var body []byte
	for _, p := range parts {
		body = append(body, p...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func ioReadFull(c net.Conn, b []byte) (int, error) { return io.ReadFull(c, b) }

// expectServed sends a Metadata v1 request for topic on c with correlation
// id corr and fails the test with msg unless the answer echoes the topic.
func expectServed(t *testing.T, c net.Conn, topic string, corr int32, msg string) {
	t.Helper()
	r := metadataReq(1, topic)
	writeReq(t, c, r, corr)
	if resp := readResp(t, c, r, corr).(*kmsg.MetadataResponse); len(resp.Topics) != 1 || *resp.Topics[0].Topic != topic {
		t.Fatal(msg)
	}
}
