package api

// SaslHandshake (key 17), versions 0–1 (Kafka's SaslServerAuthenticator,
// handshake half, plus KafkaApis.handleSaslHandshakeRequest).
//
// Behaviour:
//   - on a PLAINTEXT or SSL listener: ILLEGAL_SASL_STATE (Kafka's KafkaApis
//     answer to a handshake that reaches the request handler);
//   - an enabled mechanism: NONE with the listener's enabled mechanisms; v1
//     is followed by SaslAuthenticate requests, v0 by raw size-prefixed
//     tokens without a Kafka header (the network layer's Session.RawSASL;
//     kafka-python and old clients);
//   - any other mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled list,
//     then the connection closes;
//   - a second handshake while authenticating: ILLEGAL_SASL_STATE, then the
//     connection closes;
//   - on an authenticated connection (KIP-368): when the client showed it
//     can re-authenticate (a SaslAuthenticate v1+ before) and asks with v1,
//     a re-authentication starts: the connection is unauthenticated until
//     it completes, with the same mechanism and principal; otherwise
//     ILLEGAL_SASL_STATE, or a close when the session has expired.
//
// The connection's exchange state is a *saslState in Session.SASL; only
// this connection's goroutine touches it (one request at a time).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
)

// SASLServers starts the server side of SASL exchanges
// (*security.Authenticators).
type SASLServers interface {
	// Mechanisms lists the enabled mechanisms of a SASL listener.
	Mechanisms(listener string) []string
	// NewServer starts an exchange of an enabled mechanism.
	NewServer(listener, mechanism string) (security.SaslServer, error)
	// MaxReauth is connections.max.reauth.ms of the listener and
	// mechanism (0 = sessions do not expire).
	MaxReauth(listener, mechanism string) time.Duration
}

// saslState is one connection's SASL progress.
type saslState struct {
	mechanism string
	server    security.SaslServer // nil before a handshake and once done
	framed    bool                // SaslHandshake v1: tokens in SaslAuthenticate
	// clientReauth: the client sent a SaslAuthenticate v1+, so it knows
	// KIP-368 re-authentication.
	clientReauth bool
	// Set while re-authenticating: what the first login established.
	reauth        bool
	prevPrincipal string
	prevMechanism string
	badMechanism  string // the failure a re-authentication with another mechanism gets
}

func isSASLProtocol(p string) bool { return p == "SASL_PLAINTEXT" || p == "SASL_SSL" }

func (a *Apis) handleSaslHandshake(_ context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	s := r.net.Session
	if s == nil || !isSASLProtocol(r.net.SecurityProtocol) {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp, nil
	}
	var mechs []string
	if a.sasl != nil {
		mechs = a.sasl.Mechanisms(r.listener())
	}
	resp.SupportedMechanisms = mechs
	st, _ := s.SASL.(*saslState)
	switch {
	case s.Authenticated:
		expired := !s.ExpiresAt.IsZero() && time.Now().After(s.ExpiresAt)
		if st == nil || !st.clientReauth || req.Version < 1 {
			if expired {
				return nil, errors.New("api: SASL session expired and the client cannot re-authenticate")
			}
			resp.ErrorCode = kerr.IllegalSaslState.Code
			return resp, nil
		}
		st = &saslState{clientReauth: true, reauth: true, prevPrincipal: s.Principal, prevMechanism: st.mechanism}
		s.SASL = st
		s.Authenticated = false
	case st != nil && st.server != nil:
		resp.ErrorCode = kerr.IllegalSaslState.Code
		s.CloseAfterResponse = true
		return resp, nil
	case st == nil:
		st = &saslState{}
		s.SASL = st
	}
	if a.sasl == nil || !slices.Contains(mechs, req.Mechanism) {
		a.logger.Info("SASL mechanism requested by client is not enabled", "listener", r.listener(), "mechanism", req.Mechanism, "enabled", mechs, "remote", r.net.RemoteAddr)
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		s.CloseAfterResponse = true
		return resp, nil
	}
	server, err := a.sasl.NewServer(r.listener(), req.Mechanism)
	if err != nil {
		return nil, fmt.Errorf("api: starting SASL %s: %w", req.Mechanism, err)
	}
	if st.reauth && req.Mechanism != st.prevMechanism {
		st.badMechanism = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", req.Mechanism, st.prevMechanism)
	}
	st.mechanism, st.server, st.framed = req.Mechanism, server, req.Version >= 1
	if !st.framed {
		net := r.net
		s.RawSASL = func(token []byte) ([]byte, bool, error) {
			out, done, _, failure := a.saslStep(net, st, token)
			if failure != "" {
				return nil, false, errors.New(failure)
			}
			return out, done, nil
		}
	}
	return resp, nil
}

// saslStep feeds one client token to the connection's exchange. It returns
// the server's answer, whether authentication completed (the Session is
// then authenticated as User:<name>, with its KIP-368 lifetime) and, on
// failure, the message for the client (Kafka's texts).
func (a *Apis) saslStep(n *network.Request, st *saslState, token []byte) (out []byte, done bool, lifetime time.Duration, failure string) {
	s := n.Session
	fail := func(msg string, err error) ([]byte, bool, time.Duration, string) {
		a.logger.Info("failed authentication", "remote", n.RemoteAddr, "listener", n.Listener, "conn", n.ConnID, "mechanism", st.mechanism, "err", err)
		st.server = nil
		return nil, false, 0, msg
	}
	if st.badMechanism != "" {
		return fail(st.badMechanism, errors.New(st.badMechanism))
	}
	out, done, err := st.server.Evaluate(token)
	if err != nil {
		var ae *security.AuthenticationError
		if errors.As(err, &ae) {
			return fail(ae.Message, err)
		}
		return fail(security.GenericFailureMessage(st.reauth, st.mechanism), err)
	}
	if !done {
		return out, false, 0, ""
	}
	principal := "User:" + st.server.AuthorizationID()
	if st.reauth && principal != st.prevPrincipal {
		msg := fmt.Sprintf("Cannot change principals during re-authentication from User.%s: User.%s",
			strings.TrimPrefix(st.prevPrincipal, "User:"), strings.TrimPrefix(principal, "User:"))
		return fail(msg, errors.New(msg))
	}
	lifetime = a.sasl.MaxReauth(n.Listener, st.mechanism)
	s.ExpiresAt = time.Time{}
	if lifetime > 0 {
		s.ExpiresAt = time.Now().Add(lifetime)
	}
	s.Principal, s.Authenticated = principal, true
	st.server, st.reauth = nil, false
	if out == nil {
		out = []byte{}
	}
	return out, true, lifetime, ""
}
