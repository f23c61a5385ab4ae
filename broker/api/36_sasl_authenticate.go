package api

// SaslAuthenticate (key 36), versions 0–2 (flexible from 2) (Kafka's
// SaslServerAuthenticator, framed token half, plus
// KafkaApis.handleSaslAuthenticateRequest).
//
// Behaviour:
//   - after a SaslHandshake v1: the auth bytes are the mechanism's next
//     client token, the answer carries the server's token; when the
//     exchange completes the connection is authenticated as User:<name>
//     and v1+ answers session_lifetime_ms (connections.max.reauth.ms, 0 =
//     none); a session past its lifetime is closed at its next request
//     other than a re-authenticating SaslHandshake;
//   - a failure answers SASL_AUTHENTICATION_FAILED with Kafka's message
//     (the mechanism's own text for PLAIN and an authorization id mismatch,
//     "Authentication failed during authentication due to invalid
//     credentials with SASL mechanism <M>" for an unknown user or a wrong
//     SCRAM proof) and closes the connection;
//   - before a handshake (or after a v0 one): the connection closes without
//     an answer, as Kafka's authenticator does;
//   - on an authenticated connection or a PLAINTEXT/SSL listener:
//     ILLEGAL_SASL_STATE "SaslAuthenticate request received after
//     successful authentication" (KafkaApis).

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (a *Apis) handleSaslAuthenticate(_ context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	s := r.net.Session
	if s == nil || s.Authenticated || !isSASLProtocol(r.net.SecurityProtocol) {
		msg := "SaslAuthenticate request received after successful authentication"
		resp.ErrorCode, resp.ErrorMessage = kerr.IllegalSaslState.Code, &msg
		return resp, nil
	}
	st, _ := s.SASL.(*saslState)
	if st == nil || st.server == nil || !st.framed {
		return nil, errors.New("api: Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake")
	}
	if req.Version > 0 {
		st.clientReauth = true
	}
	out, done, lifetime, failure := a.saslStep(r.net, st, req.SASLAuthBytes)
	if failure != "" {
		resp.ErrorCode, resp.ErrorMessage = kerr.SaslAuthenticationFailed.Code, &failure
		s.CloseAfterResponse = true
		return resp, nil
	}
	resp.SASLAuthBytes = out
	if done {
		resp.SessionLifetimeMillis = lifetime.Milliseconds()
	}
	return resp, nil
}
