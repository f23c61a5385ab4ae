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
