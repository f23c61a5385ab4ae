package security

import (
	"crypto/tls"

	brokersecurity "github.com/klassik/klassik/broker/security"
)

// tlsConfig builds the client's TLS configuration from the ssl.*
// properties with the broker's own reader of them (broker/security:
// JKS, PKCS12 and PEM stores, inline PEM, hostname verification as
// ssl.endpoint.identification.algorithm says, protocols and cipher
// suites), so a tool and a broker read a property the same way. Without a
// truststore the system's roots are trusted, as the JVM's default
// truststore is.
func tlsConfig(props map[string]string) (*tls.Config, error) {
	return brokersecurity.ClientTLSConfig(props, "")
}
