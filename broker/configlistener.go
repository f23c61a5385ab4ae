package broker

// Dynamic topic configuration on every broker: a cache of the topic
// overrides in /config/topics/<t> and the listener of /config/changes
// (Kafka's ZkNodeChangeNotificationListener + TopicConfigHandler). An
// alteration writes the new overrides to /config/topics/<t>, then a
// persistent sequential /config/changes/config_change_<n> znode naming the
// entity; every broker reads the notifications in sequence order, reloads
// the named topic's overrides and applies them to its logs, and deletes
// notifications older than 15 minutes. Other entity types are handed by
// name to the handler registered for them (users: SCRAM credentials,
// usercredentials.go, and quotas; clients; ips; brokers); a notification
// for a type without a handler is ignored, as Kafka 2.8's
// DynamicConfigManager does. A reload that fails to read ZooKeeper fails
// the pass before its notification (a node that cannot be decoded is
// logged and skipped), and the pass is retried with backoff:
// a change made while a read fails (a session moving to another server) is
// still applied, so no broker keeps an old min.insync.replicas, quota or
// SCRAM credential while ZooKeeper holds the new one. A notification
// whose reload keeps failing stops holding back the ones after it after a
// few attempts, but its entity is not forgotten: it stays pending and is
// reloaded on every later pass (each retry, each notification, each new
// session) until a reload succeeds.

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// topicConfigCache holds the overrides of each topic. A topic created after
// start-up has no notification (Kafka sends none at creation), so the first
// log created for it reads ZooKeeper (get, called outside partition locks);
// the change listener reloads a topic on every notification; a deleted
// topic is dropped, so a topic re-created under the same name starts from
// its own overrides. Lookups on the data path (cached) never read
// ZooKeeper.
type topicConfigCache struct {
	zk *zkclient.Client

	// mu guards the following.
	mu sync.Mutex
	m  map[string]map[string]string
}

func newTopicConfigCache(c *zkclient.Client) *topicConfigCache {
	return &topicConfigCache{zk: c, m: map[string]map[string]string{}}
}

func (c *topicConfigCache) get(topic string) (map[string]string, error) {
	c.mu.Lock()
	v, ok := c.m[topic]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	return c.reload(topic)
}

// cached returns the topic's overrides if they are in memory.
func (c *topicConfigCache) cached(topic string) (map[string]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[topic]
	return v, ok
}

// drop forgets a deleted topic.
func (c *topicConfigCache) drop(topic string) {
	c.mu.Lock()
	delete(c.m, topic)
	c.mu.Unlock()
}

// reload reads the topic's overrides from ZooKeeper into the cache.
func (c *topicConfigCache) reload(topic string) (map[string]string, error) {
	v, err := c.zk.GetEntityConfigs(zkpaths.ConfigTypeTopic, topic)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.m[topic] = v
	c.mu.Unlock()
	return v, nil
}

// WithConfigChangeFault makes every pass of the /config/changes listener
// call fault first and fail with its error (tests of the retry).
func WithConfigChangeFault(fault func() error) Option {
	return func(o *options) { o.configChangeFault = fault }
}

// WithConfigReloadFault makes the listener call fault with each notified
// entity's type and name before reloading it; an error fails that reload
// as a failed ZooKeeper read would (tests of the retry of each type).
func WithConfigReloadFault(fault func(entityType, entity string) error) Option {
	return func(o *options) { o.configReloadFault = fault }
}

// WithConfigChangeRetry sets the listener's first and longest delay
// between retried passes (tests; defaults configChangeRetryMin and
// configChangeRetryMax).
func WithConfigChangeRetry(first, longest time.Duration) Option {
	return func(o *options) { o.configRetryMin, o.configRetryMax = first, longest }
}

// listenerKnobs are the listener's test hooks and retry delays.
type listenerKnobs struct {
	fault              func() error
	reloadFault        func(entityType, entity string) error
	retryMin, retryMax time.Duration
}

// notificationPurgeAge is how old a processed notification must be before
// a broker deletes it (Kafka: 15 minutes).
const notificationPurgeAge = 15 * time.Minute

