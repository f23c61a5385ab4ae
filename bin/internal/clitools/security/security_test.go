package security

import (
	"os"
	"strings"
	"testing"
)

func TestParseProtocolsAndMechanisms(t *testing.T) {
	for _, tc := range []struct {
		name    string
		props   map[string]string
		want    Settings // TLS compared as nil / non-nil
		wantTLS bool
		err     string
	}{
		{name: "default is PLAINTEXT", props: map[string]string{}, want: Settings{Protocol: Plaintext}},
		{name: "lower-case protocol", props: map[string]string{"security.protocol": "ssl"}, want: Settings{Protocol: SSL}, wantTLS: true},
		{name: "unknown protocol", props: map[string]string{"security.protocol": "TLS"},
			err: "Invalid value TLS for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{name: "SCRAM over SASL_SSL", props: map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="a-secret";`},
			want: Settings{Protocol: SaslSSL, Mechanism: MechanismScramSHA512, Username: "alice", Password: "a-secret"}, wantTLS: true},
		{name: "PLAIN over SASL_PLAINTEXT", props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username=admin password='p "q";';`},
			want: Settings{Protocol: SaslPlaintext, Mechanism: MechanismPlain, Username: "admin", Password: `p "q";`}},
		{name: "GSSAPI is Kafka's default mechanism", props: map[string]string{"security.protocol": "SASL_PLAINTEXT"},
			err: "sasl.mechanism GSSAPI is not supported"},
		{name: "OAUTHBEARER", props: map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"},
			err: "sasl.mechanism OAUTHBEARER is not supported"},
		{name: "no login", props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"},
			err: "Could not find a 'KafkaClient' entry"},
		{name: "two login modules", props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b"; org.apache.kafka.common.security.plain.PlainLoginModule required username="c" password="d";`},
			err: "contains 2 login modules, should be 1 module"},
		{name: "Kerberos module", props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;`},
			err: "login module com.sun.security.auth.module.Krb5LoginModule is not supported"},
		{name: "missing ;", props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b"`},
			err: "JAAS config entry not terminated by semi-colon"},
		{name: "callback handler", props: map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config":                   `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`,
			"sasl.client.callback.handler.class": "com.example.Handler"},
			err: "sasl.client.callback.handler.class=com.example.Handler is not supported"},
		{name: "engine factory", props: map[string]string{"security.protocol": "SSL", "ssl.engine.factory.class": "com.example.F"},
			err: "ssl.engine.factory.class"},
		{name: "key manager at its default", props: map[string]string{"security.protocol": "SSL", "ssl.keymanager.algorithm": "SunX509"},
			want: Settings{Protocol: SSL}, wantTLS: true},
		{name: "ssl keys ignored under SASL_PLAINTEXT", props: map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
			"ssl.engine.factory.class": "com.example.F",
			"sasl.jaas.config":         `org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="b";`},
			want: Settings{Protocol: SaslPlaintext, Mechanism: MechanismScramSHA256, Username: "a", Password: "b"}},
		{name: "unknown store type", props: map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent", "ssl.truststore.type": "BKS"},
			err: `ssl.truststore.type: store type "BKS" is not supported`},
		{name: "endpoint identification", props: map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldaps"},
			err: `ssl.endpoint.identification.algorithm: "ldaps" is not supported`},
		{name: "cipher suite", props: map[string]string{"security.protocol": "SSL", "ssl.cipher.suites": "TLS_FOO"},
			err: "ssl.cipher.suites: "},
		{name: "inline truststore needs PEM", props: map[string]string{"security.protocol": "SSL", "ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----"},
			err: "ssl.truststore.certificates can be specified only for PEM, but ssl.truststore.type is JKS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.props)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse: %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if (s.TLS != nil) != tc.wantTLS {
				t.Fatalf("TLS config %v, want one: %v", s.TLS, tc.wantTLS)
			}
			got := *s
			got.TLS = nil
			if got != tc.want {
				t.Fatalf("Parse = %+v, want %+v", got, tc.want)
			}
			if n := len(s.Opts()); n != btoi(tc.wantTLS)+btoi(s.UsesSASL()) {
				t.Fatalf("%d kgo options", n)
			}
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestJaasFileFromKafkaOpts(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/client_jaas.conf"
	writeFile(t, file, `// a client's JAAS file
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="x";
};
KafkaClient {
  org.apache.kafka.common.security.scram.ScramLoginModule required
    username="bob" /* the user */ password="bob-secret";
};
`)
	t.Setenv("KAFKA_OPTS", "-Xmx1G -Djava.security.auth.login.config="+file)
	s, err := Parse(map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Username != "bob" || s.Password != "bob-secret" {
		t.Fatalf("login %q/%q", s.Username, s.Password)
	}
}

func TestRequirePlaintext(t *testing.T) {
	if err := RequirePlaintext(map[string]string{"security.protocol": "plaintext"}, "x"); err != nil {
		t.Fatal(err)
	}
	err := RequirePlaintext(map[string]string{"security.protocol": "SSL"}, "the old consumer (--zookeeper)")
	if err == nil || !strings.Contains(err.Error(), "security.protocol=SSL is not supported by the old consumer (--zookeeper)") {
		t.Fatalf("RequirePlaintext(SSL): %v", err)
	}
}
