package controller

// KafkaController (ZooKeeper mode): election on /controller, epoch bump,
// failover, resignation, and the handlers of every controller event
// and the dispatch of every controller event.

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"

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
	InterBrokerListener         string
	DeleteTopicEnable           bool // delete.topic.enable (true)
	UncleanLeaderElectionEnable bool // unclean.leader.election.enable (false)
	// UncleanLeaderElectionDefault, when set, answers the current
	// unclean.leader.election.enable (a dynamic broker config); otherwise
	// UncleanLeaderElectionEnable is used.
	UncleanLeaderElectionDefault       func() bool
	AutoLeaderRebalanceEnable          bool          // auto.leader.rebalance.enable (true)
	LeaderImbalancePerBrokerPercentage int           // leader.imbalance.per.broker.percentage (10)
	LeaderImbalanceCheckInterval       time.Duration // leader.imbalance.check.interval.seconds (300 s)
	DefaultReplicationFactor           int           // default.replication.factor (1); informational, topic creation happens outside the controller
	ControllerSocketTimeout            time.Duration // controller.socket.timeout.ms (30 s)
	// Dial opens the connections to the brokers' inter-broker listener
	// (TLS and SASL login as that listener needs); nil dials plain TCP.
	Dial   network.DialFunc
	Logger *slog.Logger
	// StateChangeLogger receives every partition and replica transition
	// (Kafka's state.change.logger); defaults to Logger with
	// logger=state.change.logger.
	StateChangeLogger *slog.Logger
	// Metrics is the registry for Kafka's controller metrics; nil keeps
	// them in a private registry.
	Metrics gometrics.Registry
	// Now is the clock (default time.Now).
	Now func() time.Time
	// LeadersHint, if set, returns what this broker's metadata cache last
	// heard of a topic's partition leaders (partition -> leader). A new
	// controller reads first the state znodes of the partitions it names
	// with a leader that is not live, elects and sends those, and reads
	// the others after (see earlyElections); every decision is taken on
	// what it read from ZooKeeper, so a stale hint only orders the reads.
	LeadersHint func(topic string) map[int32]int32
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
	hist        *history

	// Read by other goroutines.
	active   atomic.Bool
	epoch    atomic.Int32
	activeID atomic.Int32

	// controllerSeen is when the /controller watch last fired (UnixNano),
	// the start of a failover's first phase.
	controllerSeen atomic.Int64
	// lastFailover is the phase record of this controller's latest
	// failover (nil before the first).
	lastFailover atomic.Pointer[failoverPhases]

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
	c.hist = newHistory(c.epoch.Load)
	c.ctx.interBrokerListener = cfg.InterBrokerListener
	c.batch = newRequestBatch(c.ctx, cfg.BrokerID)
	store := &zkStateStore{zk: zk, ctx: c.ctx}
	c.psm = &partitionStateMachine{
		ctx: c.ctx, batch: c.batch, store: store, stateLog: c.stateLog, hist: c.hist, controllerID: cfg.BrokerID,
		uncleanDflt: func() bool {
			if c.cfg.UncleanLeaderElectionDefault != nil {
				return c.cfg.UncleanLeaderElectionDefault()
			}
			return c.cfg.UncleanLeaderElectionEnable
		},
		onUnclean: func(common.TopicPartition) { c.metrics.unclean.Mark(1) },
	}
	c.rsm = &replicaStateMachine{ctx: c.ctx, batch: c.batch, store: store, stateLog: c.stateLog, hist: c.hist}
	c.em = newEventManager(c.process, cfg.Metrics, cfg.Now)
	c.em.hist = c.hist
	c.newSink = func() requestSink {
		cm := newChannelManager(cfg.BrokerID, cfg.InterBrokerListener, cfg.ControllerSocketTimeout, c.log, c.onResponse, c.metrics.channel)
		if cfg.Dial != nil {
			cm.dial = cfg.Dial
		}
		return cm
	}
	return c
}

