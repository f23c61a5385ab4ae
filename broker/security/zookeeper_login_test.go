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
		sys := map[string]string{JavaLoginConfigPropertyZK: writeJaas(t, bad)}
		if _, _, err := ZooKeeperLoginFromSystemProperties(sys); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzZooKeeperJaas: the JAAS reader never panics or loops on any input,
// and a section it returns always has at least one module.
func FuzzZooKeeperJaas(f *testing.F) {
	for _, s := range []string{
		"Client { org.apache.zookeeper.server.auth.DigestLoginModule required username=\"a\" password='b'; };",
		"A{m r;};B{m r k=v;m2 o;};", "// c\n/* d */ X { y z a=\"\\\"\"; };", "Client {", "\"", "/*", "{};", "a { b c d = ; };",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		secs, err := zkParseJaasSections(s)
		if err != nil {
			return
		}
		for name, mods := range secs {
			if len(mods) == 0 {
				t.Fatalf("section %q without modules", name)
			}
		}
	})
}
