package controller

// KafkaController (ZooKeeper mode): election on /controller, epoch bump,
// failover, resignation, and the handlers of every controller event
// (controller.md §3, §6, §11, §13, §16).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// Config is the controller's narrow configuration (Kafka property names in
// the comments).
type Config struct {
	BrokerID int32   // broker.id
	Rack     *string // broker.rack (informational)
	// InterBrokerListener is inter.broker.listener.name (default
	// "PLAINTEXT"): the endpoint the controller connects to and advertises
	// as LiveLeaders.
	InterBrokerListener                string
	DeleteTopicEnable                  bool          // delete.topic.enable (true)
	UncleanLeaderElectionEnable        bool          // unclean.leader.election.enable (false)
	AutoLeaderRebalanceEnable          bool          // auto.leader.rebalance.enable (true)
	LeaderImbalancePerBrokerPercentage int           // leader.imbalance.per.broker.percentage (10)
	LeaderImbalanceCheckInterval       time.Duration // leader.imbalance.check.interval.seconds (300 s)
	DefaultReplicationFactor           int           // default.replication.factor (1); informational, topic creation happens outside the controller
	ControllerSocketTimeout            time.Duration // controller.socket.timeout.ms (30 s)
	Logger                             *slog.Logger
	// StateChangeLogger receives every partition and replica transition
	// (Kafka's state.change.logger); defaults to Logger with
	// logger=state.change.logger.
	StateChangeLogger *slog.Logger
	// Metrics is the registry for Kafka's controller metrics; nil keeps
	// them in a private registry.
	Metrics gometrics.Registry
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// DefaultConfig returns Kafka's defaults for brokerID.
func DefaultConfig(brokerID int32) Config {
	return Config{
		BrokerID:                           brokerID,
		InterBrokerListener:                "PLAINTEXT",
		DeleteTopicEnable:                  true,
		AutoLeaderRebalanceEnable:          true,
		LeaderImbalancePerBrokerPercentage: 10,
		LeaderImbalanceCheckInterval:       300 * time.Second,
		DefaultReplicationFactor:           1,
		ControllerSocketTimeout:            30 * time.Second,
	}
}

// Controller is one broker's controller module. Every broker runs one; at
// most one per epoch is active.
type Controller struct {
	cfg         Config
	zk          zkClient
	brokerEpoch func() int64
	log         *slog.Logger
	stateLog    *slog.Logger
	em          *eventManager
	metrics     *controllerMetrics

	// Read by other goroutines.
	active   atomic.Bool
	epoch    atomic.Int32
	activeID atomic.Int32

	startOnce    sync.Once
	shutdownOnce sync.Once
	sessionStops []func()

	// Owned by the event goroutine.
	ctx            *Context
	batch          *requestBatch
	psm            *partitionStateMachine
	rsm            *replicaStateMachine
	channels       requestSink // non-nil while active
	newSink        func() requestSink
	controllerStop func()                // cancels the /controller watch
	watchCancels   []func()              // controller-only watches (failover)
	brokerWatches  map[int32]func()      // /brokers/ids/<id> data watches
	topicWatches   map[string]func()     // /brokers/topics/<t> data watches
	rebalanceTimer *time.Timer           // auto leader rebalance; stopped on resign
	electRetry     *time.Timer           // election retry after a ZooKeeper error; stopped on shutdown
	deletion       *topicDeletionManager // non-nil while active
}

// New returns a controller module for cfg.BrokerID using zk. brokerEpoch
// returns this broker's current registration epoch (czxid).
func New(cfg Config, zk *zkclient.Client, brokerEpoch func() int64) *Controller {
	return newController(cfg, zk, brokerEpoch)
}

func newController(cfg Config, zk zkClient, brokerEpoch func() int64) *Controller {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	stateLog := cfg.StateChangeLogger
	if stateLog == nil {
		stateLog = cfg.Logger.With("logger", "state.change.logger")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if brokerEpoch == nil {
		brokerEpoch = func() int64 { return -1 }
	}
	if cfg.InterBrokerListener == "" {
		cfg.InterBrokerListener = "PLAINTEXT"
	}
	if cfg.ControllerSocketTimeout <= 0 {
		cfg.ControllerSocketTimeout = 30 * time.Second
	}
	if cfg.LeaderImbalanceCheckInterval <= 0 {
		cfg.LeaderImbalanceCheckInterval = 300 * time.Second
	}
	if cfg.Metrics == nil {
		cfg.Metrics = gometrics.NewRegistry()
	}
	c := &Controller{
		cfg:           cfg,
		zk:            zk,
		brokerEpoch:   brokerEpoch,
		log:           cfg.Logger.With("component", "controller", "broker", cfg.BrokerID),
		stateLog:      stateLog.With("controller", cfg.BrokerID),
		metrics:       newControllerMetrics(cfg.Metrics),
		ctx:           NewContext(),
		brokerWatches: map[int32]func(){},
		topicWatches:  map[string]func(){},
	}
	c.activeID.Store(-1)
	c.ctx.interBrokerListener = cfg.InterBrokerListener
	c.batch = newRequestBatch(c.ctx, cfg.BrokerID)
	store := &zkStateStore{zk: zk, ctx: c.ctx}
	c.psm = &partitionStateMachine{
		ctx: c.ctx, batch: c.batch, store: store, stateLog: c.stateLog, controllerID: cfg.BrokerID,
		uncleanDflt: func() bool { return c.cfg.UncleanLeaderElectionEnable },
		onUnclean:   func(common.TopicPartition) { c.metrics.unclean.Mark(1) },
	}
	c.rsm = &replicaStateMachine{ctx: c.ctx, batch: c.batch, store: store, stateLog: c.stateLog}
	c.em = newEventManager(c.process, cfg.Metrics, cfg.Now)
	c.newSink = func() requestSink {
		return newChannelManager(cfg.BrokerID, cfg.InterBrokerListener, cfg.ControllerSocketTimeout, c.log, c.onResponse)
	}
	return c
}

// requestSink is where flushed batches go: the channel manager in
// production, a recorder in transcript tests.
type requestSink interface {
	addBroker(b Broker)
	removeBroker(id int32)
	send(reqs []outgoingRequest)
	maxVersion(broker int32, key int16) int16
	shutdown()
}

// Startup installs the session handlers, enqueues Startup (watch
// /controller, elect) and starts the event goroutine.
func (c *Controller) Startup() {
	c.startOnce.Do(func() {
		c.sessionStops = append(c.sessionStops,
			c.zk.OnSessionExpired(func() {
				// Clear-and-put, then block the ZooKeeper client until the
				// event has started, so nothing of the old session is
				// processed afterwards (controller.md §3.6).
				q := c.em.clearAndPut(expireEvent{})
				q.awaitStarted(c.em.done)
			}),
			c.zk.OnNewSession(func() { c.em.put(reelectEvent{}) }),
		)
		c.em.put(startupEvent{})
		c.em.start()
	})
}

// Shutdown stops the event goroutine, resigns if active and releases
// everything. It does not delete /controller: the session close does.
func (c *Controller) Shutdown() {
	c.shutdownOnce.Do(func() {
		for _, stop := range c.sessionStops {
			stop()
		}
		c.em.close()
		// The loop has stopped: this goroutine now owns the state.
		if c.electRetry != nil {
			c.electRetry.Stop()
		}
		if c.controllerStop != nil {
			c.controllerStop()
			c.controllerStop = nil
		}
		c.onControllerResignation()
		c.activeID.Store(-1)
	})
}

// IsActive reports whether this broker is the active controller.
func (c *Controller) IsActive() bool { return c.active.Load() }

// Epoch returns the controller epoch while active, else 0.
func (c *Controller) Epoch() int32 { return c.epoch.Load() }

// ActiveControllerID returns the controller id last read from /controller,
// -1 if none.
func (c *Controller) ActiveControllerID() int32 { return c.activeID.Load() }

// TopicUncleanLeaderElectionEnabled tells the controller that the topic's
// unclean.leader.election.enable override was turned on, so leaderless
// partitions of it get a leader now rather than at the next broker change
// (Kafka's TopicUncleanLeaderElectionEnable event). Safe to call on any
// broker; non-controllers ignore it.
func (c *Controller) TopicUncleanLeaderElectionEnabled(topic string) {
	c.em.put(topicUncleanLeaderElectionEnableEvent{topic: topic})
}

// ControlledShutdown moves leadership away from brokerID (controller.md
// §13.2) and returns the partitions it still leads. Errors are kerr values:
// StaleControllerEpoch when this broker is not the controller,
// StaleBrokerEpoch, BrokerNotAvailable.
func (c *Controller) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]common.TopicPartition, error) {
	reply := make(chan controlledShutdownResult, 1)
	c.em.put(controlledShutdownEvent{id: brokerID, brokerEpoch: brokerEpoch, reply: reply})
	select {
	case r := <-reply:
		return r.remaining, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// --- event dispatch ---

func (c *Controller) process(ev event) {
	var err error
	switch e := ev.(type) {
	case startupEvent:
		c.controllerStop = c.zk.WatchData(zkpaths.ControllerPath, func() { c.em.put(controllerChangeEvent{}) })
		err = c.elect()
	case controllerChangeEvent:
		err = c.processControllerChange()
	case reelectEvent:
		c.maybeResign()
		err = c.elect()
	case expireEvent:
		c.activeID.Store(-1)
		if c.IsActive() {
			c.log.Warn("zookeeper session expired; resigning as controller")
		}
		c.onControllerResignation()
	case replicaLeaderElectionEvent:
		outcomes, eerr := c.processReplicaLeaderElection(e)
		reply := eerr
		switch {
		case errors.Is(eerr, ErrControllerMoved):
			err, reply = eerr, kerr.NotController
		case eerr != nil && !errors.Is(eerr, kerr.NotController):
			err, reply = eerr, kerr.UnknownServerError
		}
		if e.reply != nil {
			e.reply <- electLeadersResult{outcomes: outcomes, err: reply}
		}
	case apiReassignmentEvent:
		errs, rerr := c.processApiReassignment(e)
		reply := rerr
		if errors.Is(rerr, ErrControllerMoved) {
			err, reply = rerr, kerr.NotController
		} else if rerr != nil && !errors.Is(rerr, kerr.NotController) {
			err, reply = rerr, kerr.UnknownServerError
		}
		e.reply <- apiReassignmentResult{errs: errs, err: reply}
	case listReassignmentsEvent:
		e.reply <- c.processListReassignments(e)
	case alterPartitionEvent:
		resp, aerr := c.processAlterPartition(e.req)
		if aerr != nil {
			err = aerr
			if resp == nil {
				resp = e.req.ResponseKind().(*kmsg.AlterPartitionResponse)
				resp.ErrorCode = kerr.NotController.Code
				if !errors.Is(aerr, ErrControllerMoved) {
					resp.ErrorCode = kerr.UnknownServerError.Code
				}
			}
		}
		e.reply <- alterPartitionResult{resp: resp}
	case controlledShutdownEvent:
		remaining, cerr := c.processControlledShutdown(e.id, e.brokerEpoch)
		reply := cerr
		switch {
		case errors.Is(cerr, ErrControllerMoved):
			// "Controller moved" is STALE_CONTROLLER_EPOCH on the wire; the
			// broker retries against the next controller.
			err, reply = cerr, kerr.StaleControllerEpoch
		case errors.Is(cerr, errIllegalState):
			err, reply = cerr, kerr.UnknownServerError
		}
		e.reply <- controlledShutdownResult{remaining: remaining, err: reply}
	default:
		if !c.IsActive() {
			return
		}
		switch e := ev.(type) {
		case brokerChangeEvent:
			err = c.processBrokerChange()
		case brokerModificationsEvent:
			err = c.processBrokerModification(e.id)
		case topicChangeEvent:
			err = c.processTopicChange()
		case partitionModificationsEvent:
			err = c.processPartitionModifications(e.topic)
		case topicDeletionEvent:
			err = c.processTopicDeletion()
		case isrChangeNotificationEvent:
			err = c.processIsrChangeNotification()
		case zkPartitionReassignmentEvent:
			err = c.processZkPartitionReassignment()
		case topicUncleanLeaderElectionEnableEvent:
			if c.ctx.HasTopic(e.topic) && !c.ctx.IsTopicQueuedForDeletion(e.topic) {
				err = c.triggerOnlineForTopic(e.topic, "unclean.leader.election.enable turned on for the topic")
			}
		case autoPreferredReplicaLeaderElectionEvent:
			err = c.processAutoPreferredReplicaLeaderElection()
		case leaderAndIsrResponseEvent:
			err = c.processLeaderAndIsrResponse(e)
		case logDirEventNotificationEvent:
			err = c.processLogDirEventNotification()
		case topicDeletionStopReplicaResponseEvent:
			err = c.processTopicDeletionStopReplicaResponse(e)
		}
	}
	c.handleProcessError(ev, err)
	c.metrics.update(c)
}

var errIllegalState = errors.New("controller: illegal controller state")

func (c *Controller) handleProcessError(ev event, err error) {
	switch {
	case err == nil:
	case errors.Is(err, ErrControllerMoved):
		// Fenced or lost: resign, never retry (controller.md §3.5).
		c.log.Warn("controller moved to another broker; resigning", "event", fmt.Sprintf("%T", ev), "err", err)
		c.onControllerResignation()
		c.refreshActiveID()
	case errors.Is(err, errIllegalState):
		c.log.Error("controller in an illegal state; forcing a controller move", "event", fmt.Sprintf("%T", ev), "err", err)
		c.triggerControllerMove()
	default:
		c.log.Error("error processing controller event", "event", fmt.Sprintf("%T", ev), "err", err)
	}
}

// --- election (§3.2–3.4) ---

func (c *Controller) readControllerID() (int32, bool, error) {
	id, ok, err := c.zk.GetController()
	if err != nil || !ok {
		return -1, false, err
	}
	return id, true, nil
}

func (c *Controller) refreshActiveID() {
	id, ok, err := c.readControllerID()
	if err == nil && ok {
		c.activeID.Store(id)
	} else {
		c.activeID.Store(-1)
	}
}

func (c *Controller) processControllerChange() error {
	c.maybeResign()
	if _, exists, err := c.readControllerID(); err == nil && !exists {
		return c.elect()
	}
	return nil
}

// maybeResign re-reads /controller and resigns if this broker was active
// and is not named any more.
func (c *Controller) maybeResign() {
	wasActive := c.IsActive()
	id, ok, err := c.readControllerID()
	if err != nil {
		c.log.Warn("could not read /controller", "err", err)
		return
	}
	if !ok {
		id = -1
	}
	c.activeID.Store(id)
	if wasActive && id != c.cfg.BrokerID {
		c.log.Info("resigning: /controller no longer names this broker", "controller", id)
		c.onControllerResignation()
	}
}

func (c *Controller) elect() error {
	id, exists, err := c.readControllerID()
	if err != nil {
		return fmt.Errorf("controller: reading /controller: %w", err)
	}
	if exists {
		c.activeID.Store(id)
		if id != c.cfg.BrokerID && c.IsActive() {
			c.onControllerResignation()
		}
		return nil
	}
	epoch, version, err := c.zk.RegisterControllerAndIncrementEpoch(c.cfg.BrokerID)
	if errors.Is(err, ErrControllerMoved) {
		c.log.Debug("lost the controller election", "err", err)
		c.maybeResign()
		return nil
	}
	if err != nil {
		c.log.Error("error while electing or becoming controller", "err", err)
		c.triggerControllerMove()
		// Nothing may change in ZooKeeper to wake us up again (every broker
		// can fail the same way during an outage), so try again shortly.
		c.scheduleElectionRetry()
		return nil
	}
	c.ctx.Reset()
	c.ctx.Epoch, c.ctx.EpochZkVersion = epoch, version
	c.activeID.Store(c.cfg.BrokerID)
	c.epoch.Store(epoch)
	c.active.Store(true)
	c.log.Info("elected as the controller", "controller_epoch", epoch, "epoch_zk_version", version, "broker_epoch", c.brokerEpoch())
	if err := c.onControllerFailover(); err != nil {
		if errors.Is(err, ErrControllerMoved) {
			c.log.Warn("controller moved during failover", "err", err)
			c.onControllerResignation()
			c.refreshActiveID()
			return nil
		}
		c.log.Error("error during controller failover; resigning", "err", err)
		c.triggerControllerMove()
	}
	return nil
}

// electionRetryBackoff is the pause before re-trying an election that
// failed with a ZooKeeper error (not a lost race).
const electionRetryBackoff = time.Second

func (c *Controller) scheduleElectionRetry() {
	if c.electRetry != nil {
		c.electRetry.Stop()
	}
	em := c.em
	c.electRetry = time.AfterFunc(electionRetryBackoff, func() { em.put(controllerChangeEvent{}) })
}

// triggerControllerMove resigns and deletes /controller (fenced) so that
// another broker can take over (§3.4).
func (c *Controller) triggerControllerMove() {
	id, ok, err := c.readControllerID()
	if err != nil || !ok || id != c.cfg.BrokerID {
		if c.IsActive() {
			c.onControllerResignation()
		}
		return
	}
	version := c.ctx.EpochZkVersion
	c.activeID.Store(-1)
	c.onControllerResignation()
	if err := c.zk.DeleteController(version); err != nil {
		c.log.Warn("could not delete /controller after a forced resignation", "err", err)
	}
}

// onControllerResignation drops the controller-only watches, stops the
// scheduler and the channel manager (queued requests are discarded) and
// resets the context.
func (c *Controller) onControllerResignation() {
	for _, cancel := range c.watchCancels {
		cancel()
	}
	c.watchCancels = nil
	for id, cancel := range c.brokerWatches {
		cancel()
		delete(c.brokerWatches, id)
	}
	for t, cancel := range c.topicWatches {
		cancel()
		delete(c.topicWatches, t)
	}
	if c.rebalanceTimer != nil {
		c.rebalanceTimer.Stop()
		c.rebalanceTimer = nil
	}
	if c.channels != nil {
		c.channels.shutdown()
		c.channels = nil
	}
	c.batch.clear()
	c.ctx.Reset()
	c.deletion = nil
	if c.active.Swap(false) {
		c.log.Info("resigned as the controller")
	}
	c.epoch.Store(0)
}

// --- failover (§3.3) ---

func (c *Controller) watchChildren(path string, ev event) {
	c.watchCancels = append(c.watchCancels, c.zk.WatchChildren(path, func() { c.em.put(ev) }))
}

func (c *Controller) onControllerFailover() error {
	c.watchChildren(zkpaths.BrokerIDsPath, brokerChangeEvent{})
	c.watchChildren(zkpaths.TopicsPath, topicChangeEvent{})
	c.watchChildren(zkpaths.AdminDeleteTopicsPath, topicDeletionEvent{})
	c.watchChildren(zkpaths.IsrChangeNotificationPath, isrChangeNotificationEvent{})
	c.watchChildren(zkpaths.LogDirEventNotificationPath, logDirEventNotificationEvent{})
	zkElection := replicaLeaderElectionEvent{kind: ElectPreferred, trigger: triggerZK}
	c.watchCancels = append(c.watchCancels, c.zk.WatchData(zkpaths.PreferredReplicaElectionPath, func() { c.em.put(zkElection) }))
	c.watchCancels = append(c.watchCancels, c.zk.WatchData(zkpaths.ReassignPartitionsPath, func() { c.em.put(zkPartitionReassignmentEvent{}) }))

	// Pending notifications are subsumed by the full read below.
	isrChanges, err := c.zk.GetAllIsrChangeNotifications()
	if err != nil {
		return err
	}
	if err := c.zk.DeleteIsrChangeNotifications(c.ctx.EpochZkVersion, isrChanges...); err != nil {
		return err
	}
	logDirEvents, err := c.zk.GetAllLogDirEventNotifications()
	if err != nil {
		return err
	}
	if err := c.zk.DeleteLogDirEventNotifications(c.ctx.EpochZkVersion, logDirEvents...); err != nil {
		return err
	}
	if err := c.initializeControllerContext(); err != nil {
		return err
	}
	c.deletion = &topicDeletionManager{c: c}
	if err := c.deletion.init(); err != nil {
		return err
	}
	// Brokers must know every endpoint before they get LeaderAndIsr.
	if err := c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), nil); err != nil {
		return err
	}
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	if err := c.rsm.startup(); err != nil {
		return err
	}
	c.sendBatch()
	if err := c.psm.startup(); err != nil {
		return err
	}
	c.sendBatch()
	// Reassignments: the znode first, then every other one in progress.
	if err := c.processZkPartitionReassignment(); err != nil {
		return err
	}
	if err := c.resumeReassignments(nil); err != nil {
		return err
	}
	if err := c.deletion.resume(); err != nil {
		return err
	}
	// A preferred election requested through ZooKeeper while no controller
	// was active (§3.3 step 12).
	if _, err := c.processReplicaLeaderElection(zkElection); err != nil {
		return err
	}
	c.scheduleRebalance(5 * time.Second)
	c.log.Info("controller failover complete", "controller_epoch", c.ctx.Epoch, "brokers", c.ctx.LiveOrShuttingDownBrokerIDs(), "topics", len(c.ctx.allTopics), "partitions", c.ctx.PartitionCount())
	return nil
}

