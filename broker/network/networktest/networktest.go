// Package networktest serves a network.Handler on a loopback port for the
// tests of other packages, as net/http/httptest does for HTTP handlers.
package networktest

import (
	"log/slog"
	"testing"

	"github.com/klassik/klassik/broker/network"
)

// Start serves h on one PLAINTEXT listener at 127.0.0.1 on a free port
// (its address: BoundAddr("PLAINTEXT")) and shuts the server down when the
// test ends. A nil logger discards the server's log.
func Start(t testing.TB, h network.Handler, logger *slog.Logger) *network.Server {
	t.Helper()
	srv, err := network.NewServer(network.Config{
		Listeners: []network.ListenerConfig{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 0, SecurityProtocol: "PLAINTEXT"}},
		Logger:    logger,
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}
