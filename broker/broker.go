package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/console"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/loglevels"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/metrics"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/quota"
	"github.com/klassik/klassik/broker/replica"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/authorizer"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/txn"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/controller"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// Option tunes a Broker beyond server.properties; used by tests.
type Option func(*options)

type options struct {
	fixedStartIndex       int
	wrapHandler           func(network.Handler) network.Handler
	withoutRequestMetrics bool
	systemProperties      map[string]string // -D options of KAFKA_OPTS (WithSystemProperties)
	credentials           *security.CredentialCache
	logLevels             *loglevels.Registry        // WithLogLevels (brokerloggers.go)
	configChangeFault     func() error               // WithConfigChangeFault (configlistener.go)
	configReloadFault     func(string, string) error // WithConfigReloadFault (configlistener.go)
	configRetryMin        time.Duration              // WithConfigChangeRetry (configlistener.go)
	configRetryMax        time.Duration
}

// WithFixedStartIndex makes replica assignment of topic creation
// deterministic: s ≥ 0 fixes both the start index and
// the shift; -1 (the default) draws them at random as Kafka does.
func WithFixedStartIndex(s int) Option { return func(o *options) { o.fixedStartIndex = s } }

// WithHandlerWrapper wraps the request handler handed to the socket server,
// e.g. to intercept requests by API key in tests.
func WithHandlerWrapper(w func(network.Handler) network.Handler) Option {
	return func(o *options) { o.wrapHandler = w }
}

// Broker is Kafka's KafkaServer: it wires the ZooKeeper client, the log
// manager, the socket server, the request handlers, the replica manager and
// the controller module, and runs start-up and shutdown in Kafka's order.
type Broker struct {
	cfg *config.Config
	// dyn is the current configuration: cfg with the dynamic broker configs
	// of /config/brokers layered over it (dynamicconfig.go). Read settings
	// that may change at run time through dyn.Current().
	dyn        *config.Dynamic
	stopDynLog func()
	// stopDynApply unsubscribes the components of dynamicapply.go.
	stopDynApply func()
	opts         options
	logger       *slog.Logger
	// logLevels holds the levels of the loggers logger hands out
	// (brokerloggers.go).
	logLevels *loglevels.Registry

	// Set during Startup, read-only afterwards (Shutdown runs after Startup
	// returned).
	zk             *zkclient.Client
	clusterID      string
	brokerID       int32
	logs           *storage.LogManager
	meta           *metadata.Cache
	replicas       *replica.Manager
	apis           *api.Apis
	server         *network.Server
	ctrl           *controller.Controller
	groups         *group.Coordinator
	txn            *txn.Coordinator
	markers        *markerChannel
	cfgWatch       *configChangeListener
	regInfo        zkpaths.BrokerInfo
	stopNewSession func()
	web            *webServer             // klassik.http.listener; nil when off
	dirFailures    *logDirFailureHandler  // logdirfailure.go
	authz          *authorizer.Authorizer // authorizer.class.name; nil when unset

	// listenerTLS holds the TLS configuration of each SSL and SASL_SSL
	// listener, set by New (loadTLS).
	listenerTLS map[string]network.ListenerConfig
	// tlsStates are the reloadable stores of those listeners
	// (listenertls.go).
	tlsStates map[string]*listenerTLSState
	ipQuotas  *ipQuotas

	epoch atomic.Int64 // broker epoch: czxid of our registration
	state atomic.Int64 // Kafka's BrokerState value (brokermetrics.go)

	// SASL (sasl.go), set in New: the SCRAM credentials, the server
	// mechanisms of the SASL listeners, the HTTP basic-auth checker and
	// the dialer every inter-broker connection uses (TLS and SASL login
	// of the inter-broker listener).
	credentials     *security.CredentialCache
	authenticators  *security.Authenticators
	passwords       *security.PasswordVerifier
	interBrokerTLS  func() *tls.Config // the inter-broker listener's client stores in force; nil: plain TCP
	interBrokerDial network.DialFunc

	// metrics is this broker's registry (Kafka metric names); never the
	// process-wide default, so in-process clusters keep them apart.
	metrics gometrics.Registry

	topicCfgs *topicConfigCache

	// replQuotas are the replication throttles (replicationquotas.go),
	// made in buildComponents.
	replQuotas *replicationQuotas

	// userCreds loads b.credentials (every user's SCRAM credentials,
	// Kafka's CredentialProvider, made in New) from /config/users before
	// the listeners open and keeps it current from change notifications.
	userCreds *userCredentials
	// quotas are the client quota managers, clientQuotas keeps them in
	// step with /config/users and /config/clients (quotaconfig.go).
	quotas       *quota.Managers
	clientQuotas *clientQuotaConfigs

	// console is the web console's handler (broker/console), mounted at
	// "/" of the HTTP listener; consoleSrc is its view of this broker.
	console    http.Handler
	consoleSrc *consoleSource

	// mu guards the following.
	mu       sync.Mutex
	started  bool
	shutdown bool
}