// configChangeListener processes /config/changes: one goroutine, woken by
// the children watch and by every new ZooKeeper session.
type configChangeListener struct {
	zk    *zkclient.Client
	cache *topicConfigCache
	apply func(topic string, overrides map[string]string)
	// handlers reload the entity types besides topics, by the
	// notification's (sanitized) entity name. An error (a failed
	// ZooKeeper read) stops the pass before that notification, so the
	// backoff retry processes it again.
	handlers map[string]func(entity string) error
	logger   *slog.Logger

	// knobs.fault, when set (tests: WithConfigChangeFault), runs before
	// every pass; an error fails the pass as a ZooKeeper error would.
	// knobs.reloadFault, when set (tests: WithConfigReloadFault), runs
	// before each reload; an error fails the reload.
	knobs listenerKnobs

	wake    chan struct{} // capacity 1: coalesces wake-ups
	done    chan struct{}
	wg      sync.WaitGroup
	cancels []func()
	once    sync.Once

	lastSeq int64 // highest processed sequence; owned by the goroutine
	// failedSeq is the notification whose retried handler failed
	// failures times in a row; owned by the goroutine.
	failedSeq int64
	failures  int
	// pending are the entities (by type, then name) of notifications
	// given up on while their reload still failed; every pass reloads
	// them until a reload succeeds. Owned by the goroutine.
	pending map[entityRef]struct{}
}

// entityRef names one config entity of a notification.
type entityRef struct{ typ, name string }

func startConfigChangeListener(c *zkclient.Client, cache *topicConfigCache, apply func(string, map[string]string),
	handlers map[string]func(entity string) error, logger *slog.Logger, knobs listenerKnobs) *configChangeListener {
	if knobs.retryMin <= 0 {
		knobs.retryMin = configChangeRetryMin
	}
	if knobs.retryMax < knobs.retryMin {
		knobs.retryMax = max(configChangeRetryMax, knobs.retryMin)
	}
	l := &configChangeListener{zk: c, cache: cache, apply: apply, handlers: handlers, logger: logger.With("component", "config-change-listener"),
		knobs: knobs, wake: make(chan struct{}, 1), done: make(chan struct{}), lastSeq: -1, failedSeq: -1,
		pending: map[entityRef]struct{}{}}
	l.cancels = append(l.cancels,
		c.WatchChildren(zkpaths.ConfigChangesPath, l.poke),
		c.OnNewSession(l.poke))
	l.wg.Add(1)
	go l.run()
	l.poke()
	return l
}

// poke only enqueues: watch callbacks must stay cheap.
func (l *configChangeListener) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *configChangeListener) stop() {
	l.once.Do(func() {
		for _, c := range l.cancels {
			c()
		}
		close(l.done)
	})
	l.wg.Wait()
}

// Retry delays after a failed pass: doubling from the first to the last,
// so a notification is not left unprocessed until the next change.
const (
	// maxNotificationAttempts bounds the passes that retry one
	// notification whose handler fails before the notifications after it
	// go on (about 13 s with the backoff); its entity stays pending.
	maxNotificationAttempts = 8
	configChangeRetryMin    = 100 * time.Millisecond
	configChangeRetryMax    = 10 * time.Second
)

func (l *configChangeListener) run() {
	defer l.wg.Done()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	backoff := l.knobs.retryMin
	for {
		select {
		case <-l.done:
			return
		case <-l.wake:
		case <-retry.C:
		}
		err := l.process()
		switch {
		case err == nil:
			backoff = l.knobs.retryMin
			retry.Stop()
		case errors.Is(err, zkclient.ErrClosed):
		default:
			l.logger.Warn("processing config change notifications failed; retrying", "err", err, "retry_in", backoff)
			retry.Reset(backoff)
			backoff = min(2*backoff, l.knobs.retryMax)
		}
	}
}

// process handles the notifications not processed yet, then reloads the
// pending entities; an error (the first) makes run retry the pass.
func (l *configChangeListener) process() error {
	err := l.processNotifications()
	if perr := l.reloadPending(); err == nil {
		err = perr
	}
	return err
}

