package broker

import (
	"github.com/klassik/klassik/broker/security/zksecurity"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zooKeeperSecurityOptions are the TLS, authentication and ACL options of
// the broker's ZooKeeper session (zookeeper.ssl.*, the JAAS Client section,
// zookeeper.set.acl), which the controller shares.
func (b *Broker) zooKeeperSecurityOptions() ([]zkclient.Option, error) {
	sec := b.cfg.ZooKeeperSecurity()
	return zksecurity.ZooKeeperClientOptions(sec, sec.SetACL, nil)
}