// readBrokers reads every registration; unreadable ones are skipped by the
// client with a warning.
func (c *Controller) readBrokers() (map[int32]Broker, error) {
	infos, err := c.zk.GetAllBrokers()
	if err != nil {
		return nil, err
	}
	out := make(map[int32]Broker, len(infos))
	for _, info := range infos {
		out[info.ID] = brokerFromZk(info)
	}
	return out, nil
}

// brokerFromZk is the controller's view of a registration; its epoch is
// the registration znode's czxid.
func brokerFromZk(info zkpaths.BrokerInfo) Broker {
	b := Broker{ID: info.ID, Epoch: info.Epoch}
	if info.Rack != "" {
		r := info.Rack
		b.Rack = &r
	}
	for _, ep := range info.Endpoints {
		b.Endpoints = append(b.Endpoints, Endpoint{Listener: ep.ListenerName, Host: ep.Host, Port: ep.Port, SecurityProtocol: securityProtocolID(ep.SecurityProtocol)})
	}
	return b
}

func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	}
	return 0
}

func (c *Controller) initializeControllerContext() error {
	brokers, err := c.readBrokers()
	if err != nil {
		return err
	}
	for _, b := range brokers {
		c.ctx.AddLiveBroker(b)
	}
	topics, err := c.zk.GetAllTopics()
	if err != nil {
		return err
	}
	for _, t := range topics {
		c.ctx.AddTopic(t)
		c.watchTopic(t)
		if err := c.loadTopicAssignment(t); err != nil {
			return err
		}
	}
	for _, id := range c.ctx.LiveOrShuttingDownBrokerIDs() {
		c.watchBroker(id)
	}
	states, err := c.psm.store.ReadStates(c.ctx.AllPartitions())
	if err != nil {
		return err
	}
	for tp, l := range states {
		c.ctx.PutLeadership(tp, l)
	}
	c.channels = c.newSink()
	c.batch.maxVersion = c.channels.maxVersion
	for _, b := range c.ctx.LiveOrShuttingDownBrokers() {
		c.channels.addBroker(b)
	}
	return nil
}

