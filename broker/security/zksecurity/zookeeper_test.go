package zksecurity

import (
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/config"
)

// Secure ACLs need an identity: the start-up error, Kafka's wording.
func TestZooKeeperClientOptions(t *testing.T) {
	if _, err := ZooKeeperClientOptions(config.ZooKeeperSecurityConfig{SetACL: true}, true, nil); err == nil ||
		!strings.HasPrefix(err.Error(), "zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least zookeeper.ssl.client.enable") {
		t.Fatalf("no identity: %v", err)
	}
	if opts, err := ZooKeeperClientOptions(config.ZooKeeperSecurityConfig{SetACL: true}, true, &security.ZooKeeperLogin{User: "u", Password: "p"}); err != nil || len(opts) != 2 {
		t.Fatalf("digest: %d %v", len(opts), err)
	}
	tlsOnly := config.ZooKeeperSecurityConfig{SetACL: true, TLS: &config.ZooKeeperTLSConfig{EnabledProtocols: []string{"TLSv1.2"}}}
	if _, err := ZooKeeperClientOptions(tlsOnly, true, nil); err == nil {
		t.Fatalf("TLS without a key store accepted as an identity")
	}
	got := security.ZooKeeperTLSFromSystemProperties(security.SystemProperties("-Dzookeeper.client.secure=true -Dzookeeper.ssl.keyStore.location=/k.p12 -Dzookeeper.ssl.hostnameVerification=false"))
	if got["zookeeper.ssl.client.enable"] != "true" || got["zookeeper.ssl.keystore.location"] != "/k.p12" || got["zookeeper.ssl.endpoint.identification.algorithm"] != "" || len(got) != 3 {
		t.Fatalf("system properties: %v", got)
	}
}
