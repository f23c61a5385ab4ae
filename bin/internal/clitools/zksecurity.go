package clitools

import (
	"os"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// ZooKeeperOptions are the security options of a tool's ZooKeeper session
// (the tools with --zookeeper), as Kafka's tools decide them from the JVM
// system properties in KAFKA_OPTS:
//   - the JAAS Client section of -Djava.security.auth.login.config=FILE
//     authenticates the session (with ZooKeeper's digest scheme; see
//     zkpaths/zkclient/auth.go) and, as JaasUtils.isZkSaslEnabled does,
//     makes the nodes the tool creates secure;
//   - ZooKeeper's client properties (-Dzookeeper.client.secure=true,
//     -Dzookeeper.clientCnxnSocket=..., -Dzookeeper.ssl.keyStore.location=...)
//     turn on TLS, as ZKClientConfig reads them; tlsConfigFile (a
//     --zk-tls-config-file, "" for none) overrides them with Kafka's key
//     names, and then a client certificate also makes the nodes secure
//     (kafka-configs).
func ZooKeeperOptions(tlsConfigFile string) ([]zkclient.Option, error) {
	sec, login, err := zooKeeperSecurity(nil, tlsConfigFile)
	if err != nil {
		return nil, err
	}
	secure := login != nil || (tlsConfigFile != "" && sec.TLSClientAuth())
	return security.ZooKeeperClientOptions(sec, secure, login)
}

// AuthorizerZooKeeperOptions are the security options of kafka-acls'
// authorizer session (--authorizer-properties), as Kafka's AclAuthorizer
// configures its ZooKeeper client: TLS from the properties' zookeeper.ssl.*
// keys, each overridden by its authorizer.-prefixed form, with
// tlsConfigFile's keys (either form) added on top; the JAAS Client login
// as for every tool; secure ACLs exactly when zookeeper.set.acl says so.
func AuthorizerZooKeeperOptions(props map[string]string, tlsConfigFile string, setACL bool) ([]zkclient.Option, error) {
	sec, login, err := zooKeeperSecurity(props, tlsConfigFile)
	if err != nil {
		return nil, err
	}
	return security.ZooKeeperClientOptions(sec, setACL, login)
}

// zooKeeperSecurity merges, lowest first: ZooKeeper's system properties,
// props (with authorizer.<key> over <key>), the file (likewise).
func zooKeeperSecurity(props map[string]string, tlsConfigFile string) (security.ZooKeeperSecurity, *security.ZooKeeperLogin, error) {
	sys := security.SystemProperties(os.Getenv("KAFKA_OPTS"))
	login, _, err := security.ZooKeeperLoginFromSystemProperties(sys)
	if err != nil {
		return security.ZooKeeperSecurity{}, nil, err
	}
	merged := security.ZooKeeperTLSFromSystemProperties(sys)
	layer := func(m map[string]string) {
		for _, k := range config.ZooKeeperTLSKeys {
			if v, ok := m[k]; ok {
				merged[k] = v
			}
		}
		for _, k := range config.ZooKeeperTLSKeys {
			if v, ok := m["authorizer."+k]; ok {
				merged[k] = v
			}
		}
	}
	layer(props)
	if tlsConfigFile != "" {
		file, err := admintool.LoadProperties(tlsConfigFile)
		if err != nil {
			return security.ZooKeeperSecurity{}, nil, err
		}
		layer(file)
	}
	sec, err := config.ZooKeeperSecurityFromProperties(merged)
	if err != nil {
		return security.ZooKeeperSecurity{}, nil, err
	}
	return sec, login, nil
}
