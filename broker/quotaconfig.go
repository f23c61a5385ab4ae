package broker

// Client quotas on every broker (Kafka's QuotaConfigHandler with
// ClientIdConfigHandler and the quota half of UserConfigHandler): at
// start-up, before the listeners open, the broker reads every
// /config/clients/<c>, /config/users/<u> and /config/users/<u>/clients/<c>
// node (with their <default>s) into its quota managers; afterwards the
// config change listener re-reads the node a "clients/…" or "users/…"
// notification names, so a quota set, changed or removed by
// kafka-configs, AlterClientQuotas or a direct ZooKeeper write applies to
// the next request without a restart.

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-zookeeper/zk"
	gometrics "github.com/rcrowley/go-metrics"

	"github.com/klassik/klassik/broker/quota"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// quotaManagersConfig is the quota part of the broker configuration.
func quotaManagersConfig(c *config.Config, reg gometrics.Registry) quota.Config {
	return quota.Config{
		ProducerDefault:     c.QuotaProducerDefault,
		ConsumerDefault:     c.QuotaConsumerDefault,
		WindowNum:           int(c.QuotaWindowNum),
		Window:              time.Duration(c.QuotaWindowSizeSeconds) * time.Second,
		ControllerWindowNum: int(c.ControllerQuotaWindowNum),
		ControllerWindow:    time.Duration(c.ControllerQuotaWindowSizeSeconds) * time.Second,
		Metrics:             reg,
	}
}

// clientQuotaConfigs keeps quota managers in step with /config/users and
// /config/clients.
type clientQuotaConfigs struct {
	zk     *zkclient.Client
	q      *quota.Managers
	logger *slog.Logger
}

func newClientQuotaConfigs(c *zkclient.Client, q *quota.Managers, logger *slog.Logger) *clientQuotaConfigs {
	return &clientQuotaConfigs{zk: c, q: q, logger: logger.With("component", "client-quotas")}
}

// loadAll applies every client and user quota node
// (DynamicConfigManager's start-up pass). A node that cannot be read is
// logged and skipped.
func (cq *clientQuotaConfigs) loadAll() error {
	clients, err := cq.children(zkpaths.ConfigTypePath(zkpaths.ConfigTypeClient))
	if err != nil {
		return err
	}
	for _, c := range clients {
		if err := cq.skipUndecodable(cq.reload(zkpaths.ConfigTypeClient, c)); err != nil {
			return err
		}
	}
	users, err := cq.children(zkpaths.ConfigTypePath(zkpaths.ConfigTypeUser))
	if err != nil {
		return err
	}
	for _, u := range users {
		if err := cq.skipUndecodable(cq.reload(zkpaths.ConfigTypeUser, u)); err != nil {
			return err
		}
		clients, err := cq.children(zkpaths.ConfigPath(zkpaths.ConfigTypeUser, u+"/"+zkpaths.ConfigTypeClient))
		if err != nil {
			return err
		}
		for _, c := range clients {
			if err := cq.skipUndecodable(cq.reload(zkpaths.ConfigTypeUser, u+"/"+zkpaths.ConfigTypeClient+"/"+c)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (cq *clientQuotaConfigs) children(p string) ([]string, error) {
	kids, err := cq.zk.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// skipUndecodable lets start-up go on past a quota node whose content
// cannot be decoded (logged; that entity keeps the defaults), as the
// change listener does and as the SCRAM credentials' load does; a failed
// read is still an error.
func (cq *clientQuotaConfigs) skipUndecodable(err error) error {
	if errors.Is(err, zkclient.ErrUndecodable) {
		cq.logger.Error("ignoring an unreadable quota config node", "err", err)
		return nil
	}
	return err
}

// onClientChange handles a "clients" notification.
func (cq *clientQuotaConfigs) onClientChange(entity string) error {
	return cq.reload(zkpaths.ConfigTypeClient, entity)
}

// onUserChange handles a "users" notification (user, <default>, or
// user/clients/client).
func (cq *clientQuotaConfigs) onUserChange(entity string) error {
	return cq.reload(zkpaths.ConfigTypeUser, entity)
}

// reload reads one entity's node and applies its quotas; a missing node
// removes them. Only a failed read is an error (the caller retries); an
// invalid entity path or value is logged and skipped.
func (cq *clientQuotaConfigs) reload(entityType, name string) error {
	e, err := quota.EntityFromZK(entityType, name)
	if err != nil {
		cq.logger.Warn("ignoring a quota config change with an invalid entity path", "entity_type", entityType, "entity", name, "err", err)
		return nil
	}
	cfg, err := cq.zk.GetEntityConfigs(entityType, name)
	if err != nil {
		return fmt.Errorf("reading the quota config of %s %s: %w", entityType, name, err)
	}
	if err := cq.q.UpdateEntity(e, cfg); err != nil {
		cq.logger.Error("ignoring an unreadable quota value", "entity", e.String(), "err", err)
	}
	quotas := map[string]string{}
	for _, k := range []string{quota.ProducerByteRate, quota.ConsumerByteRate, quota.RequestPercentage, quota.ControllerMutationRate} {
		if v, ok := cfg[k]; ok {
			quotas[k] = v
		}
	}
	cq.logger.Info("client quotas updated", "entity", e.String(), "quotas", quotas)
	return nil
}

// ClientQuotas are this broker's client quota managers (nil before
// Startup).
func (b *Broker) ClientQuotas() *quota.Managers { return b.quotas }