func (c *Controller) watchTopic(t string) {
	if _, ok := c.topicWatches[t]; ok {
		return
	}
	c.topicWatches[t] = c.zk.WatchData(zkpaths.TopicPath(t), func() { c.em.put(partitionModificationsEvent{topic: t}) })
}

func (c *Controller) unwatchTopic(t string) {
	if cancel, ok := c.topicWatches[t]; ok {
		cancel()
		delete(c.topicWatches, t)
	}
}

func (c *Controller) watchBroker(id int32) {
	if _, ok := c.brokerWatches[id]; ok {
		return
	}
	c.brokerWatches[id] = c.zk.WatchData(zkpaths.BrokerIDPath(id), func() { c.em.put(brokerModificationsEvent{id: id}) })
}

// readTopicAssignment reads /brokers/topics/<t>, back-filling a topic id
// (fenced) when it has none (IBP ≥ 2.8 behaviour).
func (c *Controller) readTopicAssignment(t string) (zkpaths.TopicAssignment, bool, error) {
	ta, version, err := c.zk.GetTopicAssignment(t)
	if isNoNode(err) {
		return zkpaths.TopicAssignment{}, false, nil
	}
	if errors.Is(err, zkclient.ErrUndecodable) {
		c.log.Error("ignoring an undecodable topic znode", "topic", t, "err", err)
		return zkpaths.TopicAssignment{}, false, nil
	}
	if err != nil {
		return zkpaths.TopicAssignment{}, false, err
	}
	if ta.TopicID == "" {
		ta.TopicID = zkpaths.RandomUUID()
		ta.Version = zkpaths.TopicAssignmentVersion
		if _, err := c.zk.SetTopicAssignment(c.ctx.EpochZkVersion, t, ta, version); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return ta, false, err
			}
			// Someone rewrote the znode meanwhile; its data watch brings us back.
			c.log.Warn("could not back-fill the topic id", "topic", t, "err", err)
			ta.TopicID = ""
		}
	}
	return ta, true, nil
}

