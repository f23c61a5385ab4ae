package broker

// IP connection rate quotas (Kafka's IpConfigHandler, KIP-612):
// /config/ips/<ip> and /config/ips/<default> carry
// connection_creation_rate, which the socket server's connection quotas
// enforce per client address. Every entity is loaded at start-up (Kafka's
// DynamicConfigManager.startup) and each "ips" change notification reloads
// the entity it names.

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

type ipQuotas struct {
	zk     *zkclient.Client
	server *network.Server
	logger *slog.Logger
}

func newIPQuotas(c *zkclient.Client, s *network.Server, logger *slog.Logger) *ipQuotas {
	return &ipQuotas{zk: c, server: s, logger: logger.With("component", "ip-config-handler")}
}

// loadAll applies every /config/ips entity.
func (q *ipQuotas) loadAll() error {
	names, err := q.zk.Children(zkpaths.ConfigPath(zkpaths.ConfigTypeIP, ""))
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := q.onChange(name); errors.Is(err, zkclient.ErrUndecodable) {
			// As the change listener does: logged, the IP keeps the default.
			q.logger.Error("ignoring an unreadable IP config node", "entity", name, "err", err)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// onChange handles the entity name of an "ips" change notification; only
// a failed read is an error (the caller retries).
func (q *ipQuotas) onChange(entity string) error {
	props, err := q.zk.GetEntityConfigs(zkpaths.ConfigTypeIP, entity)
	if err != nil {
		return fmt.Errorf("reading the changed config of IP %s: %w", entity, err)
	}
	q.apply(entity, props)
	return nil
}

// apply installs one entity's connection_creation_rate; a node without it
// (or deleted) removes the override, or resets the default to unlimited.
func (q *ipQuotas) apply(entity string, props map[string]string) {
	ip, err := config.ResolveIPEntity(entity)
	if err != nil {
		q.logger.Error("ignoring an IP quota: Unable to resolve address "+entity, "entity", entity)
		return
	}
	rate := -1
	if v, ok := props[config.IPConnectionRateKey]; ok {
		n, err := config.ParseIPConnectionRate(v)
		if err != nil {
			q.logger.Error("ignoring an invalid IP quota", "entity", entity, "err", err)
			return
		}
		rate = n
	}
	q.server.UpdateIPConnectionRate(ip, rate)
}

// ConnectionRateForIP is the connection_creation_rate in force for ip on
// this broker (math.MaxInt32 when none applies).
func (b *Broker) ConnectionRateForIP(ip netip.Addr) int {
	if b.server == nil {
		return network.Unlimited
	}
	return b.server.ConnectionRateForIP(ip)
}

// ConnectionCount is the number of open connections from ip on this
// broker's listeners.
func (b *Broker) ConnectionCount(ip netip.Addr) int {
	if b.server == nil {
		return 0
	}
	return b.server.ConnectionCount(ip)
}
