package clitools

import (
	"os"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/zksecurity"
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
//     (kafka-configs and kafka-acls).
func ZooKeeperOptions(tlsConfigFile string) ([]zkclient.Option, error) {
	sys := security.SystemProperties(os.Getenv("KAFKA_OPTS"))
	login, _, err := security.ZooKeeperLoginFromSystemProperties(sys)
	if err != nil {
		return nil, err
	}
	props := security.ZooKeeperTLSFromSystemProperties(sys)
	if tlsConfigFile != "" {
		file, err := admintool.LoadProperties(tlsConfigFile)
		if err != nil {
			return nil, err
		}
		for k, v := range file {
			props[k] = v
		}
	}
	sec, err := config.ZooKeeperSecurityFromProperties(props)
	if err != nil {
		return nil, err
	}
	secure := login != nil || (tlsConfigFile != "" && sec.ZooKeeperTLSClientAuth())
	return zksecurity.ZooKeeperClientOptions(sec, secure, login)
}
