package security

// ZooKeeperClientContext is the JAAS section of a ZooKeeper client login
// (ZooKeeper's default for zookeeper.sasl.clientconfig).
const ZooKeeperClientContext = "Client"

// JavaLoginConfigPropertyZK names the JAAS file system property.
const JavaLoginConfigPropertyZK = "java.security.auth.login.config"

// ZooKeeperLogin is the user and password of the JAAS Client section,
// used with ZooKeeper's digest scheme (zkclient/auth.go).
type ZooKeeperLogin struct {
	User, Password string
}