// New validates cfg and returns an unstarted broker.
func New(cfg *config.Config, logger *slog.Logger, opts ...Option) (*Broker, error) {
	if cfg == nil {
		return nil, errors.New("broker: nil config")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := replica.LoadTestFetchFault(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	o := options{fixedStartIndex: -1}
	for _, opt := range opts {
		opt(&o)
	}
	b := &Broker{cfg: cfg, dyn: config.NewDynamic(cfg), opts: o, logger: logger, brokerID: cfg.BrokerID, metrics: metrics.NewVersionedRegistry(),
		credentials: security.NewCredentialCache()}
	b.logLevels, b.logger = setupLogLevels(o.logLevels, logger)
	b.epoch.Store(-1)
	if err := b.loadTLS(); err != nil {
		return nil, err
	}
	if err := b.setupSASL(); err != nil {
		return nil, err
	}
	return b, nil
}

// BrokerID is the broker id (known after Startup when generated).
func (b *Broker) BrokerID() int32 { return b.brokerID }

// BrokerEpoch is the czxid of the current registration, -1 before it.
func (b *Broker) BrokerEpoch() int64 { return b.epoch.Load() }

// ClusterID is the cluster id read or created in ZooKeeper.
func (b *Broker) ClusterID() string { return b.clusterID }

// BoundAddr returns the bound address of a listener (port 0 resolved), or
// nil before Startup or for an unknown listener.
func (b *Broker) BoundAddr(listener string) net.Addr {
	if b.server == nil {
		return nil
	}
	return b.server.BoundAddr(listener)
}

// Metrics is this broker's metric registry (Kafka's metric names, e.g.
// kafka.controller.KafkaController.ActiveControllerCount).
func (b *Broker) Metrics() gometrics.Registry { return b.metrics }

// Controller is this broker's controller module (nil before Startup).
func (b *Broker) Controller() *controller.Controller { return b.ctrl }

// Metadata is this broker's metadata cache (nil before Startup).
func (b *Broker) Metadata() *metadata.Cache { return b.meta }

// Replicas is this broker's replica manager (nil before Startup).
func (b *Broker) Replicas() *replica.Manager { return b.replicas }

// Credentials is this broker's SCRAM credential cache, filled from
// /config/users during Startup; never nil.
func (b *Broker) Credentials() *security.CredentialCache { return b.credentials }

// LogManager is this broker's log manager (nil before Startup).
func (b *Broker) LogManager() *storage.LogManager { return b.logs }

// Startup brings the broker up in Kafka's order: ZooKeeper, logs, identity,
// components, listeners, registration, background tasks, requests.
// On error everything started so far is stopped again. ctx bounds the
// start-up: it is checked between the long steps (log recovery, binding,
// registration); a cancelled start-up stops what it started.
func (b *Broker) Startup(ctx context.Context) (err error) {
	b.mu.Lock()
	if b.started || b.shutdown {
		b.mu.Unlock()
		return errors.New("broker: already started or shut down")
	}
	b.started = true
	b.mu.Unlock()
	b.state.Store(brokerStarting)
	defer func() {
		if err != nil {
			b.stop(false)
		}
	}()

	if err := b.connectZooKeeper(); err != nil {
		return err
	}
	// Dynamic broker configs before anything reads the configuration
	// (Kafka's DynamicBrokerConfig.initialize).
	if err := b.loadDynamicConfig(true); err != nil {
		return fmt.Errorf("broker: reading dynamic broker configs from /config/brokers: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("broker: start-up abandoned: %w", err)
	}
	if err := b.openLogs(); err != nil {
		return err
	}
	if b.cfg.BrokerID < 0 { // a generated or stored id: its per-broker configs
		if err := b.loadDynamicConfig(true); err != nil {
			return fmt.Errorf("broker: reading dynamic broker configs from /config/brokers: %w", err)
		}
	}
	// Components that add their own broker/component attributes get the
	// base logger; the broker's own lines carry the broker id.
	base := b.logger
	b.logger = b.logger.With("broker", b.brokerID)
	if err := b.buildComponents(base); err != nil {
		return err
	}
	b.stopDynLog = b.subscribeDynamicLogConfig()
	// Reconfiguration checks against the values in force (dynamicapply.go).
	b.addDynamicValidators()
	// SCRAM credentials before the listeners open, so the first
	// authentication already sees them.
	b.userCreds = newUserCredentials(b.zk, b.credentials, b.logger)
	if err := b.userCreds.loadAll(); err != nil {
		return fmt.Errorf("broker: loading SCRAM credentials from /config/users: %w", err)
	}
	// Client quotas, likewise before the first request.
	b.clientQuotas = newClientQuotaConfigs(b.zk, b.quotas, b.logger)
	if err := b.clientQuotas.loadAll(); err != nil {
		return fmt.Errorf("broker: loading client quotas from /config/users and /config/clients: %w", err)
	}
	if err := b.startSocketServer(); err != nil {
		return err
	}
	// The socket server, fetchers, cleaner and listener stores follow
	// dynamic changes from here on (dynamicapply.go).
	b.stopDynApply = b.subscribeDynamicApply(b.dyn)
	// IP connection rate quotas (/config/ips), before requests are served.
	b.ipQuotas = newIPQuotas(b.zk, b.server, b.logger)
	if err := b.ipQuotas.loadAll(); err != nil {
		return fmt.Errorf("broker: loading IP quotas from /config/ips: %w", err)
	}
	if err := b.startWeb(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("broker: start-up abandoned: %w", err)
	}
	epoch, err := b.register()
	if err != nil {
		return err
	}
	// The console's URL, once the registration (its host) exists.
	if addr := b.HTTPAddr(); addr != nil {
		if err := b.PublishConsoleURL(addr); err != nil {
			return err
		}
	}

	// Controller module.
	b.ctrl.Startup()
	// Background log tasks (retention, checkpoints, flushes, cleaner).
	b.logs.Startup()
	// ISR maintenance (shrink checks, ISR change notifications).
	b.replicas.Startup()
	// Failed log directories go offline (logdirfailure.go).
	b.startLogDirFailureHandler()
	// Dynamic config listener (/config/changes): topics, users' SCRAM
	// credentials and quotas, client quotas (quotaconfig.go), IP
	// connection rate quotas (ipquotas.go), dynamic broker configs
	// (dynamicconfig.go); a failed reload is retried.
	handlers := map[string]func(string) error{
		zkpaths.ConfigTypeUser: func(e string) error {
			return errors.Join(b.userCreds.onChange(e), b.clientQuotas.onUserChange(e))
		},
		zkpaths.ConfigTypeClient: b.clientQuotas.onClientChange,
		zkpaths.ConfigTypeIP:     b.ipQuotas.onChange,
		zkpaths.ConfigTypeBroker: b.onBrokerConfigChange,
	}
	b.cfgWatch = startConfigChangeListener(b.zk, b.topicCfgs, b.applyTopicConfig, handlers, b.logger, listenerKnobs{
		fault: b.opts.configChangeFault, reloadFault: b.opts.configReloadFault,
		retryMin: b.opts.configRetryMin, retryMax: b.opts.configRetryMax})
	// Enable request processing.
	b.apis.SetReady()
	b.state.Store(brokerRunning)
	b.logger.Info("started", "cluster_id", b.clusterID, "broker_epoch", epoch)
	return nil
}

// connectZooKeeper opens the ZooKeeper session (creating the chroot),
// creates the persistent paths and reads or creates the cluster id.
func (b *Broker) connectZooKeeper() error {
	zc := b.cfg.ZooKeeper()
	secOpts, err := b.zooKeeperSecurityOptions()
	if err != nil {
		return fmt.Errorf("broker: ZooKeeper security: %w", err)
	}
	b.zk, err = zkclient.Connect(zc.Connect, zc.SessionTimeout, append([]zkclient.Option{
		zkclient.WithLogger(b.logger.With("component", "zookeeper")),
		zkclient.WithConnectTimeout(zc.ConnectionTimeout),
		zkclient.WithMaxInFlightRequests(zc.MaxInFlightRequests),
		zkclient.WithMetrics(b.metrics)}, secOpts...)...)
	if err != nil {
		return fmt.Errorf("broker: connecting to ZooKeeper %s: %w", zc.Connect, err)
	}
	if err := b.zk.EnsureTopLevelPaths(); err != nil {
		return fmt.Errorf("broker: creating the ZooKeeper paths: %w", err)
	}
	if b.clusterID, err = b.zk.GetOrCreateClusterID(); err != nil {
		return fmt.Errorf("broker: cluster id: %w", err)
	}
	return nil
}

// openLogs starts the log manager (it locks log.dirs and recovers every
// log) and checks meta.properties against the cluster and broker ids.
func (b *Broker) openLogs() error {
	mc, err := logManagerConfig(b.dyn.Current())
	if err != nil {
		return fmt.Errorf("broker: log configuration: %w", err)
	}
	mc.Logger = b.logger.With("component", "log-manager")
	mc.Metrics = b.metrics
	if b.logs, err = storage.NewLogManager(mc); err != nil {
		return fmt.Errorf("broker: loading logs: %w", err)
	}
	return b.resolveIdentity()
}

// buildComponents creates the metadata cache, the replica manager, the
// group coordinator, the controller object and the request handlers; none
// of them runs yet.
func (b *Broker) buildComponents(base *slog.Logger) error {
	b.topicCfgs = newTopicConfigCache(b.zk)
	b.meta = metadata.New(b.brokerID, b.clusterID)
	b.replQuotas = newReplicationQuotas(b.cfg, b.brokerID, b.metrics, base.With("broker", b.brokerID))
	b.replQuotas.followRates(b.dyn)
	b.replicas = replica.New(b.replicaConfig(base), replica.NewLogStore(b.logs), b.meta)
	gc := b.cfg.GroupCoordinator()
	var err error
	b.groups, err = group.New(group.Config{
		InitialRebalanceDelay:         gc.InitialRebalanceDelay,
		MinSessionTimeout:             gc.MinSessionTimeout,
		MaxSessionTimeout:             gc.MaxSessionTimeout,
		MaxSize:                       gc.MaxSize,
		OffsetsRetention:              gc.OffsetsRetention,
		OffsetsRetentionCheckInterval: gc.OffsetsRetentionCheck,
		OffsetsTopicPartitions:        gc.OffsetsTopicPartitions,
		OffsetCommitTimeout:           gc.OffsetCommitTimeout,
		OffsetMetadataMaxBytes:        gc.OffsetMetadataMaxBytes,
	}, b.replicas.TopicLog(config.GroupMetadataTopicName), nil, base.With("broker", b.brokerID))
	if err != nil {
		return fmt.Errorf("broker: group coordinator: %w", err)
	}
	tc := b.cfg.Transactions()
	pids := txn.NewProducerIDManager(b.brokerID, b.zk.AllocateProducerIDBlock)
	b.markers = newMarkerChannel(b.meta, b.cfg.EffectiveInterBrokerListenerName(), b.brokerID,
		time.Duration(b.cfg.RequestTimeoutMs)*time.Millisecond, b.interBrokerDial)
	b.txn, err = txn.New(txn.Config{
		BrokerID:               b.brokerID,
		NumPartitions:          tc.StateLogPartitions,
		MaxTimeout:             tc.MaxTimeout,
		IDExpiration:           tc.TransactionalIDExpiration,
		AbortTimedOutInterval:  tc.AbortTimedOutInterval,
		RemoveExpiredInterval:  tc.RemoveExpiredInterval,
		OffsetsTopicPartitions: gc.OffsetsTopicPartitions,
		MarkerTimeout:          time.Duration(b.cfg.RequestTimeoutMs) * time.Millisecond,
	}, b.replicas.TopicLog(config.TransactionStateTopicName), pids, b.markers, nil, base.With("broker", b.brokerID))
	if err != nil {
		return fmt.Errorf("broker: transaction coordinator: %w", err)
	}
	b.ctrl = controller.New(b.controllerConfig(base), b.zk, b.epoch.Load)
	b.consoleSrc = newConsoleSource(b)
	b.console = console.New(b.consoleSrc, b.logger)
	if err := b.startAuthorizer(base); err != nil {
		return err
	}
	var authz api.Authorizer
	var acls api.ACLAdmin
	if b.authz != nil {
		authz, acls = b.authz, b.authz
	}
	b.quotas = quota.New(quotaManagersConfig(b.cfg, b.metrics))
	b.apis = api.New(api.Config{
		BrokerID:  b.brokerID,
		ClusterID: b.clusterID,
		Broker:    b.cfg,
		Dynamic:   b.dyn,
		// Listener key stores re-read when named again (listenertls.go).
		ReloadUpdatedFiles: b.ReloadUpdatedFilesWithoutConfigChange,
		ZK:                 b.zk,
		Metadata:           b.meta,
		Replicas:           b.replicas,
		LogDirs:            b.replicas, // AlterReplicaLogDirs, DescribeLogDirs
		Controller:         b.ctrl,
		Groups:             b.groups,
		Txn:                b.txn,
		ProducerIDs:        pids,
		Users:              b.zk,
		Authorizer:         authz,
		ACLs:               acls,
		Quotas:             b.quotas,
		FixedStartIndex:    b.opts.fixedStartIndex,
		SASL:               b.authenticators,
		Logger:             b.logger,
		LogLevels:          b.logLevels,
		QuotaStore:         b.zk,
	})
	b.registerMetrics()
	return nil
}

// startAuthorizer creates and starts the ACL authorizer when
// authorizer.class.name names one (config.Validate has refused any other
// class): it loads every ACL from ZooKeeper and listens for changes before
// the broker serves a request, as KafkaServer configures its authorizer
// before the socket server starts.
func (b *Broker) startAuthorizer(base *slog.Logger) error {
	if b.cfg.AuthorizerClassName == "" {
		return nil
	}
	if !authorizer.IsSupportedClass(b.cfg.AuthorizerClassName) {
		return fmt.Errorf("broker: authorizer.class.name=%s is not an authorizer Klassik implements", b.cfg.AuthorizerClassName)
	}
	su, err := authorizer.ParseSuperUsers(b.cfg.SuperUsers)
	if err != nil {
		return fmt.Errorf("broker: super.users: %w", err)
	}
	a := authorizer.New(b.zk, authorizer.Config{SuperUsers: su, AllowEveryoneIfNoACLFound: b.cfg.AllowEveryoneIfNoACLFound,
		Logger: base.With("broker", b.brokerID)})
	if err := a.Start(); err != nil {
		a.Close()
		return fmt.Errorf("broker: starting the authorizer: %w", err)
	}
	b.authz = a
	return nil
}

// Authorizer is the broker's ACL authorizer, nil without
// authorizer.class.name.
func (b *Broker) Authorizer() *authorizer.Authorizer { return b.authz }

func (b *Broker) replicaConfig(base *slog.Logger) replica.Config {
	rc := b.cfg.Replica()
	return replica.Config{
		BrokerID:              b.brokerID,
		BrokerEpoch:           b.epoch.Load,
		LogConfigFor:          b.logConfigFor,
		MinInsyncReplicas:     b.minInsyncReplicas,
		ReplicaLagTimeMax:     rc.LagTimeMax,
		IsrUpdater:            b.zk,
		IsBrokerAlive:         b.meta.IsAlive,
		LeaderQuota:           b.replQuotas.leader,
		Metrics:               b.metrics,
		DisableRequestMetrics: b.opts.withoutRequestMetrics,
		// JBOD moves (AlterReplicaLogDirs): the log manager's future logs,
		// copied in replica.fetch.max.bytes steps.
		LogDirs:                b.logs,
		AlterLogDirsChunkBytes: rc.FetchMaxBytes,
		AlterLogDirsRate:       func() int64 { return b.dyn.Current().ReplicaAlterLogDirsIOMaxBytesPerSecond },
		ReplicaFetch: replica.FetcherConfig{
			NumFetchers:      rc.NumFetchers,
			MinBytes:         rc.FetchMinBytes,
			MaxBytes:         rc.FetchMaxBytes,
			ResponseMaxBytes: rc.FetchResponseMaxBytes,
			MaxWait:          rc.FetchWaitMax,
			Backoff:          rc.FetchBackoff,
			// inter.broker.protocol.version's truncation protocol.
			TruncateToHighWatermark: !rc.OffsetForLeaderEpoch,
			NoLastFetchedEpoch:      !rc.LastFetchedEpoch,
			Quota:                   b.replQuotas.follower,
			Dial:                    replica.NetworkDialer(b.interBrokerDial, fmt.Sprintf("broker-%d-fetcher", b.brokerID), rc.SocketTimeout),
		},
		Logger:              base,
		StateChangeLogger:   base.With("logger", "state.change.logger"),
		OnLeadershipChange:  b.onLeadershipChange,
		OnPartitionsDeleted: b.onPartitionsDeleted,
	}
}

// startSocketServer binds the listeners (requests wait for SetReady), so
// the registration can carry the real ports when a listener asks for
// port 0.
func (b *Broker) startSocketServer() error {
	var h network.Handler = b.apis
	if b.opts.wrapHandler != nil {
		h = b.opts.wrapHandler(h)
	}
	ss := b.cfg.SocketServer()
	nc := network.Config{
		MaxRequestBytes:    ss.RequestMaxBytes,
		SendBufferBytes:    ss.SendBufferBytes,
		RecvBufferBytes:    ss.ReceiveBufferBytes,
		ConnectionsMaxIdle: ss.ConnectionsMaxIdle,
		Logger:             b.logger,
		Metrics:            b.metrics,

		DisableRequestMetrics: b.opts.withoutRequestMetrics,
	}
	nc.SaslMaxReceiveBytes = b.cfg.SaslServerMaxReceiveSize
	nc.FailedAuthenticationDelay = time.Duration(b.cfg.ConnectionFailedAuthDelayMs) * time.Millisecond
	qc := connectionQuotaConfig(b.dyn.Current()) // dynamicapply.go
	nc.ConnectionQuotas = &qc
	for _, e := range ss.Listeners {
		lc := b.listenerTLS[e.ListenerName] // TLS and principal mapping of SSL / SASL_SSL listeners
		lc.Name, lc.Host, lc.Port, lc.SecurityProtocol = e.ListenerName, e.Host, int(e.Port), e.SecurityProtocol
		nc.Listeners = append(nc.Listeners, lc)
	}
	var err error
	if b.server, err = network.NewServer(nc, h); err != nil {
		return err
	}
	return b.server.Start()
}

// register writes the /brokers/ids registration ("checked ephemeral":
// refused while the id is live elsewhere), then meta.properties, and
// re-registers on every new session. It returns the broker epoch.
func (b *Broker) register() (int64, error) {
	b.regInfo = b.registration()
	epoch, err := b.zk.RegisterBroker(b.regInfo)
	if err != nil {
		return 0, fmt.Errorf("broker: registering broker %d in ZooKeeper: %w", b.brokerID, err)
	}
	b.epoch.Store(epoch)
	if err := b.logs.WriteMetaProperties(b.brokerID, b.clusterID); err != nil {
		return 0, fmt.Errorf("broker: writing meta.properties: %w", err)
	}
	// Re-register on every new session, before the controller's re-election
	// handler runs (handlers run in registration order).
	b.stopNewSession = b.zk.OnNewSession(b.reregister)
	return epoch, nil
}

// resolveIdentity checks meta.properties against ZooKeeper's cluster id and
// determines the broker id (configured, stored, or generated).
func (b *Broker) resolveIdentity() error {
	mp, found, err := b.logs.ReadMetaProperties()
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if found && mp.ClusterID != "" && mp.ClusterID != b.clusterID {
		return fmt.Errorf("broker: the cluster id %s in ZooKeeper does not match the cluster id %s stored in meta.properties; the broker is trying to join the wrong cluster",
			b.clusterID, mp.ClusterID)
	}
	switch {
	case b.cfg.BrokerID >= 0:
		if found && mp.BrokerID >= 0 && mp.BrokerID != b.cfg.BrokerID {
			return fmt.Errorf("broker: configured broker.id %d doesn't match stored broker.id %d in meta.properties; if you moved your data, make sure your configured broker.id matches",
				b.cfg.BrokerID, mp.BrokerID)
		}
		b.brokerID = b.cfg.BrokerID
	case found && mp.BrokerID >= 0:
		b.brokerID = mp.BrokerID
	case b.cfg.BrokerIDGenerationEnable:
		id, err := b.zk.GenerateBrokerID(b.cfg.ReservedBrokerMaxID)
		if err != nil {
			return fmt.Errorf("broker: generating a broker id: %w", err)
		}
		b.brokerID = id
	default:
		return errors.New("broker: broker.id is not set and broker.id.generation.enable is false")
	}
	return nil
}

// registration builds the /brokers/ids/<id> content from advertised.listeners,
// replacing port 0 by the bound port of the listener of the same name.
func (b *Broker) registration() zkpaths.BrokerInfo {
	info := zkpaths.BrokerInfo{ID: b.brokerID, Version: zkpaths.BrokerInfoVersion, JMXPort: -1, Rack: b.cfg.BrokerRack,
		Features: map[string]zkpaths.FeatureRange{}}
	for _, e := range b.cfg.AdvertisedEndpoints() {
		ep := zkpaths.EndPoint{ListenerName: e.ListenerName, Host: e.Host, Port: e.Port, SecurityProtocol: e.SecurityProtocol}
		if addr, ok := b.server.BoundAddr(e.ListenerName).(*net.TCPAddr); ok {
			if ep.Port == 0 {
				ep.Port = int32(addr.Port)
			}
			if ep.Host == "" {
				if h, err := os.Hostname(); err == nil {
					ep.Host = h
				}
			}
		}
		info.Endpoints = append(info.Endpoints, ep)
	}
	return info
}

// reregister runs after a ZooKeeper session expiry: a new registration means
// a new broker epoch.
func (b *Broker) reregister() {
	epoch, err := b.zk.RegisterBroker(b.regInfo)
	if err != nil {
		b.logger.Error("re-registration after session expiry failed", "err", err)
		return
	}
	b.epoch.Store(epoch)
	b.logger.Info("re-registered after a new ZooKeeper session", "broker_epoch", epoch)
}

func (b *Broker) controllerConfig(logger *slog.Logger) controller.Config {
	cc := b.cfg.Controller()
	c := controller.DefaultConfig(b.brokerID)
	c.Rack = b.cfg.Rack()
	c.InterBrokerListener = cc.InterBrokerListenerName
	c.DeleteTopicEnable = cc.DeleteTopicEnable
	c.UncleanLeaderElectionEnable = cc.UncleanLeaderElectionEnable
	c.UncleanLeaderElectionDefault = func() bool { return b.dyn.Current().UncleanLeaderElectionEnable }
	c.AutoLeaderRebalanceEnable = cc.AutoLeaderRebalanceEnable
	c.LeaderImbalancePerBrokerPercentage = cc.LeaderImbalancePerBrokerPercentage
	c.LeaderImbalanceCheckInterval = cc.LeaderImbalanceCheckInterval
	c.DefaultReplicationFactor = cc.DefaultReplicationFactor
	c.ControllerSocketTimeout = cc.SocketTimeout
	c.Dial = b.interBrokerDial
	c.Logger = logger
	c.StateChangeLogger = logger.With("logger", "state.change.logger")
	c.Metrics = b.metrics
	// The partition leaders this broker last heard of, to order a new
	// controller's reads (Config.LeadersHint).
	c.LeadersHint = func(topic string) map[int32]int32 {
		if b.meta == nil {
			return nil
		}
		leaders, _ := b.meta.PartitionLeaders(topic)
		return leaders
	}
	return c
}

// logConfigFor is the topic's effective log configuration: ZooKeeper
// overrides over the broker defaults.
func (b *Broker) logConfigFor(topic string) (storage.LogConfig, error) {
	overrides, err := b.topicCfgs.get(topic)
	if err != nil {
		return storage.LogConfig{}, err
	}
	b.replQuotas.applyTopic(topic, overrides)
	return logConfig(b.dyn.Current(), overrides)
}

// minInsyncReplicas answers from the topic config cache without reading
// ZooKeeper: the cache entry of every hosted partition's topic was filled
// when its log was created (logConfigFor).
func (b *Broker) minInsyncReplicas(topic string) int {
	if overrides, ok := b.topicCfgs.cached(topic); ok {
		if v, ok := overrides["min.insync.replicas"]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return int(b.dyn.Current().MinInsyncReplicas)
}

// applyTopicConfig re-applies a topic's configuration to its local logs
// after a /config/changes notification.
func (b *Broker) applyTopicConfig(topic string, overrides map[string]string) {
	b.replQuotas.applyTopic(topic, overrides)
	lc, err := logConfig(b.dyn.Current(), overrides)
	if err != nil {
		b.logger.Error("invalid topic config in ZooKeeper; keeping the current one", "topic", topic, "err", err)
		return
	}
	n := 0
	for tp, l := range b.logs.AllLogs() {
		if tp.Topic == topic {
			l.UpdateConfig(lc)
			n++
		}
	}
	b.logger.Info("applied topic config change", "topic", topic, "logs", n, "configs", overrides)
	// Kafka's TopicConfigHandler: turning unclean election on for a topic
	// lets the controller elect leaders for its offline partitions now,
	// not at the next broker change. Non-controllers ignore the call.
	if v, ok := overrides["unclean.leader.election.enable"]; ok && strings.EqualFold(strings.TrimSpace(v), "true") && b.ctrl != nil {
		b.ctrl.TopicUncleanLeaderElectionEnabled(topic)
	}
}

// onPartitionsDeleted drops the config overrides of deleted topics, so a
// topic re-created with the same name does not inherit them.
func (b *Broker) onPartitionsDeleted(tps []common.TopicPartition) {
	for _, tp := range tps {
		b.topicCfgs.drop(tp.Topic)
		b.replQuotas.removeTopic(tp.Topic)
	}
	b.replicas.ForgetTopicMetrics(tps)
}

// onLeadershipChange hands leadership changes of the internal topics to
// their coordinators (Kafka's onLeadershipChange): leading a
// __consumer_offsets partition loads its groups and offsets, leading a
// __transaction_state partition loads its transactions with the partition's
// leader epoch as coordinator epoch (both asynchronously); losing one
// unloads it. It runs under the replica manager's control lock, so it must
// not block.
func (b *Broker) onLeadershipChange(changes []replica.LeadershipChange) {
	for _, ch := range changes {
		switch {
		case ch.Topic == config.GroupMetadataTopicName && b.groups != nil:
			if ch.Leader {
				b.groups.OnBecomeLeader(ch.Partition)
			} else {
				b.groups.OnResign(ch.Partition)
			}
		case ch.Topic == config.TransactionStateTopicName && b.txn != nil:
			if ch.Leader {
				b.txn.OnBecomeLeader(ch.Partition, ch.LeaderEpoch)
			} else {
				b.txn.OnResign(ch.Partition, ch.LeaderEpoch)
			}
		}
	}
}

// Shutdown stops the broker in Kafka's order: controlled shutdown (if
// enabled), socket server, replica manager, controller, config listener, log
// manager (clean shutdown), ZooKeeper session. Safe to call more than once
// and after a failed Startup.
func (b *Broker) Shutdown() { b.stop(true) }

// Kill stops the broker abruptly, as if the process died: no controlled
// shutdown, the ZooKeeper session is closed first (its ephemerals vanish at
// once), listeners and connections are dropped, and the logs are left
// without the clean-shutdown marker so the next start runs recovery.
func (b *Broker) Kill() {
	if !b.beginShutdown() {
		return
	}
	if b.zk != nil {
		b.zk.Close()
	}
	b.stopComponents()
	if b.logs != nil {
		// The manager only releases its directory locks through Shutdown;
		// removing the marker afterwards makes the next start treat the
		// shutdown as unclean (recovery), which is what a crash leaves.
		if err := b.logs.Shutdown(); err != nil {
			b.logger.Warn("log manager shutdown after kill", "err", err)
		}
		for _, d := range b.logs.Dirs() {
			os.Remove(filepath.Join(d, ".kafka_cleanshutdown"))
		}
	}
	b.logger.Info("killed")
}

func (b *Broker) stop(controlled bool) {
	if !b.beginShutdown() {
		return
	}
	if b.zk != nil {
		// Nothing of the shutdown waits for a lost ZooKeeper connection.
		b.zk.StopWaiting()
	}
	if controlled && b.server != nil && b.epoch.Load() >= 0 && b.cfg.ControlledShutdownEnable {
		b.state.Store(brokerPendingControlledShutdown)
		b.controlledShutdown()
	}
	b.state.Store(brokerShuttingDown)
	b.stopComponents()
	if b.logs != nil {
		start := time.Now()
		if err := b.logs.Shutdown(); err != nil {
			b.logger.Error("log manager shutdown", "err", err)
		}
		b.logger.Info("log manager shut down", "elapsed_ms", time.Since(start).Milliseconds())
	}
	if b.zk != nil {
		start := time.Now()
		b.zk.Close()
		if d := time.Since(start); d >= shutdownStepReport {
			b.logger.Info("shutdown step took long", "step", "zookeeper session", "elapsed_ms", d.Milliseconds())
		}
	}
	b.state.Store(brokerNotRunning)
	b.logger.Info("shut down completed")
}

// beginShutdown marks the broker as shut down and reports whether this call
// is the first, the one that stops it.
func (b *Broker) beginShutdown() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shutdown {
		return false
	}
	b.shutdown = true
	return true
}

// stopComponents closes the request handlers and the socket server, then
// what sits between them and the logs. Each step that takes longer than
// shutdownStepReport is logged with its duration, so a slow exit shows
// where its time went.
func (b *Broker) stopComponents() {
	step := func(name string, stop func()) {
		start := time.Now()
		stop()
		if d := time.Since(start); d >= shutdownStepReport {
			b.logger.Info("shutdown step took long", "step", name, "elapsed_ms", d.Milliseconds())
		}
	}
	if b.web != nil {
		step("web", b.web.stop)
	}
	if b.apis != nil {
		step("request handlers", b.apis.Close)
	}
	if b.server != nil {
		step("socket server", b.server.Shutdown)
	}
	if b.stopNewSession != nil {
		step("session watcher", b.stopNewSession)
	}
	if b.consoleSrc != nil {
		step("console", b.consoleSrc.stop)
	}
	if b.cfgWatch != nil {
		step("config watcher", b.cfgWatch.stop)
	}
	if b.stopDynApply != nil {
		step("dynamic config", b.stopDynApply)
	}
	if b.stopDynLog != nil {
		step("dynamic log levels", b.stopDynLog)
	}
	if b.authz != nil {
		step("authorizer", b.authz.Close)
	}
	if b.groups != nil {
		step("group coordinator", b.groups.Close)
	}
	if b.txn != nil {
		step("transaction coordinator", b.txn.Close)
	}
	if b.markers != nil {
		step("transaction markers", b.markers.close)
	}
	step("log dir failure handler", b.stopLogDirFailureHandler)
	if b.replicas != nil {
		step("replica manager", b.replicas.Shutdown)
	}
	if b.ctrl != nil {
		step("controller", b.ctrl.Shutdown)
	}
}

// shutdownStepReport is the duration from which a shutdown step is logged.
const shutdownStepReport = 200 * time.Millisecond

// controlledShutdown is the broker side of controlled shutdown: ask the
// current controller to move leadership away, up to
// controlled.shutdown.max.retries attempts; success is NONE with no
// remaining partitions. Failure is logged and the shutdown continues.
func (b *Broker) controlledShutdown() {
	cs := b.cfg.ControlledShutdown()
	timeout := time.Duration(b.cfg.ControllerSocketTimeoutMs) * time.Millisecond
	listener := b.cfg.EffectiveInterBrokerListenerName()
	for attempt := 1; attempt <= cs.MaxRetries; attempt++ {
		start := time.Now()
		remaining, err := b.tryControlledShutdown(listener, timeout)
		if err == nil && remaining == 0 {
			b.logger.Info("controlled shutdown succeeded", "attempt", attempt, "request_ms", time.Since(start).Milliseconds())
			return
		}
		b.logger.Warn("controlled shutdown attempt failed", "attempt", attempt, "remaining_partitions", remaining, "err", err)
		if attempt < cs.MaxRetries {
			time.Sleep(cs.RetryBackoff)
		}
	}
	b.logger.Warn("proceeding to do an unclean shutdown as all the controlled shutdown attempts failed")
}

func (b *Broker) tryControlledShutdown(listener string, timeout time.Duration) (int, error) {
	id, ok, err := b.zk.GetController()
	if err != nil {
		return -1, err
	}
	if !ok {
		return -1, errors.New("no controller")
	}
	info, ok, err := b.zk.GetBroker(id)
	if err != nil {
		return -1, err
	}
	if !ok {
		return -1, fmt.Errorf("controller %d is not registered", id)
	}
	ep, ok := info.EndPointFor(listener)
	if !ok {
		return -1, fmt.Errorf("controller %d has no %s endpoint", id, listener)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := b.interBrokerDial(ctx, net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), "broker-"+strconv.Itoa(int(b.brokerID))+"-controlled-shutdown", timeout)
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	req := kmsg.NewPtrControlledShutdownRequest()
	req.Version = 3
	req.BrokerID = b.brokerID
	req.BrokerEpoch = b.epoch.Load()
	kresp, err := cl.Request(ctx, req)
	if err != nil {
		return -1, err
	}
	resp := kresp.(*kmsg.ControlledShutdownResponse)
	if resp.ErrorCode != 0 {
		return len(resp.PartitionsRemaining), fmt.Errorf("controlled shutdown answered error code %d", resp.ErrorCode)
	}
	return len(resp.PartitionsRemaining), nil
}
