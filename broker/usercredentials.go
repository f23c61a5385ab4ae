package broker

// SCRAM credentials on every broker (Kafka's CredentialProvider with the
// credential half of UserConfigHandler): at start-up, before the listeners
// open, the broker reads every /config/users/<user> into its
// security.CredentialCache; afterwards the config change listener applies
// each "users/<user>" notification by re-reading that node, so new,
// changed and deleted credentials take effect for the next authentication
// without a restart. Notifications for <user, client> quota entities and
// the <default> user carry no credentials and change nothing here.

import (
	"fmt"
	"log/slog"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// userCredentials keeps a CredentialCache in step with /config/users.
type userCredentials struct {
	zk     *zkclient.Client
	cache  *security.CredentialCache
	logger *slog.Logger
}

func newUserCredentials(c *zkclient.Client, cache *security.CredentialCache, logger *slog.Logger) *userCredentials {
	return &userCredentials{zk: c, cache: cache, logger: logger.With("component", "credential-provider")}
}

// loadAll fills the cache from every user node (DynamicConfigManager's
// start-up pass over the users entity). A node that cannot be read or
// decoded is logged and skipped, so one bad node locks out only its user.
func (u *userCredentials) loadAll() error {
	users, bad, err := u.zk.GetAllUserConfigs()
	if err != nil {
		return err
	}
	for name, err := range bad {
		u.logger.Error("ignoring an unreadable user config node; the user has no SCRAM credentials", "entity", name, "err", err)
	}
	for user, cfg := range users {
		u.apply(user, cfg)
	}
	return nil
}

// onChange handles the entity name of a "users" change notification.
func (u *userCredentials) onChange(entity string) error {
	user, ok, err := zkpaths.UserCredentialEntity(entity)
	if err != nil {
		u.logger.Warn("ignoring a user config change with an invalid entity path", "entity", entity, "err", err)
		return nil
	}
	if !ok {
		return nil // quotas only
	}
	cfg, err := u.zk.GetSanitizedUserConfig(entity)
	if err != nil {
		return fmt.Errorf("reading the changed credentials of user %s: %w", user, err)
	}
	u.apply(user, cfg)
	return nil
}

// apply replaces user's credentials with those of cfg (Kafka's
// updateCredentials): a mechanism missing from the node is removed. A
// credential string that does not parse is logged and treated as absent,
// so a damaged credential fails closed.
func (u *userCredentials) apply(user string, cfg zkpaths.UserConfig) {
	creds := map[string]security.ScramCredential{}
	for mech, s := range cfg.Scram {
		c, err := security.ParseScramCredential(s)
		if err != nil {
			u.logger.Error("ignoring an unreadable SCRAM credential", "user", user, "mechanism", mech, "err", err)
			continue
		}
		creds[mech] = c
	}
	u.cache.SetUser(user, creds)
	mechs := make([]string, 0, len(creds))
	for _, m := range security.ScramMechanisms {
		if _, ok := creds[m]; ok {
			mechs = append(mechs, m)
		}
	}
	u.logger.Info("SCRAM credentials updated", "user", user, "mechanisms", mechs)
}