func assignmentFromZk(ta zkpaths.TopicAssignment, p int32) ReplicaAssignment {
	return ReplicaAssignment{Replicas: slices.Clone(ta.Partitions[p]), AddingReplicas: slices.Clone(ta.Adding[p]), RemovingReplicas: slices.Clone(ta.Removing[p])}
}

func (c *Controller) loadTopicAssignment(t string) error {
	ta, ok, err := c.readTopicAssignment(t)
	if err != nil || !ok {
		return err
	}
	c.ctx.SetTopicID(t, decodeTopicID(ta.TopicID))
	for p := range ta.Partitions {
		c.ctx.UpdateAssignment(common.TopicPartition{Topic: t, Partition: p}, assignmentFromZk(ta, p))
	}
	return nil
}

// --- batches ---

// sendBatch flushes the request batch onto the brokers' queues.
func (c *Controller) sendBatch() {
	reqs := c.batch.flush(c.ctx.Epoch)
	if c.channels != nil {
		c.channels.send(reqs)
	}
}

func (c *Controller) sendUpdateMetadata(brokers []int32, tps []common.TopicPartition) error {
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	c.batch.addUpdateMetadata(brokers, tps)
	c.sendBatch()
	return nil
}

// partitionChange runs one partition state machine call in a fresh batch
// and sends the batch.
func (c *Controller) partitionChange(tps []common.TopicPartition, target PartitionState, spec *electionSpec, reason string) (map[common.TopicPartition]error, error) {
	if err := c.batch.newBatch(); err != nil {
		return nil, fmt.Errorf("%w: %v", errIllegalState, err)
	}
	failed, err := c.psm.handleStateChanges(tps, target, spec, reason)
	if err != nil {
		c.batch.clear()
		return failed, err
	}
	c.sendBatch()
	return failed, nil
}

