package broker

import (
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zooKeeperSecurityOptions are the TLS, authentication and ACL options of
// the broker's ZooKeeper session, which the controller shares:
// zookeeper.ssl.* (TLS, x509 identity), the JAAS Client section of
// -Djava.security.auth.login.config (WithSystemProperties; ZooKeeper's
// digest scheme) and zookeeper.set.acl; ZooKeeper's client system
// properties stand in for unset zookeeper.ssl.* keys, as in Kafka.
func (b *Broker) zooKeeperSecurityOptions() ([]zkclient.Option, error) {
	sec, err := b.cfg.ZooKeeperSecurityWith(b.opts.systemProperties)
	if err != nil {
		return nil, err
	}
	login, _, err := security.ZooKeeperLoginFromSystemProperties(b.opts.systemProperties)
	if err != nil {
		return nil, err
	}
	return security.ZooKeeperClientOptions(sec, sec.SetACL, login)
}
