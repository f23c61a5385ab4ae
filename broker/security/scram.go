package security

// SCRAM credentials as Kafka computes and stores them (Kafka's
// ScramMechanism, ScramFormatter and ScramCredentialUtils, RFC 5802):
//
//	SaltedPassword = Hi(password, salt, i)   PBKDF2 with HMAC-H, |H| bytes
//	ClientKey      = HMAC(SaltedPassword, "Client Key")
//	StoredKey      = H(ClientKey)
//	ServerKey      = HMAC(SaltedPassword, "Server Key")
//
// The stored form, the value of "SCRAM-SHA-256" / "SCRAM-SHA-512" in
// /config/users/<user>, is
//
//	salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>
//
// with standard padded base64. Kafka normalizes a password to its UTF-8
// bytes only (no SASLprep), and so does Klassik, so that a credential made
// by either verifies in the other.

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"strconv"
	"strings"
)

// Iteration bounds. Kafka's ScramMechanism requires at least 4096 for both
// mechanisms; AlterUserScramCredentials refuses more than 16384 (a
// credential written by kafka-configs --zookeeper may have more).
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
	// ScramDefaultIterations is what kafka-configs uses when the
	// credential names no iterations.
	ScramDefaultIterations = 4096
)

// ScramMechanismType is the mechanism's code in DescribeUserScramCredentials
// and AlterUserScramCredentials (the admin client's ScramMechanism enum).
type ScramMechanismType int8

const (
	ScramUnknown ScramMechanismType = 0
	ScramSHA256  ScramMechanismType = 1
	ScramSHA512  ScramMechanismType = 2
)

// ScramMechanismName is the mechanism name of t ("UNKNOWN" for others), as
// the admin client's ScramMechanism.mechanismName.
func ScramMechanismName(t ScramMechanismType) string {
	switch t {
	case ScramSHA256:
		return MechanismScramSHA256
	case ScramSHA512:
		return MechanismScramSHA512
	}
	return "UNKNOWN"
}

// ScramMechanismTypeOf is the code of a mechanism name; ScramUnknown for
// names that are not SCRAM mechanisms.
func ScramMechanismTypeOf(name string) ScramMechanismType {
	switch name {
	case MechanismScramSHA256:
		return ScramSHA256
	case MechanismScramSHA512:
		return ScramSHA512
	}
	return ScramUnknown
}

// IsScramMechanism reports whether name is SCRAM-SHA-256 or SCRAM-SHA-512
// (Kafka's ScramMechanism.isScram).
func IsScramMechanism(name string) bool { return ScramMechanismTypeOf(name) != ScramUnknown }

// ErrUnknownScramMechanism is returned for mechanism names other than
// SCRAM-SHA-256 and SCRAM-SHA-512.
var ErrUnknownScramMechanism = errors.New("security: unknown SCRAM mechanism")

// ScramFormatter computes the RFC 5802 values of one mechanism (Kafka's
// ScramFormatter). It is stateless and safe for concurrent use.
type ScramFormatter struct {
	mechanism string
	newHash   func() hash.Hash
}

// NewScramFormatter returns the formatter of SCRAM-SHA-256 or SCRAM-SHA-512.
func NewScramFormatter(mechanism string) (*ScramFormatter, error) {
	switch mechanism {
	case MechanismScramSHA256:
		return &ScramFormatter{mechanism: mechanism, newHash: sha256.New}, nil
	case MechanismScramSHA512:
		return &ScramFormatter{mechanism: mechanism, newHash: sha512.New}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownScramMechanism, mechanism)
}

// Mechanism is the formatter's mechanism name.
func (f *ScramFormatter) Mechanism() string { return f.mechanism }

// HMAC is HMAC-H(key, data).
func (f *ScramFormatter) HMAC(key, data []byte) []byte {
	m := hmac.New(f.newHash, key)
	m.Write(data)
	return m.Sum(nil)
}

// Hash is H(data).
func (f *ScramFormatter) Hash(data []byte) []byte {
	h := f.newHash()
	h.Write(data)
	return h.Sum(nil)
}

// SaltedPassword is Hi(password, salt, iterations): PBKDF2 with HMAC-H and
// one hash-sized block.
func (f *ScramFormatter) SaltedPassword(password string, salt []byte, iterations int) ([]byte, error) {
	if iterations < 1 {
		return nil, fmt.Errorf("security: SCRAM iterations %d must be positive", iterations)
	}
	return pbkdf2.Key(f.newHash, password, salt, iterations, f.newHash().Size())
}

// ClientKey is HMAC(SaltedPassword, "Client Key").
func (f *ScramFormatter) ClientKey(saltedPassword []byte) []byte {
	return f.HMAC(saltedPassword, []byte("Client Key"))
}

// StoredKey is H(ClientKey).
func (f *ScramFormatter) StoredKey(clientKey []byte) []byte { return f.Hash(clientKey) }

// ServerKey is HMAC(SaltedPassword, "Server Key").
func (f *ScramFormatter) ServerKey(saltedPassword []byte) []byte {
	return f.HMAC(saltedPassword, []byte("Server Key"))
}