// Startup installs the session handlers, enqueues Startup (watch
// /controller, elect) and starts the event goroutine.
func (c *Controller) Startup() {
	c.startOnce.Do(func() {
		c.sessionStops = append(c.sessionStops,
			c.zk.OnSessionExpired(func() {
				// Clear-and-put, then block the ZooKeeper client until the
				// event has started, so nothing of the old session is
				// processed afterwards.
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

// --- event dispatch ---

// process handles one event on the event goroutine: one line per event, as
// Kafka's KafkaController.process. Events that only make sense on the
// active controller are dropped elsewhere (before the metrics update).
func (c *Controller) process(ev event) {
	var err error
	switch e := ev.(type) {
	case startupEvent:
		err = c.processStartup()
	case controllerChangeEvent:
		err = c.processControllerChange()
	case reelectEvent:
		err = c.processReelect()
	case expireEvent:
		c.processExpire()
	case replicaLeaderElectionEvent:
		err = c.replyReplicaLeaderElection(e)
	case apiReassignmentEvent:
		err = c.replyApiReassignment(e)
	case listReassignmentsEvent:
		e.reply <- c.processListReassignments(e)
	case alterPartitionEvent:
		err = c.replyAlterPartition(e)
	case controlledShutdownEvent:
		err = c.replyControlledShutdown(e)
	default:
		if !c.IsActive() {
			return
		}
		err = c.processActive(ev)
	}
	c.handleProcessError(ev, err)
	c.metrics.update(c)
}

// processActive handles the events of the active controller's watches,
// timers and broker responses.
func (c *Controller) processActive(ev event) error {
	switch e := ev.(type) {
	case brokerChangeEvent:
		return c.processBrokerChange()
	case brokerModificationsEvent:
		return c.processBrokerModification(e.id)
	case topicChangeEvent:
		return c.processTopicChange()
	case partitionModificationsEvent:
		return c.processPartitionModifications(e.topic)
	case topicDeletionEvent:
		return c.processTopicDeletion()
	case isrChangeNotificationEvent:
		return c.processIsrChangeNotification()
	case zkPartitionReassignmentEvent:
		return c.processZkPartitionReassignment()
	case topicUncleanLeaderElectionEnableEvent:
		return c.processTopicUncleanLeaderElectionEnable(e.topic)
	case autoPreferredReplicaLeaderElectionEvent:
		return c.processAutoPreferredReplicaLeaderElection()
	case leaderAndIsrResponseEvent:
		return c.processLeaderAndIsrResponse(e)
	case logDirEventNotificationEvent:
		return c.processLogDirEventNotification()
	case topicDeletionStopReplicaResponseEvent:
		return c.processTopicDeletionStopReplicaResponse(e)
	}
	return nil
}

// rpcOutcome splits the error of an RPC's handler into what the event loop
// acts on and what the RPC's caller is told, the same way for every RPC:
//   - the controller moved (a fenced write failed or the election was
//     lost): the loop resigns and the caller gets moved (NOT_CONTROLLER, or
//     STALE_CONTROLLER_EPOCH for ControlledShutdown), so it retries at the
//     next controller;
//   - a protocol outcome (a kerr value such as NOT_CONTROLLER or
//     STALE_BROKER_EPOCH) goes to the caller as is; the loop has nothing to
//     do;
//   - anything else is logged by the loop (an illegal state also forces a
//     controller move) and the caller gets UNKNOWN_SERVER_ERROR.
func rpcOutcome(err error, moved *kerr.Error) (loopErr, reply error) {
	var ke *kerr.Error
	switch {
	case err == nil:
		return nil, nil
	case errors.Is(err, ErrControllerMoved):
		return err, moved
	case errors.As(err, &ke):
		return nil, err
	default:
		return err, kerr.UnknownServerError
	}
}

func (c *Controller) replyReplicaLeaderElection(e replicaLeaderElectionEvent) error {
	outcomes, err := c.processReplicaLeaderElection(e)
	loopErr, reply := rpcOutcome(err, kerr.NotController)
	if e.reply != nil {
		e.reply <- result[map[common.TopicPartition]ElectionOutcome]{val: outcomes, err: reply}
	}
	return loopErr
}

func (c *Controller) replyApiReassignment(e apiReassignmentEvent) error {
	errs, err := c.processApiReassignment(e)
	loopErr, reply := rpcOutcome(err, kerr.NotController)
	e.reply <- result[map[common.TopicPartition]error]{val: errs, err: reply}
	return loopErr
}

func (c *Controller) replyAlterPartition(e alterPartitionEvent) error {
	resp, err := c.processAlterPartition(e.req)
	loopErr, reply := rpcOutcome(err, kerr.NotController)
	if resp == nil {
		resp = e.req.ResponseKind().(*kmsg.AlterPartitionResponse)
		var ke *kerr.Error
		if errors.As(reply, &ke) {
			resp.ErrorCode = ke.Code
		}
	}
	e.reply <- result[*kmsg.AlterPartitionResponse]{val: resp}
	return loopErr
}

var errIllegalState = errors.New("controller: illegal controller state")

func (c *Controller) handleProcessError(ev event, err error) {
	switch {
	case err == nil:
	case errors.Is(err, ErrControllerMoved):
		// Fenced or lost: resign, never retry; the new controller owns the
		// state now.
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

// processStartup watches /controller and runs the first election.
func (c *Controller) processStartup() error {
	c.controllerStop = c.zk.WatchData(zkpaths.ControllerPath, func() {
		c.controllerSeen.Store(c.cfg.Now().UnixNano())
		c.em.put(controllerChangeEvent{})
	})
	return c.elect()
}

// processReelect runs after a new ZooKeeper session replaced an expired
// one: resign if /controller names another broker, then elect.
func (c *Controller) processReelect() error {
	c.maybeResign()
	return c.elect()
}

// processExpire resigns on session expiry: the ephemeral /controller is
// gone with the session, and so are the watches.
func (c *Controller) processExpire() {
	c.activeID.Store(-1)
	if c.IsActive() {
		c.log.Warn("zookeeper session expired; resigning as controller")
	}
	c.onControllerResignation()
}

// --- election: create the ephemeral /controller and bump /controller_epoch in one multi ---

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
	phases := &failoverPhases{}
	if seen := c.controllerSeen.Load(); seen != 0 {
		phases.Noticed = time.Unix(0, seen)
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
	phases.Won = c.cfg.Now()
	if err := c.onControllerFailover(phases); err != nil {
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
// another broker can take over.
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

// --- failover: watches, a full read of the cluster, then the state push ---

func (c *Controller) watchChildren(path string, ev event) {
	c.watchCancels = append(c.watchCancels, c.zk.WatchChildren(path, func() { c.em.put(ev) }))
}

// failoverPhases records when one failover passed each of its phases, so
// that its time can be broken down (the completion log line, the scale
// benchmark), and what its early elections elected (LastFailover).
type failoverPhases struct {
	Noticed   time.Time // the /controller watch fired (zero if the election came another way)
	Won       time.Time // /controller created and /controller_epoch bumped
	Early     time.Time // the hinted partitions read, elected and sent (earlyElections; zero without)
	Loaded    time.Time // brokers, topics and partition states read into the context
	Elected   time.Time // the partition state machine wrote the elections
	IsrShrunk time.Time // the replica state machine wrote the remaining ISR shrinks
	Sent      time.Time // the LeaderAndIsr and UpdateMetadata requests were queued to the brokers
	Done      time.Time // reassignments, deletions and pending elections resumed

	Epoch int32 // the controller epoch won
	// EarlyElected are the partitions the early elections elected
	// (sorted; none without them).
	EarlyElected []common.TopicPartition
}

// FailoverReport is what a controller's latest failover did, as far as
// operators' tools and tests need it.
type FailoverReport struct {
	// Epoch is the controller epoch the failover won.
	Epoch int32
	// Done reports whether the failover ran to its end (it resigned
	// otherwise).
	Done bool
	// EarlyElected are the partitions it elected before reading the other
	// partitions' states, because this broker's metadata named their
	// leader and that leader was not live (Config.LeadersHint), sorted.
	EarlyElected []common.TopicPartition
}

// LastFailover returns the report of this controller's latest failover;
// ok is false before the first.
func (c *Controller) LastFailover() (r FailoverReport, ok bool) {
	ph := c.lastFailover.Load()
	if ph == nil {
		return FailoverReport{}, false
	}
	return FailoverReport{Epoch: ph.Epoch, Done: !ph.Done.IsZero(), EarlyElected: slices.Clone(ph.EarlyElected)}, true
}

// failoverLog is the record as log attributes: each phase's duration.
func (p *failoverPhases) failoverLog() []any {
	var out []any
	prev := p.Won
	for _, ph := range []struct {
		name string
		at   time.Time
	}{{"early_elections", p.Early}, {"read_context", p.Loaded}, {"elections_written", p.Elected}, {"replica_state_machine", p.IsrShrunk}, {"requests_queued", p.Sent}, {"reassignments_deletions_elections", p.Done}} {
		if ph.at.IsZero() {
			continue
		}
		out = append(out, ph.name, ph.at.Sub(prev).Round(time.Millisecond).String())
		prev = ph.at
	}
	if !p.Noticed.IsZero() {
		out = append(out, "watch_to_won", p.Won.Sub(p.Noticed).Round(time.Millisecond).String())
	}
	return out
}

func (c *Controller) onControllerFailover(ph *failoverPhases) error {
	ph.Epoch = c.ctx.Epoch
	defer c.lastFailover.Store(ph)
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
	if err := c.initializeControllerLayout(); err != nil {
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
	early, earlyWritten, err := c.earlyElections()
	if err != nil {
		return err
	}
	if early != nil {
		ph.Early = c.cfg.Now()
		for tp := range earlyWritten {
			ph.EarlyElected = append(ph.EarlyElected, tp)
		}
		sortTPs(ph.EarlyElected)
	}
	if err := c.readRemainingStates(early); err != nil {
		return err
	}
	ph.Loaded = c.cfg.Now()
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	// Both state machines classify first. The partitions without a live
	// leader are then elected (one conditional write each: the new leader,
	// the ISR without the offline replicas, the leader epoch one higher)
	// before the replica state machine takes the offline replicas out of
	// the other ISRs, so it finds nothing left to write for them; a
	// partition with no eligible leader is left to the replica state
	// machine (leader -1, the ISR shrunk). Kafka's failover shrinks first
	// and elects after, two writes and two leader epochs for each
	// partition the dead broker led; its broker-failure handling already
	// elects first, as onReplicasBecomeOffline does. The elections are sent
	// as soon as they are written (clients wait for leaders, not for
	// ISRs), then the rest: each broker gets each partition once, the
	// elected ones in the first LeaderAndIsr, the others in the second.
	online, offline := c.rsm.initializeStates()
	c.psm.initializeStates()
	written, err := c.psm.electPending("controller startup")
	if err != nil {
		return err
	}
	for tp := range earlyWritten {
		written[tp] = true
	}
	ph.Elected = c.cfg.Now()
	c.sendBatch()
	if err := c.batch.newBatch(); err != nil {
		return fmt.Errorf("%w: %v", errIllegalState, err)
	}
	if err := c.rsm.startup(online, offline, written); err != nil {
		return err
	}
	ph.IsrShrunk = c.cfg.Now()
	c.sendBatch()
	ph.Sent = c.cfg.Now()
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
	// was active.
	if _, err := c.processReplicaLeaderElection(zkElection); err != nil {
		return err
	}
	c.scheduleRebalance(5 * time.Second)
	ph.Done = c.cfg.Now()
	c.log.Info("controller failover complete", append([]any{"controller_epoch", c.ctx.Epoch, "brokers", c.ctx.LiveOrShuttingDownBrokerIDs(), "topics", len(c.ctx.allTopics), "partitions", c.ctx.PartitionCount()}, ph.failoverLog()...)...)
	return nil
}

// initializeControllerLayout reads the brokers, the topics and their
// assignments into the context (with their watches) and opens the
// channels to the brokers; the partitions' states are read after
// (readRemainingStates, and earlyElections before it).
func (c *Controller) initializeControllerLayout() error {
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
	c.channels = c.newSink()
	c.batch.maxVersion = c.channels.maxVersion
	for _, b := range c.ctx.LiveOrShuttingDownBrokers() {
		c.channels.addBroker(b)
	}
	return nil
}

// readRemainingStates reads the state znode of every partition not in
// done into the context.
func (c *Controller) readRemainingStates(done map[common.TopicPartition]bool) error {
	tps := c.ctx.AllPartitions()
	if len(done) > 0 {
		tps = slices.DeleteFunc(tps, func(tp common.TopicPartition) bool { return done[tp] })
	}
	states, err := c.psm.store.ReadStates(tps)
	if err != nil {
		return err
	}
	for tp, l := range states {
		c.ctx.PutLeadership(tp, l)
	}
	return nil
}

// earlyElections is a new controller's first step when its broker's
// metadata cache names partitions led by brokers that are no longer live
// (Config.LeadersHint), as after the previous controller's broker died:
// it reads those partitions' state znodes only, elects the ones whose
// leader, as read, is not live (one conditional write each, as
// electPending does), and sends them, before reading the other state
// znodes. Clients wait for leaders, and a failover of thousands of
// partitions otherwise reads every state znode before its first
// election. The partitions read are returned (in the context, classified
// Online or Offline as initializeStates would), with the ones written;
// a partition without a state znode is left to the full read.
func (c *Controller) earlyElections() (read, written map[common.TopicPartition]bool, err error) {
	if c.cfg.LeadersHint == nil {
		return nil, nil, nil
	}
	var tps []common.TopicPartition
	for _, t := range c.ctx.AllTopics() {
		for p, leader := range c.cfg.LeadersHint(t) {
			tp := common.TopicPartition{Topic: t, Partition: p}
			if _, assigned := c.ctx.assignments[t][p]; assigned && leader >= 0 && !c.ctx.IsReplicaOnline(leader, tp, false) {
				tps = append(tps, tp)
			}
		}
	}
	if len(tps) == 0 {
		return nil, nil, nil
	}
	sortTPs(tps)
	states, err := c.psm.store.ReadStates(tps)
	if err != nil {
		return nil, nil, err
	}
	read = map[common.TopicPartition]bool{}
	var offline []common.TopicPartition
	for tp, l := range states {
		read[tp] = true
		c.ctx.PutLeadership(tp, l)
		if c.ctx.IsReplicaOnline(l.Leader, tp, false) {
			c.psm.setState(tp, OnlinePartition, "controller startup: leader is online", "")
			continue
		}
		c.psm.setState(tp, OfflinePartition, "controller startup: leader is offline", "")
		if !c.ctx.IsTopicQueuedForDeletion(tp.Topic) {
			offline = append(offline, tp)
		}
	}
	written = map[common.TopicPartition]bool{}
	if len(offline) == 0 {
		return read, written, nil
	}
	sortTPs(offline)
	if err := c.batch.newBatch(); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errIllegalState, err)
	}
	if _, err := c.psm.handleStateChanges(offline, OnlinePartition, &electionSpec{strategy: OfflineElection}, "controller startup"); err != nil {
		c.batch.clear()
		return nil, nil, err
	}
	c.sendBatch()
	for _, tp := range offline {
		if c.psm.state(tp) == OnlinePartition {
			written[tp] = true
		}
	}
	c.log.Info("elected the partitions the broker's metadata named with a dead leader before reading the others",
		"read", len(read), "elected", len(written))
	return read, written, nil
}
