package zkclient

// ACL storage operations of Kafka's KafkaZkClient (createAclPaths,
// getVersionedAclsForResource, conditionalSetAclsForResource,
// createAclsForResourceIfNotExists, conditionalDelete,
// createAclChangeNotification, getResourceTypes, getResourceNames). Paths
// and JSON are zkpaths'; the authorizer decides what to write.

import (
	"errors"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// NoACLVersion is the version of a resource node that does not exist
// (Kafka's ZkVersion.UnknownVersion): a conditional delete with it succeeds
// only when the node is absent.
const NoACLVersion int32 = -2

// CreateACLPaths creates both ACL stores with a directory per resource
// type and both change folders; existing nodes are fine.
func (c *Client) CreateACLPaths() error {
	for _, pt := range []string{zkpaths.ACLPatternLiteral, zkpaths.ACLPatternPrefixed} {
		for _, rt := range zkpaths.ACLResourceTypes {
			if err := c.EnsurePath(zkpaths.ACLResourceTypePath(pt, rt)); err != nil {
				return err
			}
		}
		if err := c.EnsurePath(zkpaths.ACLChangesPath(pt)); err != nil {
			return err
		}
	}
	return nil
}

// GetACLResourceTypes lists the resource type directories of a store
// (none when the store is missing).
func (c *Client) GetACLResourceTypes(patternType string) ([]string, error) {
	return c.childrenOrEmpty(zkpaths.ACLStorePath(patternType))
}

// GetACLResourceNames lists the resources of one type in a store.
func (c *Client) GetACLResourceNames(patternType, resourceType string) ([]string, error) {
	return c.childrenOrEmpty(zkpaths.ACLResourceTypePath(patternType, resourceType))
}

// GetACLs reads a resource node: its raw data and version, or
// NoACLVersion and nil data when it does not exist.
func (c *Client) GetACLs(patternType, resourceType, name string) ([]byte, int32, error) {
	data, st, err := c.Get(zkpaths.ACLResourcePath(patternType, resourceType, name))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, NoACLVersion, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return data, st.Version, nil
}

// ConditionalSetACLs overwrites an existing resource node if its version is
// still version. ok is false (and err nil) when the node changed or
// vanished meanwhile; newVersion is the version written.
func (c *Client) ConditionalSetACLs(patternType, resourceType, name string, data []byte, version int32) (ok bool, newVersion int32, err error) {
	st, err := c.Set(zkpaths.ACLResourcePath(patternType, resourceType, name), data, version)
	if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
		return false, NoACLVersion, nil
	}
	if err != nil {
		return false, 0, err
	}
	return true, st.Version, nil
}

// CreateACLsIfNotExists creates a resource node (its type directory must
// exist; CreateACLPaths makes them). ok is false when another writer
// created it first.
func (c *Client) CreateACLsIfNotExists(patternType, resourceType, name string, data []byte) (ok bool, err error) {
	p := zkpaths.ACLResourcePath(patternType, resourceType, name)
	_, err = c.Create(p, data, 0)
	if errors.Is(err, zk.ErrNoNode) {
		// A store made by an older tool may lack the type directory.
		_, err = c.CreateRecursive(p, data, 0)
	}
	if errors.Is(err, zk.ErrNodeExists) {
		return false, nil
	}
	return err == nil, err
}

// ConditionalDeleteACLs deletes a resource node at version; a missing node
// counts as deleted, a changed one reports ok false.
func (c *Client) ConditionalDeleteACLs(patternType, resourceType, name string, version int32) (ok bool, err error) {
	err = c.Delete(zkpaths.ACLResourcePath(patternType, resourceType, name), version)
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode):
		return true, nil
	case errors.Is(err, zk.ErrBadVersion):
		return false, nil
	}
	return false, err
}

// CreateACLChangeNotification creates the persistent sequential change
// node announcing that a resource's ACLs changed: data is
// zkpaths.EncodeLiteralACLChange for literal patterns and
// ExtendedACLChange.Encode otherwise. It returns the child name.
func (c *Client) CreateACLChangeNotification(patternType string, data []byte) (string, error) {
	if err := c.EnsurePath(zkpaths.ACLChangesPath(patternType)); err != nil {
		return "", err
	}
	p, err := c.Create(zkpaths.ACLChangeSeqPath(patternType), data, PersistentSequential)
	if err != nil {
		return "", err
	}
	return baseName(p), nil
}