// CredentialFromSaltedPassword derives the stored credential from a salted
// password, as the broker does for AlterUserScramCredentials (the client
// sends salt and salted password, never the password).
func (f *ScramFormatter) CredentialFromSaltedPassword(salt, saltedPassword []byte, iterations int) ScramCredential {
	return ScramCredential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  f.StoredKey(f.ClientKey(saltedPassword)),
		ServerKey:  f.ServerKey(saltedPassword),
		Iterations: iterations,
	}
}

// Credential derives the credential of password with salt.
func (f *ScramFormatter) Credential(password string, salt []byte, iterations int) (ScramCredential, error) {
	sp, err := f.SaltedPassword(password, salt, iterations)
	if err != nil {
		return ScramCredential{}, err
	}
	return f.CredentialFromSaltedPassword(salt, sp, iterations), nil
}

// GenerateCredential derives the credential of password with a fresh
// random salt (Kafka's generateCredential(password, iterations)).
func (f *ScramFormatter) GenerateCredential(password string, iterations int) (ScramCredential, error) {
	salt, err := RandomScramSalt()
	if err != nil {
		return ScramCredential{}, err
	}
	return f.Credential(password, salt, iterations)
}

// RandomScramSalt is a salt of Kafka's shape: the UTF-8 bytes of a random
// 130-bit number written in base 36 (Kafka's secureRandomBytes), about 26
// characters.
func RandomScramSalt() ([]byte, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 130))
	if err != nil {
		return nil, fmt.Errorf("security: random salt: %w", err)
	}
	return []byte(n.Text(36)), nil
}

// verifyMaxIterations bounds the PBKDF2 work of VerifyScramPassword: a
// credential written straight into ZooKeeper may name any count, and a
// check must not pin a CPU for minutes. A million iterations take well
// under a second.
const verifyMaxIterations = 1 << 20

// VerifyScramPassword reports whether password matches the stored
// credential of mechanism: it recomputes the salted password and compares
// StoredKey and ServerKey in constant time.
func VerifyScramPassword(mechanism, password string, cred ScramCredential) bool {
	f, err := NewScramFormatter(mechanism)
	if err != nil || cred.Iterations < 1 || cred.Iterations > verifyMaxIterations {
		return false
	}
	got, err := f.Credential(password, cred.Salt, cred.Iterations)
	if err != nil {
		return false
	}
	return hmac.Equal(got.StoredKey, cred.StoredKey) && hmac.Equal(got.ServerKey, cred.ServerKey)
}

// String is the stored form of the credential (Kafka's
// ScramCredentialUtils.credentialToString).
func (c ScramCredential) String() string {
	enc := base64.StdEncoding
	return "salt=" + enc.EncodeToString(c.Salt) +
		",stored_key=" + enc.EncodeToString(c.StoredKey) +
		",server_key=" + enc.EncodeToString(c.ServerKey) +
		",iterations=" + strconv.Itoa(c.Iterations)
}

// ParseScramCredential reads the stored form, with the rules of Kafka's
// credentialFromString: comma-separated key=value tokens (a token without
// '=' or with an empty key fails; trailing empty tokens are dropped, as
// Java's split does; a later duplicate key wins), exactly the four keys
// salt, stored_key, server_key and iterations, values in standard base64
// (padding optional, as Java's decoder takes it) and a 32-bit decimal
// iteration count.
func ParseScramCredential(s string) (ScramCredential, error) {
	bad := func(why string) (ScramCredential, error) {
		return ScramCredential{}, fmt.Errorf("security: SCRAM credential not valid (%s)", why)
	}
	tokens := strings.Split(s, ",")
	for len(tokens) > 1 && tokens[len(tokens)-1] == "" {
		tokens = tokens[:len(tokens)-1]
	}
	props := map[string]string{}
	for _, t := range tokens {
		i := strings.IndexByte(t, '=')
		if i <= 0 {
			return bad("a token is not key=value")
		}
		props[t[:i]] = t[i+1:]
	}
	if len(props) != 4 {
		return bad("want exactly salt, stored_key, server_key and iterations")
	}
	var cred ScramCredential
	for _, f := range []struct {
		key string
		dst *[]byte
	}{{"salt", &cred.Salt}, {"stored_key", &cred.StoredKey}, {"server_key", &cred.ServerKey}} {
		v, ok := props[f.key]
		if !ok {
			return bad("missing " + f.key)
		}
		b, err := decodeJavaBase64(v)
		if err != nil {
			return bad(f.key + " is not base64")
		}
		*f.dst = b
	}
	v, ok := props["iterations"]
	if !ok {
		return bad("missing iterations")
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return bad("iterations is not a 32-bit integer")
	}
	cred.Iterations = int(n)
	return cred, nil
}

// decodeJavaBase64 decodes standard base64 the way java.util.Base64's basic
// decoder does: the '=' padding is optional, but when present it must be
// complete.
func decodeJavaBase64(s string) ([]byte, error) {
	if strings.HasSuffix(s, "=") {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}
