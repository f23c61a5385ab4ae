package security

import (
	"strings"
	"testing"
)

// The ZooKeeper client login of a JAAS file, as JaasUtils finds it: the
// Client section (or zookeeper.sasl.clientconfig's), DigestLoginModule
// only.
func TestZooKeeperLogin(t *testing.T) {
	file := writeJaas(t, `
// brokers
KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin" password="admin-secret" user_admin="admin-secret";
};
/* the ZooKeeper login */
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password="s3cr;t \"q\"";
};
ZkOther { org.apache.zookeeper.server.auth.DigestLoginModule required username=other password=pw; };
Kerberos { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };
`)
	sys := SystemProperties("-Xmx1g -Djava.security.auth.login.config=" + file + " -XX:+UseG1GC")
	l, f, err := ZooKeeperLoginFromSystemProperties(sys)
	if err != nil || f != file || l == nil || l.User != "kafka" || l.Password != `s3cr;t "q"` {
		t.Fatalf("Client login: %+v %q %v", l, f, err)
	}
	sys[ZkLoginContextProperty] = "ZkOther"
	if l, _, err := ZooKeeperLoginFromSystemProperties(sys); err != nil || l.User != "other" || l.Password != "pw" {
		t.Fatalf("zookeeper.sasl.clientconfig: %+v %v", l, err)
	}
	sys[ZkLoginContextProperty] = "Kerberos"
	if _, _, err := ZooKeeperLoginFromSystemProperties(sys); err == nil || !strings.Contains(err.Error(), "Krb5LoginModule is not supported") {
		t.Fatalf("Kerberos: %v", err)
	}
	sys[ZkLoginContextProperty] = "Missing"
	if l, f, err := ZooKeeperLoginFromSystemProperties(sys); err != nil || l != nil || f != file {
		t.Fatalf("no such section: %+v %v", l, err)
	}
	delete(sys, ZkLoginContextProperty)
	sys[ZkSaslClientProperty] = "false"
	if _, _, err := ZooKeeperLoginFromSystemProperties(sys); err == nil || !strings.Contains(err.Error(), "Exception while determining if ZooKeeper is secure") {
		t.Fatalf("zookeeper.sasl.client=false: %v", err)
	}
	if l, f, err := ZooKeeperLoginFromSystemProperties(map[string]string{}); l != nil || f != "" || err != nil {
		t.Fatalf("no JAAS file: %+v %q %v", l, f, err)
	}
	for _, bad := range []string{"Client {", "Client { x required username=a password=b; }", "Client { org.apache.zookeeper.server.auth.DigestLoginModule required username=; };", "/* open"} {
		sys := map[string]string{JavaLoginConfigProperty: writeJaas(t, bad)}
		if _, _, err := ZooKeeperLoginFromSystemProperties(sys); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Secure ACLs need an identity: the start-up error, Kafka's wording.
func TestZooKeeperClientOptions(t *testing.T) {
	if _, err := ZooKeeperClientOptions(ZooKeeperSecurity{SetACL: true}, true, nil); err == nil ||
		!strings.HasPrefix(err.Error(), "zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least zookeeper.ssl.client.enable") {
		t.Fatalf("no identity: %v", err)
	}
	if opts, err := ZooKeeperClientOptions(ZooKeeperSecurity{SetACL: true}, true, &ZooKeeperLogin{User: "u", Password: "p"}); err != nil || len(opts) != 2 {
		t.Fatalf("digest: %d %v", len(opts), err)
	}
	tlsOnly := ZooKeeperSecurity{SetACL: true, TLS: &ZooKeeperTLS{EnabledProtocols: []string{"TLSv1.2"}}}
	if _, err := ZooKeeperClientOptions(tlsOnly, true, nil); err == nil {
		t.Fatalf("TLS without a key store accepted as an identity")
	}
	got := ZooKeeperTLSFromSystemProperties(SystemProperties("-Dzookeeper.client.secure=true -Dzookeeper.ssl.keyStore.location=/k.p12 -Dzookeeper.ssl.hostnameVerification=false"))
	if got["zookeeper.ssl.client.enable"] != "true" || got["zookeeper.ssl.keystore.location"] != "/k.p12" || got["zookeeper.ssl.endpoint.identification.algorithm"] != "" || len(got) != 3 {
		t.Fatalf("system properties: %v", got)
	}
}
