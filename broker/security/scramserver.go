package security

// SCRAM server (RFC 5802, RFC 7677) as Kafka's ScramSaslServer runs it:
//
//	client-first  n,[a=<authzid>],n=<saslname>,r=<cnonce>[,<ext>=<v>]*
//	server-first  r=<cnonce><snonce>,s=<salt b64>,i=<iterations>
//	client-final  c=<b64 gs2 header>,r=<nonce>[,<ext>=<v>]*,p=<proof b64>
//	server-final  v=<server signature b64>
//
// AuthMessage = client-first-bare "," server-first "," client-final
// without ",p=...". The proof is checked by recomputing
// StoredKey = H(ClientProof XOR HMAC(StoredKey, AuthMessage)) in constant
// time. The credential (salt, StoredKey, ServerKey, iterations) comes from
// the CredentialCache, filled from /config/users.
//
// Kafka's one SCRAM extension, tokenauth=true, asks for delegation-token
// authentication; Klassik has no delegation tokens, so such a login fails
// like an unknown token does in Kafka (the generic message). Other
// extensions are ignored, as Kafka ignores them.

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// minScramIterations is the lowest iteration count Kafka accepts for both
// SCRAM mechanisms (ScramMechanism.minIterations).
const minScramIterations = 4096

// errScram is a failure answered with the generic message.
var errScram = errors.New("scram: authentication failed")

// ScramServer is one SCRAM exchange.
type ScramServer struct {
	mechanism string
	f         *ScramFormatter
	cache     *CredentialCache

	state       int // 0 want client-first, 1 want client-final, 2 complete, 3 failed
	user        string
	cred        ScramCredential
	gs2Header   string
	clientNonce string
	nonce       string // client nonce + server nonce
	clientBare  string
	serverFirst string
}

// NewScramServer returns a SCRAM exchange for mechanism (SCRAM-SHA-256 or
// SCRAM-SHA-512) against cache.
func NewScramServer(mechanism string, cache *CredentialCache) (*ScramServer, error) {
	f, err := NewScramFormatter(mechanism)
	if err != nil {
		return nil, fmt.Errorf("Requested mechanism '%s' is not supported. Supported mechanisms are '%s'.", mechanism, strings.Join(ScramMechanisms, ", "))
	}
	return &ScramServer{mechanism: mechanism, f: f, cache: cache}, nil
}

// Mechanism implements SaslServer.
func (s *ScramServer) Mechanism() string { return s.mechanism }

// AuthorizationID implements SaslServer.
func (s *ScramServer) AuthorizationID() string { return s.user }

// Evaluate implements SaslServer.
func (s *ScramServer) Evaluate(token []byte) (challenge []byte, done bool, err error) {
	defer func() {
		if err != nil {
			s.state, s.cred = 3, ScramCredential{}
		}
	}()
	switch s.state {
	case 0:
		out, err := s.clientFirst(string(token))
		if err != nil {
			return nil, false, err
		}
		s.state = 1
		return out, false, nil
	case 1:
		out, err := s.clientFinal(string(token))
		if err != nil {
			return nil, false, err
		}
		s.state = 2
		return out, true, nil
	}
	return nil, false, authFailed("Unexpected challenge in Sasl server state %s", map[int]string{2: "COMPLETE", 3: "FAILED"}[s.state])
}

// ClientFirst is a parsed SCRAM client-first message.
type ClientFirst struct {
	AuthzID    string
	User       string // saslname decoded (=2C → ",", =3D → "=")
	Nonce      string
	Extensions map[string]string
	GS2Header  string // "n,[a=...]," as sent
	Bare       string // the client-first-message-bare as sent
}

// ParseClientFirst parses a client-first message with Kafka's grammar
// (no channel binding: the gs2 flag must be "n"; "y" and "p" are refused).
func ParseClientFirst(msg string) (*ClientFirst, error) {
	bad := func() (*ClientFirst, error) {
		return nil, fmt.Errorf("%w: Invalid SCRAM client first message format: %s", errScram, msg)
	}
	rest, ok := strings.CutPrefix(msg, "n,")
	if !ok {
		return bad()
	}
	cf := &ClientFirst{Extensions: map[string]string{}}
	authz, rest, ok := strings.Cut(rest, ",")
	if !ok {
		return bad()
	}
	if authz != "" {
		a, ok := strings.CutPrefix(authz, "a=")
		if !ok || !validSaslName(a) {
			return bad()
		}
		if cf.AuthzID, ok = decodeSaslName(a); !ok {
			return bad()
		}
	}
	cf.GS2Header = msg[:len(msg)-len(rest)]
	cf.Bare = rest
	fields := strings.Split(rest, ",")
	i := 0
	if i < len(fields) && strings.HasPrefix(fields[i], "m=") {
		if !validValue(fields[i][2:]) {
			return bad()
		}
		i++ // reserved mandatory extension: ignored as Kafka's grammar does
	}
	if i >= len(fields) || !strings.HasPrefix(fields[i], "n=") || !validSaslName(fields[i][2:]) {
		return bad()
	}
	if cf.User, ok = decodeSaslName(fields[i][2:]); !ok {
		return bad()
	}
	i++
	if i >= len(fields) || !strings.HasPrefix(fields[i], "r=") || !validPrintable(fields[i][2:]) {
		return bad()
	}
	cf.Nonce = fields[i][2:]
	i++
	for ; i < len(fields); i++ {
		k, v, ok := strings.Cut(fields[i], "=")
		if !ok || !validAlpha(k) || !validValue(v) {
			return bad()
		}
		cf.Extensions[k] = v
	}
	return cf, nil
}

