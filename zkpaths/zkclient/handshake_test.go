package zkclient

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// A server that accepts the connection but never answers the connect
// request: every deadline go-zookeeper sets before the answer is cut to the
// handshake timeout, so the read fails and the client can try again; once
// data has arrived, deadlines pass through unchanged.
func TestHandshakeDeadlineIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() { // ends with the listener
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	conn, err := dialer(nil, 200*time.Millisecond)("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	srv := <-accepted
	defer srv.Close()

	// go-zookeeper's handshake read: ten read timeouts away.
	if err := conn.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { // ends when the read does (deadline or data)
		_, err := conn.Read(make([]byte, 4))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read of an unanswered handshake: %v, want a deadline error", err)
		}
		t.Logf("unanswered handshake given up after %v (handshake timeout 200ms)", time.Since(start).Round(time.Millisecond))
	case <-time.After(time.Minute):
		t.Fatal("the read of an unanswered handshake kept go-zookeeper's hour-long deadline")
	}

	// Once the server has answered, a long deadline stands.
	if _, err := srv.Write([]byte("abcd")); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	go func() { // ends when the read does
		_, err := conn.Read(make([]byte, 4))
		done <- err
	}()
	time.Sleep(time.Second) // five handshake timeouts: the read must still wait
	if _, err := srv.Write([]byte("efgh")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("read after the handshake: %v (its deadline was cut)", err)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	for _, tc := range []struct {
		session time.Duration
		servers int
		want    time.Duration
	}{
		{18 * time.Second, 1, 18 * time.Second},
		{18 * time.Second, 3, 6 * time.Second},
		{2 * time.Second, 3, time.Second},
		{10 * time.Second, 0, 10 * time.Second},
	} {
		if got := handshakeTimeout(tc.session, tc.servers); got != tc.want {
			t.Errorf("handshakeTimeout(%v, %d) = %v, want %v", tc.session, tc.servers, got, tc.want)
		}
	}
}