func (c *Controller) triggerOnline(reason string) error { return c.triggerOnlineForTopic("", reason) }

// triggerOnlineForTopic runs §8.3 for one topic ("" = all topics).
func (c *Controller) triggerOnlineForTopic(topic, reason string) error {
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	_, err := c.psm.triggerOnlinePartitionStateChange(topic, reason)
	if err != nil {
		c.batch.clear()
		return err
	}
	c.sendBatch()
	return nil
}

// replicaChange runs one replica state machine call in a fresh batch.
func (c *Controller) replicaChange(replicas []PartitionReplica, target ReplicaState, reason string) (map[PartitionReplica]error, error) {
	if len(replicas) == 0 {
		return nil, nil
	}
	if err := c.batch.newBatch(); err != nil {
		return nil, fmt.Errorf("%w: %v", errIllegalState, err)
	}
	failed, err := c.rsm.handleStateChanges(replicas, target, reason)
	if err != nil {
		c.batch.clear()
		return failed, err
	}
	c.sendBatch()
	return failed, nil
}

// onResponse runs on a sender goroutine: it only enqueues events.
func (c *Controller) onResponse(broker int32, o outgoingRequest, resp kmsg.Response) {
	switch r := resp.(type) {
	case *kmsg.LeaderAndISRResponse:
		c.em.put(leaderAndIsrResponseEvent{broker: broker, resp: r})
	case *kmsg.UpdateMetadataResponse:
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			c.log.Warn("UpdateMetadata failed on broker", "target_broker", broker, "err", err)
		}
	case *kmsg.StopReplicaResponse:
		if len(o.deletePartitions) == 0 {
			return
		}
		errs := map[common.TopicPartition]error{}
		top := kerr.ErrorForCode(r.ErrorCode)
		for _, tp := range o.deletePartitions {
			errs[tp] = top
		}
		if top == nil {
			for _, p := range r.Partitions {
				tp := common.TopicPartition{Topic: p.Topic, Partition: p.Partition}
				if _, ok := errs[tp]; ok {
					errs[tp] = kerr.ErrorForCode(p.ErrorCode)
				}
			}
		}
		c.em.put(topicDeletionStopReplicaResponseEvent{broker: broker, errs: errs})
	}
}

