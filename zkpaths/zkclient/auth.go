package zkclient

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// Digest authentication. Kafka authenticates its ZooKeeper sessions with
// SASL (the JAAS "Client" section, DigestLoginModule or Kerberos) or with a
// TLS client certificate. go-zookeeper speaks no SASL, so Klassik offers
// the other scheme ZooKeeper has for a user and password: the digest
// scheme, ZooKeeper's "addauth digest user:password". It is not SASL
// DIGEST-MD5: the password goes to the server in the clear (use it over
// TLS or on a trusted network) and the identity the server records is
// "digest:user:<base64 SHA-1 of user:password>", so creator ACLs read
// "digest:kafka:Xt0...=:cdrwa" where a SASL login would give "sasl:kafka".
// ZooKeeper needs no server setting for it.
//
// go-zookeeper remembers the credentials of AddAuth and sends them again
// after every reconnect, before any other request, so a new session (after
// an expiry) carries the same identity.

type authInfo struct {
	scheme string
	data   []byte
}

// WithDigestAuth authenticates the session with ZooKeeper's digest scheme
// ("user:password"), giving WithSecureACLs an identity to grant creator
// rights to.
func WithDigestAuth(user, password string) Option {
	return func(o *options) {
		o.auth = append(o.auth, authInfo{scheme: "digest", data: []byte(user + ":" + password)})
	}
}

// authenticated reports whether the session will have an identity.
func (o *options) authenticated() bool {
	return len(o.auth) > 0 || (o.tls != nil && (len(o.tls.Certificates) > 0 || o.tls.GetClientCertificate != nil))
}

// addAuth sends every credential on a new connection.
func addAuth(zc *zk.Conn, auth []authInfo) error {
	for _, a := range auth {
		if err := zc.AddAuth(a.scheme, a.data); err != nil {
			return fmt.Errorf("zkclient: %s authentication: %w", a.scheme, err)
		}
	}
	return nil
}
