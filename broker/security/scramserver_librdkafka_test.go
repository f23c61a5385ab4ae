package security

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// TestScramServerLibrdkafkaNonce: librdkafka (kcat, confluent-kafka)
// builds its client-final nonce as its own nonce followed by the server's
// whole nonce, so the client nonce appears twice; Kafka accepts that (it
// checks only the proof) and so must Klassik.
func TestScramServerLibrdkafkaNonce(t *testing.T) {
	const mech, password, cnonce = MechanismScramSHA512, "alice-secret", "rdkafkaClientNonce0123456789abcd"
	cache := NewCredentialCache()
	cache.Put(mech, "alice", testCredential(t, mech, password, 4096))
	s, err := NewScramServer(mech, cache)
	if err != nil {
		t.Fatal(err)
	}
	bare := "n=alice,r=" + cnonce
	sf, _, err := s.Evaluate([]byte("n,," + bare))
	if err != nil {
		t.Fatalf("client-first: %v", err)
	}
	attrs := map[string]string{}
	for _, kv := range strings.Split(string(sf), ",") {
		attrs[kv[:1]] = kv[2:]
	}
	salt, _ := base64.StdEncoding.DecodeString(attrs["s"])
	iters, _ := strconv.Atoi(attrs["i"])
	f, err := NewScramFormatter(mech)
	if err != nil {
		t.Fatal(err)
	}
	salted, err := f.SaltedPassword(password, salt, iters)
	if err != nil {
		t.Fatal(err)
	}
	withoutProof := "c=biws,r=" + cnonce + attrs["r"] // librdkafka's form
	clientKey := f.ClientKey(salted)
	sig := f.HMAC(f.StoredKey(clientKey), []byte(bare+","+string(sf)+","+withoutProof))
	proof := make([]byte, len(clientKey))
	for i := range proof {
		proof[i] = clientKey[i] ^ sig[i]
	}
	final, done, err := s.Evaluate([]byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)))
	if err != nil || !done || !strings.HasPrefix(string(final), "v=") {
		t.Fatalf("client-final with librdkafka's nonce: %q, done=%v, %v", final, done, err)
	}
}