// --- broker membership (§6) ---

func (c *Controller) processBrokerChange() error {
	current, err := c.readBrokers()
	if err != nil {
		return err
	}
	var newIDs, deadIDs, bouncedIDs []int32
	for id, b := range current {
		old, known := c.ctx.LiveOrShuttingDownBroker(id)
		switch {
		case !known:
			newIDs = append(newIDs, id)
		case b.Epoch > old.Epoch:
			bouncedIDs = append(bouncedIDs, id)
		}
	}
	for _, id := range c.ctx.LiveOrShuttingDownBrokerIDs() {
		if _, ok := current[id]; !ok {
			deadIDs = append(deadIDs, id)
		}
	}
	slices.Sort(newIDs)
	slices.Sort(bouncedIDs)
	slices.Sort(deadIDs)
	if len(newIDs)+len(bouncedIDs)+len(deadIDs) == 0 {
		return nil
	}
	c.log.Info("broker change", "new", newIDs, "dead", deadIDs, "bounced", bouncedIDs, "live", sortedBrokerKeys(current))
	for _, id := range newIDs {
		c.channels.addBroker(current[id])
	}
	for _, id := range bouncedIDs {
		c.channels.removeBroker(id)
		c.channels.addBroker(current[id])
	}
	for _, id := range deadIDs {
		c.channels.removeBroker(id)
	}
	if len(newIDs) > 0 {
		for _, id := range newIDs {
			c.ctx.AddLiveBroker(current[id])
		}
		if err := c.onBrokerStartup(newIDs); err != nil {
			return err
		}
	}
	if len(bouncedIDs) > 0 {
		for _, id := range bouncedIDs {
			c.ctx.RemoveLiveBroker(id)
		}
		if err := c.onBrokerFailure(bouncedIDs); err != nil {
			return err
		}
		for _, id := range bouncedIDs {
			c.ctx.AddLiveBroker(current[id])
		}
		if err := c.onBrokerStartup(bouncedIDs); err != nil {
			return err
		}
	}
	if len(deadIDs) > 0 {
		for _, id := range deadIDs {
			c.ctx.RemoveLiveBroker(id)
		}
		if err := c.onBrokerFailure(deadIDs); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) onBrokerStartup(newIDs []int32) error {
	c.log.Info("new broker startup callback", "brokers", newIDs)
	var existing []int32
	for _, id := range c.ctx.LiveOrShuttingDownBrokerIDs() {
		if !slices.Contains(newIDs, id) {
			existing = append(existing, id)
		}
	}
	if err := c.sendUpdateMetadata(existing, nil); err != nil {
		return err
	}
	var withLeadership []common.TopicPartition
	for _, tp := range c.ctx.AllPartitions() {
		if _, ok := c.ctx.Leadership(tp); ok && !c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			withLeadership = append(withLeadership, tp)
		}
	}
	if err := c.sendUpdateMetadata(newIDs, withLeadership); err != nil {
		return err
	}
	replicas := c.ctx.ReplicasOnBrokers(newIDs)
	var live, deleting []PartitionReplica
	for _, r := range replicas {
		if c.ctx.IsTopicQueuedForDeletion(r.Topic) {
			deleting = append(deleting, r)
		} else {
			live = append(live, r)
		}
	}
	if _, err := c.replicaChange(live, OnlineReplica, fmt.Sprintf("broker %v started", newIDs)); err != nil {
		return err
	}
	if err := c.triggerOnline(fmt.Sprintf("broker %v started", newIDs)); err != nil {
		return err
	}
	if err := c.resumeReassignments(newIDs); err != nil {
		return err
	}
	if len(deleting) > 0 && c.deletion != nil {
		topics := map[string]bool{}
		for _, r := range deleting {
			topics[r.Topic] = true
		}
		if err := c.deletion.resumeForTopics(topics); err != nil {
			return err
		}
	}
	for _, id := range newIDs {
		c.watchBroker(id)
	}
	return nil
}

func (c *Controller) onBrokerFailure(dead []int32) error {
	c.log.Info("broker failure callback", "brokers", dead)
	if err := c.onReplicasBecomeOffline(c.ctx.ReplicasOnBrokers(dead), fmt.Sprintf("broker %v failed", dead)); err != nil {
		return err
	}
	for _, id := range dead {
		if cancel, ok := c.brokerWatches[id]; ok {
			cancel()
			delete(c.brokerWatches, id)
		}
	}
	return nil
}

