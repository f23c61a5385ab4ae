// Package security holds what the broker's security parts share: keystore
// and truststore loading for TLS listeners and clients (Kafka's
// DefaultSslEngineFactory), the TLS principal mapping
// (SslPrincipalMapper), JAAS configuration parsing (JaasContext), the
// SCRAM credential format and cache (ScramFormatter, ScramCredentialUtils,
// CredentialCache) and the SASL server mechanisms (PlainServer,
// ScramSaslServer).
//
// The ACL authorizer (Kafka's AclAuthorizer) is the subpackage authorizer.
package security
