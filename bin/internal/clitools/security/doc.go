// Package security turns the security properties of a Kafka client
// configuration (a tool's --command-config, --producer.config,
// --consumer.config, --producer-property, --consumer-property) into
// franz-go options, in one place every tool of bin/ uses: admintool's
// NewClient for the admin tools, the console producer and consumer for
// their own clients.
//
// Kafka classes and their Go files (apache/kafka 2.8, clients):
//
//	CommonClientConfigs security.protocol,       security.go (Parse: the protocol, the
//	  SaslConfigs, SslConfigs                      mechanism, the login, the TLS settings;
//	                                               Settings.Opts: kgo.DialTLSConfig and
//	                                               kgo.SASL with franz-go's pkg/sasl/plain
//	                                               and pkg/sasl/scram)
//	JaasContext.loadClientContext                jaas.go (the one login module of
//	  (sasl.jaas.config; the KafkaClient section   sasl.jaas.config, or of the KafkaClient
//	  of -Djava.security.auth.login.config)        section of the JAAS file named in
//	                                               KAFKA_OPTS, read by broker/security's
//	                                               JAAS parser; its username and password)
//	DefaultSslEngineFactory (client side)        tls.go (broker/security's ClientTLSConfig:
//	                                               JKS, PKCS12 and PEM stores, hostname
//	                                               verification as
//	                                               ssl.endpoint.identification.algorithm
//	                                               says, protocols and cipher suites)
//
// Goroutines: none.
//
// Invariants: a security property the tools cannot honour (GSSAPI,
// OAUTHBEARER, a callback handler or engine factory class, an unknown
// protocol, type or cipher suite) is an error naming the property, never
// silently ignored, so a tool never talks in plain text or without the
// asked-for authentication to a cluster its configuration says is secured.
// Properties of a layer the protocol does not use (ssl.* under
// SASL_PLAINTEXT, sasl.* under SSL) are ignored, as Kafka's clients ignore
// them.
package security