// ClientFinal is a parsed SCRAM client-final message.
type ClientFinal struct {
	ChannelBinding []byte
	Nonce          string
	Proof          []byte
	WithoutProof   string // the message up to ",p=", as sent
}

// ParseClientFinal parses a client-final message.
func ParseClientFinal(msg string) (*ClientFinal, error) {
	bad := func() (*ClientFinal, error) {
		return nil, fmt.Errorf("%w: Invalid SCRAM client final message format: %s", errScram, msg)
	}
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return bad()
	}
	cf := &ClientFinal{WithoutProof: msg[:i]}
	var err error
	if cf.Proof, err = decodeB64(msg[i+3:]); err != nil || len(cf.Proof) == 0 {
		return bad()
	}
	fields := strings.Split(cf.WithoutProof, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "c=") || !strings.HasPrefix(fields[1], "r=") || !validPrintable(fields[1][2:]) {
		return bad()
	}
	if cf.ChannelBinding, err = decodeB64(fields[0][2:]); err != nil {
		return bad()
	}
	cf.Nonce = fields[1][2:]
	for _, f := range fields[2:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !validAlpha(k) || !validValue(v) {
			return bad()
		}
	}
	return cf, nil
}

func (s *ScramServer) clientFirst(msg string) ([]byte, error) {
	cf, err := ParseClientFirst(msg)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(cf.Extensions["tokenauth"], "true") {
		// Kafka: "Token Authentication failed: Invalid tokenId" (a
		// SaslException: the client sees the generic message).
		return nil, fmt.Errorf("%w: delegation token authentication is not supported", errScram)
	}
	cred, ok := s.cache.Get(s.mechanism, cf.User)
	if !ok {
		return nil, fmt.Errorf("%w: Authentication failed: Invalid user credentials", errScram)
	}
	if cf.AuthzID != "" && cf.AuthzID != cf.User {
		return nil, authFailed("Authentication failed: Client requested an authorization id that is different from username")
	}
	if cred.Iterations < minScramIterations {
		return nil, fmt.Errorf("%w: Iterations %d is less than the minimum %d for %s", errScram, cred.Iterations, minScramIterations, s.mechanism)
	}
	s.user, s.cred, s.gs2Header, s.clientBare, s.clientNonce = cf.User, cred, cf.GS2Header, cf.Bare, cf.Nonce
	// Letters and digits only, like Kafka's
	// ScramFormatter.secureRandomString (librdkafka mishandles '/' and
	// '+' in the server's nonce).
	s.nonce = cf.Nonce + rand.Text()
	s.serverFirst = "r=" + s.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) + ",i=" + strconv.Itoa(cred.Iterations)
	return []byte(s.serverFirst), nil
}

func (s *ScramServer) clientFinal(msg string) ([]byte, error) {
	cf, err := ParseClientFinal(msg)
	if err != nil {
		return nil, err
	}
	// librdkafka (through 2.x) sends its own nonce again in front of the
	// combined one; Kafka never compares the nonce, so it works there.
	// Klassik accepts that form too, but still demands this exchange's
	// server nonce, so an old client-final cannot be replayed.
	if cf.Nonce != s.nonce && cf.Nonce != s.clientNonce+s.nonce {
		return nil, fmt.Errorf("%w: Invalid client nonce in the final client message", errScram)
	}
	if !bytes.Equal(cf.ChannelBinding, []byte(s.gs2Header)) {
		return nil, fmt.Errorf("%w: Invalid channel binding in the final client message", errScram)
	}
	authMessage := []byte(s.clientBare + "," + s.serverFirst + "," + cf.WithoutProof)
	clientSig := s.f.HMAC(s.cred.StoredKey, authMessage)
	if len(cf.Proof) != len(clientSig) {
		return nil, fmt.Errorf("%w: Invalid client credentials", errScram)
	}
	clientKey := make([]byte, len(clientSig))
	for i := range clientSig {
		clientKey[i] = cf.Proof[i] ^ clientSig[i]
	}
	if subtle.ConstantTimeCompare(s.f.StoredKey(clientKey), s.cred.StoredKey) != 1 {
		return nil, fmt.Errorf("%w: Invalid client credentials", errScram)
	}
	serverSig := s.f.HMAC(s.cred.ServerKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), nil
}

func decodeB64(s string) ([]byte, error) {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=') {
			return nil, errors.New("not base64")
		}
	}
	return base64.StdEncoding.DecodeString(s)
}

// validSaslName: 1*(value-safe-char / "=2C" / "=3D"), ASCII 0x01-0x7F
// without ',' and with '=' only in those escapes.
func validSaslName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '=':
			if i+3 > len(s) {
				return false
			}
			if e := s[i+1 : i+3]; e != "2C" && e != "3D" {
				return false
			}
			i += 2
		case c == 0 || c > 0x7f || c == ',':
			return false
		}
	}
	return true
}

func decodeSaslName(s string) (string, bool) {
	return strings.NewReplacer("=2C", ",", "=3D", "=").Replace(s), true
}

func validValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c > 0x7f || c == ',' {
			return false
		}
	}
	return true
}

func validPrintable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

func validAlpha(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
