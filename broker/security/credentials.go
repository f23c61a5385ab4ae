package security

import "sync"

// SASL mechanism names, as Kafka spells them in sasl.enabled.mechanisms and
// in /config/users/<user>.
const (
	MechanismPlain       = "PLAIN"
	MechanismScramSHA256 = "SCRAM-SHA-256"
	MechanismScramSHA512 = "SCRAM-SHA-512"
)

// ScramMechanisms are the SCRAM mechanisms Klassik serves, in Kafka's order.
var ScramMechanisms = []string{MechanismScramSHA256, MechanismScramSHA512}

// ScramCredential is one user's stored SCRAM credential for one mechanism
// (RFC 5802: the salt, StoredKey = H(ClientKey), ServerKey, and the
// iteration count), as Kafka's ScramCredential holds it.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int
}

// CredentialCache holds the SCRAM credentials of every user by mechanism
// (Kafka's CredentialCache). The broker fills it from /config/users/<user>
// at start-up and on every change notification; the SCRAM server mechanism
// reads it for each authentication. It is safe for concurrent use.
type CredentialCache struct {
	// mu guards the following.
	mu    sync.RWMutex
	creds map[string]map[string]ScramCredential // mechanism -> user -> credential
}

// NewCredentialCache returns an empty cache.
func NewCredentialCache() *CredentialCache {
	return &CredentialCache{creds: map[string]map[string]ScramCredential{}}
}

// Get returns user's credential for mechanism.
func (c *CredentialCache) Get(mechanism, user string) (ScramCredential, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cred, ok := c.creds[mechanism][user]
	return cred, ok
}

// Put stores (or replaces) user's credential for mechanism.
func (c *CredentialCache) Put(mechanism, user string, cred ScramCredential) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.creds[mechanism]
	if m == nil {
		m = map[string]ScramCredential{}
		c.creds[mechanism] = m
	}
	m[user] = cred
}

// Remove deletes user's credential for mechanism.
func (c *CredentialCache) Remove(mechanism, user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.creds[mechanism], user)
}

// SetUser replaces every credential of user with creds (mechanism ->
// credential); mechanisms absent from creds are removed. A change
// notification for /config/users/<user> is applied with one call.
func (c *CredentialCache) SetUser(user string, creds map[string]ScramCredential) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for mech, m := range c.creds {
		if _, keep := creds[mech]; !keep {
			delete(m, user)
		}
	}
	for mech, cred := range creds {
		m := c.creds[mech]
		if m == nil {
			m = map[string]ScramCredential{}
			c.creds[mech] = m
		}
		m[user] = cred
	}
}