// onReplicasBecomeOffline implements §6.4 step 2: elect new leaders before
// the dead replicas leave the ISR.
func (c *Controller) onReplicasBecomeOffline(replicas []PartitionReplica, reason string) error {
	var deleting, others []PartitionReplica
	for _, r := range replicas {
		if c.ctx.IsTopicQueuedForDeletion(r.Topic) {
			deleting = append(deleting, r)
		} else {
			others = append(others, r)
		}
	}
	var offlineLeader []common.TopicPartition
	for _, tp := range c.ctx.AllPartitions() {
		l, ok := c.ctx.Leadership(tp)
		if !ok || c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			continue
		}
		if !c.ctx.IsReplicaOnline(l.Leader, tp, false) {
			offlineLeader = append(offlineLeader, tp)
		}
	}
	if _, err := c.partitionChange(offlineLeader, OfflinePartition, nil, reason); err != nil {
		return err
	}
	if err := c.triggerOnline(reason); err != nil {
		return err
	}
	if _, err := c.replicaChange(others, OfflineReplica, reason); err != nil {
		return err
	}
	if len(deleting) > 0 && c.deletion != nil {
		if err := c.deletion.failReplicaDeletion(deleting); err != nil {
			return err
		}
	}
	if len(offlineLeader) == 0 && len(others) == 0 {
		return c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), nil)
	}
	return nil
}

func (c *Controller) processBrokerModification(id int32) error {
	info, ok, err := c.zk.GetBroker(id)
	if err != nil || !ok {
		return err
	}
	b := brokerFromZk(info)
	old, known := c.ctx.LiveOrShuttingDownBroker(id)
	if !known || sameEndpoints(old, b) {
		return nil
	}
	b.Epoch = old.Epoch
	c.log.Info("broker endpoints changed", "changed_broker", id)
	c.ctx.AddLiveBroker(b)
	oldEP, _ := interBrokerEndpoint(old, c.cfg.InterBrokerListener)
	newEP, _ := interBrokerEndpoint(b, c.cfg.InterBrokerListener)
	if oldEP != newEP {
		// Reconnect to the new address (queued requests are dropped; the
		// UpdateMetadata below and later batches carry the current state).
		c.channels.removeBroker(id)
		c.channels.addBroker(b)
	}
	return c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), nil)
}

// --- topics (§11) ---

func (c *Controller) processTopicChange() error {
	topics, err := c.zk.GetAllTopics()
	if err != nil {
		return err
	}
	now := map[string]bool{}
	for _, t := range topics {
		now[t] = true
	}
	var added, deleted []string
	for t := range now {
		if !c.ctx.HasTopic(t) {
			added = append(added, t)
		}
	}
	for _, t := range c.ctx.AllTopics() {
		if !now[t] {
			deleted = append(deleted, t)
		}
	}
	slices.Sort(added)
	for _, t := range deleted {
		c.unwatchTopic(t)
		c.ctx.RemoveTopic(t)
	}
	var newPartitions []common.TopicPartition
	for _, t := range added {
		c.ctx.AddTopic(t)
		c.watchTopic(t)
		if err := c.loadTopicAssignment(t); err != nil {
			return err
		}
		newPartitions = append(newPartitions, c.ctx.PartitionsForTopic(t)...)
	}
	if len(added)+len(deleted) > 0 {
		c.log.Info("topic change", "new", added, "deleted", deleted)
	}
	if len(newPartitions) > 0 {
		return c.onNewPartitionCreation(newPartitions)
	}
	return nil
}

func (c *Controller) processPartitionModifications(t string) error {
	if !c.ctx.HasTopic(t) {
		return nil
	}
	ta, version, err := c.zk.GetTopicAssignment(t)
	if isNoNode(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("controller: reading topic %s: %w", t, err)
	}
	var toAdd []common.TopicPartition
	for p := range ta.Partitions {
		tp := common.TopicPartition{Topic: t, Partition: p}
		if _, ok := c.ctx.Assignment(tp); !ok {
			toAdd = append(toAdd, tp)
		}
	}
	if len(toAdd) == 0 {
		return nil
	}
	sortTPs(toAdd)
	if c.ctx.IsTopicQueuedForDeletion(t) {
		// Undo the addition: rewrite the znode with the known partitions.
		c.log.Info("restoring the partition assignment of a topic queued for deletion", "topic", t, "ignored", toAdd)
		restored := zkpaths.TopicAssignment{Partitions: map[int32][]int32{}, Adding: map[int32][]int32{}, Removing: map[int32][]int32{}, TopicID: ta.TopicID}
		for _, tp := range c.ctx.PartitionsForTopic(t) {
			a, _ := c.ctx.Assignment(tp)
			restored.Partitions[tp.Partition] = a.Replicas
			restored.Adding[tp.Partition] = a.AddingReplicas
			restored.Removing[tp.Partition] = a.RemovingReplicas
		}
		_, err := c.zk.SetTopicAssignment(c.ctx.EpochZkVersion, t, restored, version)
		return err
	}
	c.log.Info("new partitions for topic", "topic", t, "partitions", toAdd)
	for _, tp := range toAdd {
		c.ctx.UpdateAssignment(tp, assignmentFromZk(ta, tp.Partition))
	}
	return c.onNewPartitionCreation(toAdd)
}

// onNewPartitionCreation is §11.3.
func (c *Controller) onNewPartitionCreation(tps []common.TopicPartition) error {
	var replicas []PartitionReplica
	for _, tp := range tps {
		for _, r := range c.ctx.Replicas(tp) {
			replicas = append(replicas, PartitionReplica{tp, r})
		}
	}
	reason := "new partition creation"
	if _, err := c.partitionChange(tps, NewPartition, nil, reason); err != nil {
		return err
	}
	if _, err := c.replicaChange(replicas, NewReplica, reason); err != nil {
		return err
	}
	if _, err := c.partitionChange(tps, OnlinePartition, &electionSpec{strategy: OfflineElection}, reason); err != nil {
		return err
	}
	_, err := c.replicaChange(replicas, OnlineReplica, reason)
	return err
}

