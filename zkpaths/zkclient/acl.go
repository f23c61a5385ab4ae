package zkclient

import (
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// ZooKeeper ACLs of the znodes Klassik creates (zookeeper.set.acl), Kafka's
// ZkData.defaultAcls:
//
//	zookeeper.set.acl=false, and /consumers always   world:anyone:cdrwa
//	sensitive paths (zkpaths.IsSensitivePath:         auth::cdrwa
//	  /config/users, /config/brokers,
//	  /delegation_token/tokens and below)
//	every other path                                  auth::cdrwa, world:anyone:r
//
// "auth::cdrwa" is ZooKeeper's CREATOR_ALL_ACL: the server replaces it with
// one entry per identity the creating session authenticated as, e.g.
// "x509:CN=broker,O=Klassik:cdrwa" for a TLS client certificate or
// "digest:kafka:<base64 SHA-1 of kafka:password>:cdrwa" for digest
// authentication (auth.go). A session with no identity cannot create such
// nodes (ZooKeeper answers InvalidACL), hence ErrSecureACLsUnauthenticated.
// Everything Kafka leaves world-readable stays so: /brokers, /controller,
// /kafka-acl*, /config/topics, ... can be read, not changed, by anyone.

// ErrSecureACLsUnauthenticated: zookeeper.set.acl asks for creator ACLs but
// the session has no identity (neither a TLS client certificate nor digest
// credentials).
var ErrSecureACLsUnauthenticated = errors.New("zkclient: secure ACLs need an authenticated ZooKeeper session " +
	"(a TLS client certificate or digest credentials)")

// WithSecureACLs implements zookeeper.set.acl=true (see DefaultACL). The
// session must be authenticated: WithTLS with a client certificate, or
// WithDigestAuth.
func WithSecureACLs(secure bool) Option { return func(o *options) { o.secureACLs = secure } }

// DefaultACL is the ACL of a node created at the chroot-relative path,
// Kafka's ZkData.defaultAcls(isSecure, path).
func DefaultACL(path string, secure bool) []zk.ACL {
	if !secure || path == zkpaths.ConsumersPath {
		return zk.WorldACL(zk.PermAll)
	}
	if zkpaths.IsSensitivePath(path) {
		return zk.AuthACL(zk.PermAll)
	}
	return append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
}

// aclFor is the one place every create of the Client takes its ACL from.
func (c *Client) aclFor(path string) []zk.ACL { return DefaultACL(path, c.opts.secureACLs) }

// SecureACLs reports whether the Client creates nodes with secure ACLs.
func (c *Client) SecureACLs() bool { return c.opts.secureACLs }

// GetACL reads the ACL of the node at the chroot-relative path p.
func (c *Client) GetACL(p string) ([]zk.ACL, *zk.Stat, error) {
	var (
		acl []zk.ACL
		st  *zk.Stat
	)
	err := c.do("getACL", p, func(abs string) (err error) {
		acl, st, err = c.conn.GetACL(abs)
		return err
	})
	return acl, st, err
}

// SetACL replaces the ACL of p; version -1 matches any ACL version.
func (c *Client) SetACL(p string, acl []zk.ACL, version int32) (*zk.Stat, error) {
	var st *zk.Stat
	err := c.do("setACL", p, func(abs string) (err error) {
		st, err = c.conn.SetACL(abs, acl, version)
		return err
	})
	return st, err
}

// SetDefaultACL gives p the ACL a node created there now would get
// (DefaultACL with the Client's mode); the migration tool applies it to an
// existing tree.
func (c *Client) SetDefaultACL(p string) error {
	_, err := c.SetACL(p, c.aclFor(p), -1)
	return err
}
