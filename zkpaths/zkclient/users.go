package zkclient

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// GetUserConfig reads /config/users/<sanitized user>; a missing node means
// no credentials and no quotas.
func (c *Client) GetUserConfig(user string) (zkpaths.UserConfig, error) {
	return c.GetSanitizedUserConfig(zkpaths.Sanitize(user))
}

// GetSanitizedUserConfig reads /config/users/<sanitized> by its znode name,
// as a change notification names it.
func (c *Client) GetSanitizedUserConfig(sanitized string) (zkpaths.UserConfig, error) {
	data, _, err := c.Get(zkpaths.ConfigPath(zkpaths.ConfigTypeUser, sanitized))
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.SplitUserConfig(nil), nil
	}
	if err != nil {
		return zkpaths.UserConfig{}, err
	}
	u, err := zkpaths.DecodeUserConfig(data)
	if err != nil {
		return zkpaths.UserConfig{}, fmt.Errorf("%w: config users/%s: %w", ErrUndecodable, sanitized, err)
	}
	return u, nil
}

// GetAllUserConfigs reads every /config/users/<user> node, keyed by the
// desanitized user name (AdminZkClient.fetchAllEntityConfigs for users).
// The <default> entity holds quotas only and is left out; a child whose
// name does not desanitize or whose data does not decode is reported in
// bad (sanitized name -> error) and skipped, so one broken node does not
// hide every other user.
func (c *Client) GetAllUserConfigs() (users map[string]zkpaths.UserConfig, bad map[string]error, err error) {
	kids, err := c.childrenOrEmpty(zkpaths.ConfigTypePath(zkpaths.ConfigTypeUser))
	if err != nil {
		return nil, nil, err
	}
	users, bad = map[string]zkpaths.UserConfig{}, map[string]error{}
	for _, k := range kids {
		if k == zkpaths.ConfigEntityDefault {
			continue
		}
		name, err := zkpaths.Desanitize(k)
		if err != nil {
			bad[k] = err
			continue
		}
		u, err := c.GetSanitizedUserConfig(k)
		if err != nil {
			if errors.Is(err, ErrClosed) {
				return nil, nil, err
			}
			bad[k] = err
			continue
		}
		users[name] = u
	}
	return users, bad, nil
}

// ChangeUserConfig writes user's complete config (credentials and
// quotas) and announces it with a config change notification
// {"version":2,"entity_path":"users/<sanitized user>"}, as
// AdminZkClient.changeConfigs does; an empty config deletes the node when
// it has no <user, client> children.
func (c *Client) ChangeUserConfig(user string, u zkpaths.UserConfig) error {
	return c.ChangeEntityConfigs(zkpaths.ConfigTypeUser, zkpaths.Sanitize(user), u.Config())
}
