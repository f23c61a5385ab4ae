package common

import "slices"

// Security protocol names Kafka knows (its SecurityProtocol enum), as they
// appear in listener.security.protocol.map and in the broker registration's
// listener_security_protocol_map. Klassik serves PLAINTEXT; the others are
// accepted in configuration and znodes so that Kafka's files parse.
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

// SecurityProtocols lists every protocol name, in Kafka's order.
var SecurityProtocols = []string{ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL}

// IsSecurityProtocol reports whether s is one of SecurityProtocols
// (upper case, exactly).
func IsSecurityProtocol(s string) bool {
	return slices.Contains(SecurityProtocols, s)
}
