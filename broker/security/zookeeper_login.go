package security

import (
	"fmt"
	"strings"
)

// ZooKeeperClientContext is the JAAS section of a ZooKeeper client login
// (ZooKeeper's default for zookeeper.sasl.clientconfig).
const ZooKeeperClientContext = "Client"

// System properties (-Dname=value in KAFKA_OPTS) that steer the ZooKeeper
// client login, as Kafka's JaasUtils reads them.
const (
	JavaLoginConfigPropertyZK = "java.security.auth.login.config"
	ZkSaslClientProperty      = "zookeeper.sasl.client"       // "false" turns the login off
	ZkLoginContextProperty    = "zookeeper.sasl.clientconfig" // section name, default Client
)

// ZooKeeperLogin is the user and password of the JAAS Client section, used
// with ZooKeeper's digest scheme (zkclient/auth.go) because Klassik's
// ZooKeeper client has no SASL.
type ZooKeeperLogin struct {
	User, Password string
}

// SystemProperties extracts the -Dname=value options of a KAFKA_OPTS value
// (split on white space, as Kafka's scripts pass it to java); other JVM
// flags are ignored.
func SystemProperties(kafkaOpts string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(kafkaOpts) {
		if rest, ok := strings.CutPrefix(f, "-D"); ok && rest != "" {
			k, v, _ := strings.Cut(rest, "=")
			out[k] = v
		}
	}
	return out
}

// ZooKeeperLoginFromSystemProperties finds the ZooKeeper client login:
// nil without a JAAS file (or with zookeeper.sasl.client=false and no
// Client section). jaasFile is the file named, for messages.
func ZooKeeperLoginFromSystemProperties(sys map[string]string) (login *ZooKeeperLogin, jaasFile string, err error) {
	jaasFile = sys[JavaLoginConfigPropertyZK]
	if jaasFile == "" {
		return nil, "", nil
	}
	return nil, jaasFile, fmt.Errorf("%s=%s: the ZooKeeper client login is not wired yet", JavaLoginConfigPropertyZK, jaasFile)
}

// zkClientSystemProperties maps the zookeeper.* security keys to the
// ZooKeeper client's own system properties (Kafka's
// ZkSslConfigToSystemPropertyMap; note the camel case), which Kafka's
// tools honour through ZKClientConfig when given in KAFKA_OPTS.
var zkClientSystemProperties = map[string]string{
	"zookeeper.ssl.client.enable":                     "zookeeper.client.secure",
	"zookeeper.clientCnxnSocket":                      "zookeeper.clientCnxnSocket",
	"zookeeper.ssl.keystore.location":                 "zookeeper.ssl.keyStore.location",
	"zookeeper.ssl.keystore.password":                 "zookeeper.ssl.keyStore.password",
	"zookeeper.ssl.keystore.type":                     "zookeeper.ssl.keyStore.type",
	"zookeeper.ssl.truststore.location":               "zookeeper.ssl.trustStore.location",
	"zookeeper.ssl.truststore.password":               "zookeeper.ssl.trustStore.password",
	"zookeeper.ssl.truststore.type":                   "zookeeper.ssl.trustStore.type",
	"zookeeper.ssl.protocol":                          "zookeeper.ssl.protocol",
	"zookeeper.ssl.enabled.protocols":                 "zookeeper.ssl.enabledProtocols",
	"zookeeper.ssl.cipher.suites":                     "zookeeper.ssl.ciphersuites",
	"zookeeper.ssl.endpoint.identification.algorithm": "zookeeper.ssl.hostnameVerification",
	"zookeeper.ssl.crl.enable":                        "zookeeper.ssl.crl",
	"zookeeper.ssl.ocsp.enable":                       "zookeeper.ssl.ocsp",
}

// ZooKeeperTLSFromSystemProperties returns, under Kafka's key names, the
// ZooKeeper client TLS settings given as ZooKeeper system properties
// (hostnameVerification true/false becomes HTTPS/empty, as Kafka
// translates it).
func ZooKeeperTLSFromSystemProperties(sys map[string]string) map[string]string {
	out := map[string]string{}
	for key, prop := range zkClientSystemProperties {
		v, ok := sys[prop]
		if !ok {
			continue
		}
		if key == "zookeeper.ssl.endpoint.identification.algorithm" {
			if strings.EqualFold(v, "true") {
				v = "HTTPS"
			} else {
				v = ""
			}
		}
		out[key] = v
	}
	return out
}