func (l *configChangeListener) processNotifications() error {
	if l.knobs.fault != nil {
		if err := l.knobs.fault(); err != nil {
			return err
		}
	}
	start := time.Now()
	kids, err := l.zk.Children(zkpaths.ConfigChangesPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	sort.Strings(kids)
	for _, name := range kids {
		seq, err := zkpaths.ParseSequenceNumber(name, zkpaths.ConfigChangePrefix)
		if err != nil || seq <= l.lastSeq {
			continue
		}
		data, _, err := l.zk.Get(zkpaths.ConfigChangesPath + "/" + name)
		if errors.Is(err, zk.ErrNoNode) {
			l.lastSeq = seq
			continue
		}
		if err != nil {
			return err
		}
		ref, err := l.handle(name, data)
		if errors.Is(err, zkclient.ErrUndecodable) {
			// A node no reload will read either: retrying would only
			// hold back the notifications after it.
			l.logger.Warn("ignoring a config change whose config node cannot be decoded", "notification", name, "err", err)
			err = nil
		}
		switch {
		case err != nil:
			// Retry the notification a bounded number of times, then go
			// on with the ones after it so that one entity whose reload
			// keeps failing cannot hold back the rest; the entity stays
			// pending and is reloaded on every pass until it succeeds.
			if l.failedSeq != seq {
				l.failedSeq, l.failures = seq, 0
			}
			if l.failures++; l.failures < maxNotificationAttempts {
				return fmt.Errorf("config change notification %s: %w", name, err)
			}
			l.logger.Error("a config change's reload keeps failing; going on with the next notifications and retrying this entity until it succeeds",
				"notification", name, "entity_type", ref.typ, "entity", ref.name, "attempts", l.failures, "err", err)
			l.pending[ref] = struct{}{}
		case ref != (entityRef{}):
			// This reload read the entity's current config, which
			// covers an earlier change given up on.
			delete(l.pending, ref)
		}
		l.lastSeq = seq
	}
	// Purge notifications older than 15 minutes; every broker does it and
	// the races are harmless.
	for _, name := range kids {
		p := zkpaths.ConfigChangesPath + "/" + name
		_, st, err := l.zk.Get(p)
		if err != nil {
			continue
		}
		if start.Sub(time.UnixMilli(st.Ctime)) > notificationPurgeAge {
			if err := l.zk.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				l.logger.Debug("purging an old config change notification failed", "path", p, "err", err)
			}
		}
	}
	return nil
}

// reloadPending reloads every pending entity and forgets the ones that
// reloaded (or whose config node cannot be decoded); it returns the first
// error of those still pending.
func (l *configChangeListener) reloadPending() error {
	var first error
	for ref := range l.pending {
		err := l.reload(ref)
		switch {
		case err == nil:
			l.logger.Info("applied a config change that had failed to reload", "entity_type", ref.typ, "entity", ref.name)
			delete(l.pending, ref)
		case errors.Is(err, zkclient.ErrUndecodable):
			l.logger.Warn("ignoring a config change whose config node cannot be decoded", "entity_type", ref.typ, "entity", ref.name, "err", err)
			delete(l.pending, ref)
		case first == nil:
			first = fmt.Errorf("%d config entities still to reload, %s %s: %w", len(l.pending), ref.typ, ref.name, err)
		}
	}
	return first
}

// handle hands one notification to its entity type's handler and returns
// the entity it reloaded (none for a notification ignored) and the
// reload's error, if any.
func (l *configChangeListener) handle(name string, data []byte) (entityRef, error) {
	ch, err := zkpaths.DecodeConfigChangeNotification(data)
	if err != nil {
		l.logger.Warn("ignoring an unreadable config change notification", "notification", name, "err", err)
		return entityRef{}, nil
	}
	ref := entityRef{ch.EntityType, ch.EntityName}
	if _, ok := l.handlers[ref.typ]; !ok && ref.typ != zkpaths.ConfigTypeTopic {
		l.logger.Debug("ignoring a config change for an entity type without a handler", "entity_type", ref.typ, "entity", ref.name)
		return entityRef{}, nil
	}
	return ref, l.reload(ref)
}

// reload reads one entity's config from ZooKeeper and applies it.
func (l *configChangeListener) reload(ref entityRef) error {
	if l.knobs.reloadFault != nil {
		if err := l.knobs.reloadFault(ref.typ, ref.name); err != nil {
			return err
		}
	}
	if h, ok := l.handlers[ref.typ]; ok {
		return h(ref.name)
	}
	overrides, err := l.cache.reload(ref.name)
	if err != nil {
		return fmt.Errorf("reading the changed config of topic %s: %w", ref.name, err)
	}
	l.apply(ref.name, overrides)
	return nil
}
