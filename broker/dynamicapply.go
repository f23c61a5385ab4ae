package broker

// Applying dynamic broker configs to the running components (Kafka's
// BrokerReconfigurables of DynamicBrokerConfig): the socket server's
// connection quotas (SocketServer.reconfigure, ListenerConnectionQuota),
// the replica fetcher pool (DynamicThreadPool: num.replica.fetchers), the
// log cleaner (LogCleaner.reconfigure) and the listeners' TLS stores
// (DynamicListenerConfig / SslFactory, listenertls.go). Each component
// subscribes to its keys on config.Dynamic and gets the old and new
// Config after the swap.

import (
	"slices"
	"strings"
	"time"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/config"
)

// connectionQuotaConfig is the socket server's connection limits from c.
func connectionQuotaConfig(c *config.Config) network.ConnectionQuotaConfig {
	qc := network.ConnectionQuotaConfig{
		MaxConnectionsPerIP:          int(c.MaxConnectionsPerIP),
		MaxConnectionsPerIPOverrides: c.MaxConnectionsPerIPOverridesMap(),
		MaxConnections:               int(c.MaxConnections),
		MaxConnectionCreationRate:    int(c.MaxConnectionCreationRate),
		Listeners:                    map[string]network.ListenerConnectionQuota{},
		InterBrokerListener:          c.EffectiveInterBrokerListenerName(),
		QuotaWindowNum:               int(c.QuotaWindowNum),
		QuotaWindowSize:              time.Duration(c.QuotaWindowSizeSeconds) * time.Second,
	}
	for _, e := range c.ListenerEndpoints() {
		maxConns, rate := c.ListenerConnectionQuota(e.ListenerName)
		qc.Listeners[e.ListenerName] = network.ListenerConnectionQuota{MaxConnections: maxConns, MaxConnectionCreationRate: rate}
	}
	return qc
}

// connectionQuotaKeys are the keys whose change reaches the connection
// quotas: Kafka's SocketServer.ReconfigurableConfigs and every listener's
// prefixed ListenerReconfigurableConfigs.
func connectionQuotaKeys(c *config.Config) []string {
	keys := []string{"max.connections.per.ip", "max.connections.per.ip.overrides", "max.connections", "max.connection.creation.rate"}
	for _, e := range c.ListenerEndpoints() {
		for _, k := range config.ListenerConnectionQuotaKeys {
			keys = append(keys, "listener.name."+strings.ToLower(e.ListenerName)+"."+k)
		}
	}
	return keys
}

// cleanerSettings are the log.cleaner.* keys of c.
func cleanerSettings(c *config.Config) storage.CleanerSettings {
	return storage.CleanerSettings{
		Threads:             int(c.LogCleanerThreads),
		DedupeBufferSize:    c.LogCleanerDedupeBufferSize,
		IOBufferSize:        int(c.LogCleanerIOBufferSize),
		IOBufferLoadFactor:  c.LogCleanerIOBufferLoadFactor,
		IOMaxBytesPerSecond: c.LogCleanerIOMaxBytesPerSecond,
		BackoffMs:           c.LogCleanerBackoffMs,
	}
}

// cleanerKeys are Kafka's LogCleaner.ReconfigurableConfigs.
var cleanerKeys = []string{"log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
	"log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms"}

// subscribeDynamicApply makes the components follow d; the returned
// function unsubscribes them all. The socket server, replica manager and
// log manager must exist.
func (b *Broker) subscribeDynamicApply(d *config.Dynamic) (cancel func()) {
	var cancels []func()
	cancels = append(cancels, d.Subscribe(connectionQuotaKeys(d.Current()), func(_, nc *config.Config) {
		b.server.UpdateConnectionQuotas(connectionQuotaConfig(nc))
	}))
	cancels = append(cancels, d.Subscribe([]string{"num.replica.fetchers"}, func(_, nc *config.Config) {
		b.replicas.ResizeFetcherPool(int(nc.NumReplicaFetchers))
	}))
	cancels = append(cancels, d.Subscribe(slices.Clone(cleanerKeys), func(_, nc *config.Config) {
		b.logs.ReconfigureCleaner(cleanerSettings(nc))
	}))
	if c := b.subscribeListenerTLS(d); c != nil {
		cancels = append(cancels, c)
	}
	return func() {
		for _, c := range cancels {
			c()
		}
	}
}

// addDynamicValidators registers the checks Kafka's reconfigurables make
// against the values in force: DynamicThreadPool's and LogCleaner's
// half-to-double rule, and each TLS listener's new stores (they load, and
// a key store keeps the DN and SANs).
func (b *Broker) addDynamicValidators() {
	b.dyn.AddValidator(config.ValidateDynamicChange)
	b.dyn.AddValidator(func(_, nc *config.Config) error { return b.ValidateListenerTLS(nc) })
}
