package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/loglevels"
	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/quota"
	"github.com/klassik/klassik/broker/txn"
	"github.com/klassik/klassik/config"
)

// ReplicaManager is the data path (broker/replica.Manager). The api layer only
// routes these requests; every rule about leaders, epochs and logs lives
// behind this interface.
type ReplicaManager interface {
	// ProduceInto returns nil for acks=0 and an error when an acks=0
	// request failed (the connection is then closed). clientID is the
	// request's ("__admin_client" may write internal topics); into, when
	// not nil, is reset and filled as the response. A non-nil wait is the
	// acks=all wait for the ISR: the response is complete once wait.Wait
	// returned nil, and neither holds anything of req.
	ProduceInto(ctx context.Context, req *kmsg.ProduceRequest, clientID string, into *kmsg.ProduceResponse) (resp *kmsg.ProduceResponse, wait network.Waiter, err error)
	// FetchInto serves a fetch; partitions of topics mayRead rejects
	// (asked over the session's partitions too) answer
	// TOPIC_AUTHORIZATION_FAILED; nil mayRead allows all. kept, when not
	// nil, is the connection's memory for the answer, which is then
	// kept's until written.
	FetchInto(ctx context.Context, req *kmsg.FetchRequest, mayRead func(topic string) bool, kept *network.FetchScratch) (kmsg.Response, error)
	ListOffsets(ctx context.Context, req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse
	OffsetForLeaderEpoch(ctx context.Context, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse
	DeleteRecords(ctx context.Context, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse
	LeaderAndIsr(ctx context.Context, req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse
	StopReplica(ctx context.Context, req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse
	UpdateMetadata(ctx context.Context, req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse
	// WriteTxnMarkers appends a transaction coordinator's COMMIT/ABORT
	// markers to the partitions this broker leads and waits for the ISR.
	WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse
	// DescribeProducers reports the leaders' active producer state.
	DescribeProducers(ctx context.Context, req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse
}

// LogDirManager moves replicas between this broker's log directories and
// describes them (broker/replica.Manager with a LogDirStore).
type LogDirManager interface {
	AlterReplicaLogDirs(ctx context.Context, req *kmsg.AlterReplicaLogDirsRequest) *kmsg.AlterReplicaLogDirsResponse
	DescribeLogDirs(ctx context.Context, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse
}

// request is what a handler sees: the decoded body plus the connection facts
// some APIs need (listener for Metadata, client id for Produce).
type request struct {
	net  *network.Request
	body kmsg.Request
	// start is when the handler was called (the request quota's handler
	// time runs from it).
	start time.Time
}

type handlerFunc func(ctx context.Context, r *request) (kmsg.Response, error)

// Handle implements network.Handler: it dispatches by API key. A nil response
// means "no response" (acks=0 produce); an error closes the connection.
//
// A panic in a handler is recovered here and turned into an error, so the
// connection is closed and the broker stays up; the stack is logged because a
// panic is always a bug of ours, never the client's fault.
func (a *Apis) Handle(ctx context.Context, req *network.Request) (resp kmsg.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("panic while handling request", "api", kmsg.NameForKey(req.Key), "version", req.Version,
				"client_id", req.ClientIDOrEmpty(), "panic", p, "stack", string(debug.Stack()))
			resp, err = nil, fmt.Errorf("api: panic handling %s: %v", kmsg.NameForKey(req.Key), p)
		}
	}()
	if req.Key != 18 { // ApiVersions is answered even while starting
		select {
		case <-a.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-a.stopping:
			return nil, errors.New("api: broker is shutting down")
		}
	}
	h, ok := a.handlers[req.Key]
	if !ok || !a.enabled(req.Key) {
		return nil, fmt.Errorf("api: key %d (%s) is not served", req.Key, kmsg.NameForKey(req.Key))
	}
	var r *request
	if req.Key == 0 || req.Key == 1 {
		// The data path's handlers keep nothing of r after they return.
		r = dataRequests.Get().(*request)
		defer func() { *r = request{}; dataRequests.Put(r) }()
		*r = request{net: req, body: req.Body, start: time.Now()}
	} else {
		r = &request{net: req, body: req.Body, start: time.Now()}
	}
	resp, err = h(ctx, r)
	if err == nil {
		a.applyRequestQuota(ctx, r, resp)
	}
	return resp, err
}

// dataRequests recycles the request structs of Produce and Fetch.
var dataRequests = sync.Pool{New: func() any { return new(request) }}

// listener returns the listener name the request arrived on.
func (r *request) listener() string { return r.net.Listener }

// MetadataView is what the api layer reads from the broker's metadata cache
// (*metadata.Cache satisfies it; fed by the controller's UpdateMetadata).
type MetadataView interface {
	// MetadataResponse answers a Metadata request from the cache for the
	// listener the request arrived on (no auto-creation).
	MetadataResponse(req *kmsg.MetadataRequest, listener string) *kmsg.MetadataResponse
	// ControllerID is the controller the cache knows, -1 if none.
	ControllerID() int32
	// AliveEndpoints lists the live brokers with their endpoint on listener
	// (brokers without that listener are omitted), sorted by id.
	AliveEndpoints(listener string) []metadata.BrokerEndpoint
	// PartitionLeaders returns the leader of every partition of topic the
	// cache knows (-1 = none); ok is false when the topic is unknown.
	PartitionLeaders(topic string) (leaders map[int32]int32, ok bool)
	// HasPartition reports whether the cluster knows the partition
	// (Kafka's metadataCache.contains).
	HasPartition(topic string, partition int32) bool
}

// Config wires the api layer to the rest of the broker.
type Config struct {
	BrokerID  int32
	ClusterID string
	// Broker is the static broker configuration (defaults for topic
	// creation, DescribeConfigs).
	Broker *config.Config
	// Dynamic is the broker's current configuration (Broker with the
	// dynamic broker configs); nil: Broker alone.
	Dynamic *config.Dynamic
	// ReloadUpdatedFiles is called for a per-broker alteration with its
	// config names (Kafka's reloadUpdatedFilesWithoutConfigChange: a
	// listener key store named again with the same path is re-read when
	// its file changed); nil: nothing to reload.
	ReloadUpdatedFiles func(keys []string) error
	ZK                 AdminZK
	Metadata           MetadataView
	Replicas           ReplicaManager
	// LogDirs serves AlterReplicaLogDirs and DescribeLogDirs; nil leaves
	// them unadvertised.
	LogDirs    LogDirManager
	Controller Controller
	// Groups is the group coordinator; nil leaves the group APIs
	// unadvertised.
	Groups GroupCoordinator
	// Txn is the transaction coordinator; nil leaves the transaction APIs
	// unadvertised (and FindCoordinator for transactions answers
	// COORDINATOR_NOT_AVAILABLE).
	Txn TxnCoordinator
	// ProducerIDs hands out producer ids for idempotent producers (shared
	// with the transaction coordinator); nil with ZK set makes one.
	ProducerIDs *txn.ProducerIDManager
	// Users holds the SCRAM credentials of /config/users
	// (DescribeUserScramCredentials, AlterUserScramCredentials); nil leaves
	// those APIs unadvertised.
	Users UserCredentialStore
	// Authorizer decides every action the handlers check; nil allows all
	// (no authorizer.class.name).
	Authorizer Authorizer
	// SASL serves SaslHandshake and SaslAuthenticate on the SASL
	// listeners; nil refuses every mechanism.
	SASL SASLServers
	// ACLs is the authorizer's ACL store, served by the ACL APIs; nil
	// answers them SECURITY_DISABLED.
	ACLs ACLAdmin
	// Quotas are the client quota managers; nil enforces none.
	Quotas *quota.Managers
	// QuotaStore holds the quota nodes DescribeClientQuotas and
	// AlterClientQuotas serve; nil leaves those APIs unadvertised.
	QuotaStore ClientQuotaStore
	// FixedStartIndex ≥ 0 makes replica assignment deterministic (both the
	// start index of the first replica and the shift of the followers); -1 draws at random as
	// Kafka does. Tests set it to compare assignments.
	FixedStartIndex int
	Logger          *slog.Logger
	// LogLevels is the registry of the broker's loggers, served as the
	// BROKER_LOGGER resource (brokerlogger.go); nil = a registry of its
	// own that no logger consults.
	LogLevels *loglevels.Registry
}

// Apis is Kafka's KafkaApis: the request handler of one broker.
type Apis struct {
	brokerID        int32
	clusterID       string
	dyn             *config.Dynamic           // current configuration: read it with conf()
	reloadFiles     func(keys []string) error // Config.ReloadUpdatedFiles
	zk              AdminZK
	meta            MetadataView
	replicas        ReplicaManager
	logDirs         LogDirManager
	controller      Controller
	groups          GroupCoordinator
	txn             TxnCoordinator
	authorizer      Authorizer
	sasl            SASLServers
	users           UserCredentialStore
	acls            ACLAdmin
	quotas          *quota.Managers
	quotaStore      ClientQuotaStore
	fixedStartIndex int
	logger          *slog.Logger
	pids            *txn.ProducerIDManager
	handlers        map[int16]handlerFunc
	logLevels       *loglevels.Registry

	// ready is closed when the broker enables request processing
	// (the last step of start-up, after registration); requests arriving
	// before wait.
	ready     chan struct{}
	readyOnce sync.Once
	// stopping is closed by Close so that parked admin requests return.
	stopping  chan struct{}
	closeOnce sync.Once

	// metaAnswers keeps encoded Metadata answers (metadata_answers.go).
	metaAnswers metadataAnswers

	// metaMu guards the following: metaCh is closed and replaced on every
	// metadata change, waking admin requests waiting for leaders.
	metaMu sync.Mutex
	metaCh chan struct{}
}

// conf is the configuration in force now (dynamic broker configs
// included); read it once per decision.
func (a *Apis) conf() *config.Config { return a.dyn.Current() }

// New builds the handler. Requests are held until SetReady is called.
func New(cfg Config) *Apis {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Broker == nil {
		cfg.Broker = config.Defaults()
	}
	a := &Apis{
		brokerID:        cfg.BrokerID,
		clusterID:       cfg.ClusterID,
		dyn:             cfg.Dynamic,
		reloadFiles:     cfg.ReloadUpdatedFiles,
		zk:              cfg.ZK,
		meta:            cfg.Metadata,
		replicas:        cfg.Replicas,
		logDirs:         cfg.LogDirs,
		controller:      cfg.Controller,
		groups:          cfg.Groups,
		txn:             cfg.Txn,
		authorizer:      cfg.Authorizer,
		sasl:            cfg.SASL,
		users:           cfg.Users,
		acls:            cfg.ACLs,
		quotas:          cfg.Quotas,
		quotaStore:      cfg.QuotaStore,
		fixedStartIndex: cfg.FixedStartIndex,
		logger:          cfg.Logger.With("component", "kafka-apis", "broker", cfg.BrokerID),
		ready:           make(chan struct{}),
		stopping:        make(chan struct{}),
		metaCh:          make(chan struct{}),
	}
	if a.dyn == nil {
		a.dyn = config.NewDynamic(cfg.Broker)
	}
	a.logLevels = cfg.LogLevels
	if a.logLevels == nil {
		a.logLevels = loglevels.NewRegistry(loglevels.LowestEnabled(cfg.Logger.Handler()))
	}
	a.pids = cfg.ProducerIDs
	if a.pids == nil && cfg.ZK != nil {
		a.pids = txn.NewProducerIDManager(cfg.BrokerID, cfg.ZK.AllocateProducerIDBlock)
	}
	a.handlers = a.handlerTable()
	return a
}

// SetReady enables request processing.
func (a *Apis) SetReady() { a.readyOnce.Do(func() { close(a.ready) }) }

// Close makes parked requests return; it does not wait for them (the
// network server's shutdown does).
func (a *Apis) Close() { a.closeOnce.Do(func() { close(a.stopping) }) }

// MetadataChanged wakes admin requests that wait for the metadata cache;
// the broker calls it after every applied UpdateMetadata.
func (a *Apis) MetadataChanged() { a.metadataChanged() }

// enabled reports whether the dependencies of key's handler are wired, so a
// partially wired broker (tests) advertises only what it can serve.
func (a *Apis) enabled(key int16) bool {
	switch key {
	case 18, 17, 36, 29, 30, 31:
		return true
	case 0, 1, 2, 4, 5, 6, 21, 23, 27, 61:
		return a.replicas != nil
	case 24, 25, 26, 65, 66:
		return a.txn != nil && a.meta != nil
	case 28:
		return a.groups != nil && a.meta != nil
	case 3, 60:
		return a.meta != nil
	case 7:
		return true
	case 43, 45, 46:
		return a.controller != nil
	case 19, 20, 32, 33, 37, 44:
		return a.zk != nil && a.meta != nil
	case 22:
		return a.pids != nil
	case 50, 51:
		return a.users != nil
	case 48, 49:
		return a.quotaStore != nil
	case 34, 35:
		return a.logDirs != nil
	case 8, 9, 11, 12, 13, 14, 15, 16, 42, 47:
		return a.groups != nil
	case 10:
		return a.groups != nil && a.zk != nil && a.meta != nil
	}
	return false
}
