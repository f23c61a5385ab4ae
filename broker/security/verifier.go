package security

import (
	"crypto/sha256"
	"crypto/subtle"
	"sync"
)

// PasswordVerifier checks a user name and password against the brokers'
// SASL users: the PLAIN users of the JAAS configuration and the SCRAM
// credentials in the CredentialCache (for the HTTP listener's basic
// authentication, klassik.http.auth). A SCRAM password is verified the way
// a SCRAM client proves it: SaltedPassword = PBKDF2(password, salt, i),
// ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey = H(ClientKey),
// compared with the stored StoredKey. Safe for concurrent use.
type PasswordVerifier struct {
	plain map[string]string
	cache *CredentialCache

	// mu guards the following: successful SCRAM checks by user and
	// password digest, with the StoredKey they matched, so a console
	// polling every second does not run PBKDF2 each time; a changed
	// credential no longer matches the remembered StoredKey.
	mu   sync.Mutex
	good map[[32]byte][]byte
}

// NewPasswordVerifier verifies against plain (user → password, from JAAS
// PlainLoginModule user_<name> options) and the SCRAM credentials in cache
// (nil: none).
func NewPasswordVerifier(plain map[string]string, cache *CredentialCache) *PasswordVerifier {
	return &PasswordVerifier{plain: plain, cache: cache, good: map[[32]byte][]byte{}}
}

// Verify reports whether password is user's PLAIN or SCRAM password.
func (v *PasswordVerifier) Verify(user, password string) bool {
	if user == "" || password == "" {
		return false
	}
	if want, ok := v.plain[user]; ok && subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1 {
		return true
	}
	if v.cache == nil {
		return false
	}
	for _, mech := range ScramMechanisms {
		cred, ok := v.cache.Get(mech, user)
		if !ok || cred.Iterations <= 0 {
			continue
		}
		key := sha256.Sum256([]byte(mech + "\x00" + user + "\x00" + password))
		v.mu.Lock()
		remembered, hit := v.good[key]
		v.mu.Unlock()
		if hit && subtle.ConstantTimeCompare(remembered, cred.StoredKey) == 1 {
			return true
		}
		if VerifyScramPassword(mech, password, cred) {
			v.mu.Lock()
			if len(v.good) > 1024 {
				clear(v.good)
			}
			v.good[key] = cred.StoredKey
			v.mu.Unlock()
			return true
		}
	}
	return false
}
