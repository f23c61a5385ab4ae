package security

// SASL server mechanisms share one small contract (Java's SaslServer as
// Kafka's SaslServerAuthenticator drives it) and one error type that tells
// the authenticator which message the client may see.

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"unicode/utf8"
)

// SaslServer is the server side of one SASL exchange.
type SaslServer interface {
	// Evaluate consumes the client's next token and returns the
	// challenge to send back; done reports that the exchange completed
	// successfully (the challenge is then the last server message, possibly
	// empty). An error ends the exchange: an *AuthenticationError carries a
	// message meant for the client, any other error is answered with
	// Kafka's generic "invalid credentials" text (GenericFailureMessage).
	Evaluate(token []byte) (challenge []byte, done bool, err error)
	// AuthorizationID is the authenticated user, valid once done.
	AuthorizationID() string
	// Mechanism is the mechanism name (PLAIN, SCRAM-SHA-256, ...).
	Mechanism() string
}

// AuthenticationError is Kafka's SaslAuthenticationException: its Message
// goes back to the client in the SaslAuthenticate response.
type AuthenticationError struct{ Message string }

func (e *AuthenticationError) Error() string { return e.Message }

func authFailed(format string, args ...any) error {
	return &AuthenticationError{Message: fmt.Sprintf(format, args...)}
}

// GenericFailureMessage is the text Kafka sends for a failure whose details
// must not reach the client (an unknown user, a wrong SCRAM proof).
func GenericFailureMessage(reauthenticating bool, mechanism string) string {
	what := "authentication"
	if reauthenticating {
		what = "re-authentication"
	}
	return "Authentication failed during " + what + " due to invalid credentials with SASL mechanism " + mechanism
}

// PlainServer is SASL/PLAIN (RFC 4616) against the user_<name> options of
// the listener's JAAS PlainLoginModule (Kafka's PlainSaslServer with
// PlainServerCallbackHandler).
type PlainServer struct {
	users    map[string]string
	authzID  string
	complete bool
}

// NewPlainServer returns a PLAIN exchange over users (name → password).
func NewPlainServer(users map[string]string) *PlainServer { return &PlainServer{users: users} }

// Mechanism implements SaslServer.
func (s *PlainServer) Mechanism() string { return MechanismPlain }

// AuthorizationID implements SaslServer.
func (s *PlainServer) AuthorizationID() string { return s.authzID }

// Evaluate implements SaslServer: the one token is
// [authzid] NUL authcid NUL passwd.
func (s *PlainServer) Evaluate(token []byte) ([]byte, bool, error) {
	if s.complete {
		return nil, false, authFailed("Unexpected challenge in Sasl server state COMPLETE")
	}
	if !utf8.Valid(token) {
		token = []byte(string(bytes.ToValidUTF8(token, []byte("\uFFFD"))))
	}
	parts := bytes.SplitN(token, []byte{0}, 4)
	if len(parts) != 3 {
		return nil, false, authFailed("Invalid SASL/PLAIN response: expected 3 tokens, got %d", min(len(parts), 4))
	}
	authzid, user, pass := string(parts[0]), string(parts[1]), parts[2]
	if user == "" {
		return nil, false, authFailed("Authentication failed: username not specified")
	}
	if len(pass) == 0 {
		return nil, false, authFailed("Authentication failed: password not specified")
	}
	want, ok := s.users[user]
	// Compare in constant time whether or not the user exists, so the
	// time taken does not tell which users do.
	if !ok {
		want = "\x00" + string(pass)
	}
	if subtle.ConstantTimeCompare([]byte(want), pass) != 1 || !ok {
		return nil, false, authFailed("Authentication failed: Invalid username or password")
	}
	if authzid != "" && authzid != user {
		return nil, false, authFailed("Authentication failed: Client requested an authorization id that is different from username")
	}
	s.authzID, s.complete = user, true
	return []byte{}, true, nil
}
