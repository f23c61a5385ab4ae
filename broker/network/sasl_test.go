package network

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// saslHandler is a PLAIN-only SASL handler for the session hooks.
type saslHandler struct {
	mu         sync.Mutex
	principals []string // principal seen by each Metadata request
}

func (h *saslHandler) Versions(key int16) (int16, int16, bool) {
	r, ok := map[int16][2]int16{3: {0, 12}, 17: {0, 1}, 18: {0, 3}, 36: {0, 2}}[key]
	return r[0], r[1], ok
}

func checkPlain(s *Session, tok []byte) bool {
	if !bytes.Equal(tok, []byte("\x00alice\x00secret")) {
		return false
	}
	s.Authenticated, s.Principal = true, "User:alice"
	return true
}

func (h *saslHandler) Handle(_ context.Context, req *Request) (kmsg.Response, error) {
	switch b := req.Body.(type) {
	case *kmsg.SASLHandshakeRequest:
		resp := b.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{"PLAIN"}
		if b.Version == 0 {
			s := req.Session
			s.RawSASL = func(tok []byte) ([]byte, bool, error) {
				if !checkPlain(s, tok) {
					return nil, false, errors.New("authentication failed")
				}
				return nil, true, nil
			}
		}
		return resp, nil
	case *kmsg.SASLAuthenticateRequest:
		resp := b.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if !checkPlain(req.Session, b.SASLAuthBytes) {
			resp.ErrorCode = 58
		}
		return resp, nil
	case *kmsg.MetadataRequest:
		h.mu.Lock()
		h.principals = append(h.principals, req.Session.Principal)
		h.mu.Unlock()
		return b.ResponseKind(), nil
	}
	return nil, errors.New("unexpected")
}

func saslServer(t *testing.T, h Handler) *Server {
	return startServer(t, Config{Listeners: []ListenerConfig{{Name: "PLAINTEXT", Host: "127.0.0.1", SecurityProtocol: "SASL_PLAINTEXT"}}}, h)
}

// saslHandshaken dials s and completes a SaslHandshake (PLAIN) of the
// given version as correlation id 1.
func saslHandshaken(t *testing.T, s *Server, version int16) net.Conn {
	t.Helper()
	c := rawDial(t, s)
	roundTrip(t, c, &kmsg.SASLHandshakeRequest{Version: version, Mechanism: "PLAIN"}, 1)
	return c
}

func TestSASLRequiresAuthentication(t *testing.T) {
	s := saslServer(t, &saslHandler{})
	c := rawDial(t, s)
	av := kmsg.NewPtrApiVersionsRequest()
	roundTrip(t, c, av, 1) // ApiVersions is allowed before authentication
	writeReq(t, c, metadataReq(1), 2)
	expectClosed(t, c)

	// Unauthenticated frames are limited to sasl.server.max.receive.size.
	c = rawDial(t, s)
	if _, err := c.Write(binary.BigEndian.AppendUint32(nil, SaslMaxReceiveBytes+1)); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c)
}

func TestSASLHandshakeV1Authenticate(t *testing.T) {
	h := &saslHandler{}
	s := saslServer(t, h)
	c := saslHandshaken(t, s, 1)
	au := &kmsg.SASLAuthenticateRequest{Version: 2, SASLAuthBytes: []byte("\x00alice\x00secret")}
	if r := roundTrip(t, c, au, 2).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != 0 {
		t.Fatalf("authenticate: %d", r.ErrorCode)
	}
	md := metadataReq(12)
	roundTrip(t, c, md, 3)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.principals) != 1 || h.principals[0] != "User:alice" {
		t.Fatalf("principals %v", h.principals)
	}
}

// SaslHandshake v0 is followed by raw tokens without a Kafka header
// (kafka-python); the server answers each with a bare frame.
func TestSASLHandshakeV0RawTokens(t *testing.T) {
	h := &saslHandler{}
	s := saslServer(t, h)
	c := saslHandshaken(t, s, 0)
	if _, err := c.Write(frameBytes([]byte("\x00alice\x00secret"))); err != nil {
		t.Fatal(err)
	}
	var sz [4]byte
	if _, err := ioReadFull(c, sz[:]); err != nil || binary.BigEndian.Uint32(sz[:]) != 0 {
		t.Fatalf("raw reply size %x err %v", sz, err)
	}
	md := metadataReq(1)
	roundTrip(t, c, md, 2)

	// A bad raw token closes the connection.
	c2 := saslHandshaken(t, s, 0)
	if _, err := c2.Write(frameBytes([]byte("\x00alice\x00wrong"))); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, c2)
}

func TestPlaintextSessionIsAuthenticated(t *testing.T) {
	var got *Session
	h := handlerFunc{versions: testVersions, fn: func(_ context.Context, req *Request) (kmsg.Response, error) {
		got = req.Session
		return req.Body.ResponseKind(), nil
	}}
	s := startServer(t, Config{}, h)
	c := rawDial(t, s)
	md := metadataReq(1)
	roundTrip(t, c, md, 1)
	if got == nil || !got.Authenticated || got.Principal != "User:ANONYMOUS" {
		t.Fatalf("session %+v", got)
	}
}
