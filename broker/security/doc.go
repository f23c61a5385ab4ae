// Package security holds what the broker's security parts share: keystore
// and truststore loading for TLS listeners and clients (Kafka's
// DefaultSslEngineFactory), the TLS principal mapping
// (SslPrincipalMapper), JAAS configuration parsing (JaasContext), the
// SCRAM credential format and cache (ScramFormatter, ScramCredentialUtils,
// CredentialCache) and the SASL server mechanisms (PlainServer,
// ScramSaslServer).
//
// SASL files (Kafka class → file):
//
//	JaasConfig, JaasContext.loadServerContext   jaas.go (ParseJaasConfig, ParseJaasFile,
//	                                            ServerJaas.Context)
//	PlainSaslServer + PlainServerCallbackHandler plain.go (also the SaslServer contract and
//	                                            AuthenticationError, Kafka's
//	                                            SaslAuthenticationException)
//	ScramSaslServer, ScramMessages              scramserver.go
//	SaslChannelBuilder (per-listener servers)   authenticators.go
//	(Klassik) HTTP basic-auth password check    verifier.go (PasswordVerifier)
//
// TLS files:
//
//	DefaultSslEngineFactory (stores)      keystore.go (LoadKeyStore, LoadTrustStore: JKS, PKCS12, PEM),
//	                                      keystore_pkcs8.go (encrypted PKCS#8 keys for PEM)
//	SslConfigs, SslFactory (contexts)     tlsconfig.go (ParseSSLSettings, ServerTLSConfig[For],
//	                                      ClientTLSConfig, ListenerProperties)
//	SslPrincipalMapper, X500Principal     principal.go (NewSslPrincipalMapper, DistinguishedName)
//
// ZooKeeper client security files:
//
//	KafkaServer.initZkClient (zk security),  zookeeper.go (ZooKeeperSecurity, ZooKeeperClientOptions,
//	  KIP-515 ZKClientConfig TLS              ZooKeeperTLSConfig over the loaders above)
//	JaasUtils (zookeeper.sasl.*, Client)     zookeeper_login.go (ZooKeeperLoginFromSystemProperties:
//	                                         DigestLoginModule only, sent as ZooKeeper digest;
//	                                         ZooKeeperTLSFromSystemProperties)
//
// securitytest makes CA, broker and client stores with openssl and
// keytool for tests of any package.
//
// ACL value types (ResourcePattern, AccessControlEntry, AclBinding and their
// filters, SecurityUtils' names): acl.go, shared by the subpackage
// authorizer (Kafka's AclAuthorizer), the ACL APIs and kafka-acls.sh.
package security