// --- ISR change notifications (§16.1) ---

func (c *Controller) processIsrChangeNotification() error {
	children, err := c.zk.GetAllIsrChangeNotifications()
	if err != nil {
		return err
	}
	notified, err := c.zk.GetPartitionsFromIsrChangeNotifications(children)
	if err != nil {
		return err
	}
	changed := map[common.TopicPartition]bool{}
	for _, tp := range notified {
		if _, ok := c.ctx.Assignment(tp); ok {
			changed[tp] = true
		}
	}
	tps := sortedKeys(changed)
	if len(tps) > 0 {
		states, err := c.psm.store.ReadStates(tps)
		if err != nil {
			return err
		}
		for tp, l := range states {
			c.ctx.PutLeadership(tp, l)
		}
		if err := c.sendUpdateMetadata(c.ctx.LiveOrShuttingDownBrokerIDs(), tps); err != nil {
			return err
		}
		if err := c.maybeCompleteReassignments(tps); err != nil {
			return err
		}
	}
	return c.zk.DeleteIsrChangeNotifications(c.ctx.EpochZkVersion, children...)
}

// --- controlled shutdown (§13.2) ---

func (c *Controller) processControlledShutdown(id int32, brokerEpoch int64) ([]common.TopicPartition, error) {
	if !c.IsActive() {
		return nil, kerr.StaleControllerEpoch
	}
	cached, ok := c.ctx.BrokerEpoch(id)
	if brokerEpoch != -1 && ok && brokerEpoch < cached {
		return nil, kerr.StaleBrokerEpoch
	}
	if !ok {
		return nil, kerr.BrokerNotAvailable
	}
	c.ctx.SetShuttingDown(id)
	c.log.Info("controlled shutdown requested", "shutting_down_broker", id)
	var led []common.TopicPartition
	var followed []PartitionReplica
	for _, tp := range c.ctx.AllPartitions() {
		rs := c.ctx.Replicas(tp)
		l, has := c.ctx.Leadership(tp)
		if len(rs) <= 1 || !slices.Contains(rs, id) || !has || c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			continue
		}
		if l.Leader == id {
			led = append(led, tp)
		} else {
			followed = append(followed, PartitionReplica{tp, id})
		}
	}
	reason := fmt.Sprintf("controlled shutdown of broker %d", id)
	if _, err := c.partitionChange(led, OnlinePartition, &electionSpec{strategy: ControlledShutdownElection}, reason); err != nil {
		return nil, err
	}
	if len(followed) > 0 {
		if err := c.batch.newBatch(); err != nil {
			return nil, fmt.Errorf("%w: %v", errIllegalState, err)
		}
		for _, r := range followed {
			c.batch.addStopReplica([]int32{id}, r.TopicPartition, false)
		}
		c.sendBatch()
		if _, err := c.replicaChange(followed, OfflineReplica, reason); err != nil {
			return nil, err
		}
	}
	var remaining []common.TopicPartition
	for _, tp := range c.ctx.AllPartitions() {
		l, has := c.ctx.Leadership(tp)
		if has && l.Leader == id && len(c.ctx.Replicas(tp)) > 1 && !c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			remaining = append(remaining, tp)
		}
	}
	return remaining, nil
}

// --- auto leader rebalance (§12.2) ---

func (c *Controller) scheduleRebalance(d time.Duration) {
	if !c.cfg.AutoLeaderRebalanceEnable {
		return
	}
	if c.rebalanceTimer != nil {
		c.rebalanceTimer.Stop()
	}
	// The timer goroutine only enqueues; a late firing after resignation is
	// dropped by the handler's active check.
	em := c.em
	c.rebalanceTimer = time.AfterFunc(d, func() { em.put(autoPreferredReplicaLeaderElectionEvent{}) })
}

func (c *Controller) processAutoPreferredReplicaLeaderElection() error {
	// Rescheduled after every run, even a failed one, while still active.
	defer func() {
		if c.IsActive() {
			c.scheduleRebalance(c.cfg.LeaderImbalanceCheckInterval)
		}
	}()
	byPreferred := map[int32][]common.TopicPartition{}
	for _, tp := range c.ctx.AllPartitions() {
		if c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			continue
		}
		if rs := c.ctx.Replicas(tp); len(rs) > 0 {
			byPreferred[rs[0]] = append(byPreferred[rs[0]], tp)
		}
	}
	for _, b := range sortedBrokerKeys(byPreferred) {
		tps := byPreferred[b]
		var notPreferred []common.TopicPartition
		for _, tp := range tps {
			if l, ok := c.ctx.Leadership(tp); ok && l.Leader != b {
				notPreferred = append(notPreferred, tp)
			}
		}
		ratio := float64(len(notPreferred)) / float64(len(tps))
		if ratio <= float64(c.cfg.LeaderImbalancePerBrokerPercentage)/100 {
			continue
		}
		var candidates []common.TopicPartition
		for _, tp := range notPreferred {
			l, _ := c.ctx.Leadership(tp)
			if c.ctx.IsLive(b) && slices.Contains(l.ISR, b) {
				candidates = append(candidates, tp)
			}
		}
		if len(candidates) == 0 {
			continue
		}
		c.log.Info("leader imbalance above threshold; running preferred replica election", "preferred_broker", b, "ratio", ratio, "partitions", candidates)
		failed, err := c.partitionChange(candidates, OnlinePartition, &electionSpec{strategy: PreferredElection}, "auto preferred replica leader election")
		if err != nil {
			return err
		}
		for tp, e := range failed {
			c.log.Warn("preferred replica election failed", "topic", tp.Topic, "partition", tp.Partition, "err", e)
		}
	}
	return nil
}
