package controller

// ControllerChannelManager: one FIFO queue and one
// sender goroutine per registered broker. A sender sends one request, waits
// for its response, then takes the next, so a broker sees control requests
// in exactly the order they were enqueued. On any I/O error it closes the
// connection, backs off and resends the same request, forever, until the
// broker is removed.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/network"
)

// reconnectBackoff is Kafka's fixed 100 ms between retries of one request.
const reconnectBackoff = 100 * time.Millisecond

// responseHandler receives every response; it must not block (it enqueues
// an event).
type responseHandler func(broker int32, o outgoingRequest, resp kmsg.Response)

type channelManager struct {
	controllerID int32
	listener     string
	timeout      time.Duration
	log          *slog.Logger
	onResponse   responseHandler
	metrics      *channelMetrics
	dial         network.DialFunc

	// mu guards the following.
	mu       sync.Mutex
	senders  map[int32]*brokerSender
	versions map[int32]map[int16]int16 // broker → key → max version advertised
	closed   bool
}

func newChannelManager(controllerID int32, listener string, timeout time.Duration, log *slog.Logger, onResponse responseHandler, metrics *channelMetrics) *channelManager {
	return &channelManager{
		controllerID: controllerID,
		listener:     listener,
		timeout:      timeout,
		log:          log,
		onResponse:   onResponse,
		metrics:      metrics,
		dial:         network.PlainDialer,
		senders:      map[int32]*brokerSender{},
		versions:     map[int32]map[int16]int16{},
	}
}

type brokerSender struct {
	cm     *channelManager
	id     int32
	addr   string
	ctx    context.Context // cancelled by stop
	cancel context.CancelFunc
	wake   chan struct{}
	done   chan struct{}

	// queueTime is RequestRateAndQueueTimeMs of this broker.
	queueTime gometrics.Timer

	// mu guards the following.
	mu    sync.Mutex
	queue []outgoingRequest
}

// addBroker starts a sender for b (no-op if one exists).
func (cm *channelManager) addBroker(b Broker) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.closed {
		return
	}
	if _, ok := cm.senders[b.ID]; ok {
		return
	}
	ep, ok := interBrokerEndpoint(b, cm.listener)
	addr := ""
	if ok {
		addr = net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
	} else {
		cm.log.Error("broker has no endpoint for the inter-broker listener; requests to it are dropped", "target_broker", b.ID, "listener", cm.listener)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &brokerSender{cm: cm, id: b.ID, addr: addr, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{})}
	cm.senders[b.ID] = s
	s.queueTime = cm.metrics.addBroker(s)
	go s.run()
}

// removeBroker stops the broker's sender, closes its connection and
// discards its queued requests.
func (cm *channelManager) removeBroker(id int32) {
	cm.mu.Lock()
	s := cm.senders[id]
	delete(cm.senders, id)
	delete(cm.versions, id)
	cm.mu.Unlock()
	if s != nil {
		s.cancel()
		<-s.done
		cm.metrics.removeBroker(s)
	}
}

// send enqueues requests on their brokers' queues; requests for brokers
// without a sender are dropped.
func (cm *channelManager) send(reqs []outgoingRequest) {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	for _, o := range reqs {
		s := cm.senders[o.broker]
		if s == nil {
			cm.log.Debug("dropping request for a broker without a queue", "target_broker", o.broker, "api", kmsg.NameForKey(o.req.Key()))
			continue
		}
		o.enqueued = time.Now()
		s.mu.Lock()
		s.queue = append(s.queue, o)
		s.mu.Unlock()
		cm.metrics.total.Add(1)
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// maxVersion returns the highest version of key the broker advertised, or
// -1 if not known yet.
func (cm *channelManager) maxVersion(broker int32, key int16) int16 {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if v, ok := cm.versions[broker][key]; ok {
		return v
	}
	return -1
}

// shutdown stops every sender and discards all queues (resignation).
func (cm *channelManager) shutdown() {
	cm.mu.Lock()
	cm.closed = true
	senders := cm.senders
	cm.senders = map[int32]*brokerSender{}
	cm.mu.Unlock()
	for _, s := range senders {
		s.cancel()
	}
	for _, s := range senders {
		<-s.done
		cm.metrics.removeBroker(s)
	}
}

func (s *brokerSender) head() (outgoingRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return outgoingRequest{}, false
	}
	return s.queue[0], true
}

func (s *brokerSender) pop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue[0] = outgoingRequest{}
	s.queue = s.queue[1:]
	s.cm.metrics.total.Add(-1)
}

func (s *brokerSender) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (s *brokerSender) run() {
	defer close(s.done)
	var client *network.Client
	defer func() {
		if client != nil {
			client.Close()
		}
	}()
	log := s.cm.log.With("target_broker", s.id)
	for {
		o, ok := s.head()
		if !ok {
			select {
			case <-s.ctx.Done():
				return
			case <-s.wake:
				continue
			}
		}
		if s.addr == "" {
			s.pop()
			continue
		}
		if client == nil {
			c, err := s.cm.dial(s.ctx, s.addr, "controller-"+strconv.Itoa(int(s.cm.controllerID))+"-to-broker-"+strconv.Itoa(int(s.id)), s.cm.timeout)
			if err != nil {
				if s.ctx.Err() != nil {
					return
				}
				log.Debug("controller could not connect to broker; retrying", "addr", s.addr, "err", err)
				if !s.sleep(reconnectBackoff) {
					return
				}
				continue
			}
			client = c
			if vs, err := client.ApiVersions(s.ctx); err == nil {
				m := map[int16]int16{}
				for k, r := range vs {
					m[k] = r[1]
				}
				s.cm.mu.Lock()
				s.cm.versions[s.id] = m
				s.cm.mu.Unlock()
			} else {
				client.Close()
				client = nil
				if !s.sleep(reconnectBackoff) {
					return
				}
				continue
			}
		}
		s.capVersion(o.req)
		s.queueTime.UpdateSince(o.enqueued)
		resp, err := client.Request(s.ctx, o.req)
		if err != nil {
			client.Close()
			client = nil
			if s.ctx.Err() != nil {
				return
			}
			log.Warn("controller request to broker failed; reconnecting and resending", "api", kmsg.NameForKey(o.req.Key()), "err", err)
			if !s.sleep(reconnectBackoff) {
				return
			}
			continue
		}
		s.pop()
		if s.cm.onResponse != nil {
			s.cm.onResponse(s.id, o, resp)
		}
	}
}

// capVersion lowers the request's version to what the broker advertised,
// within the range where the request's field layout does not change
// (grouped topics for LeaderAndIsr v2+, UpdateMetadata v5+, per-partition
// delete flags for StopReplica v3+); below that the request is left as
// built and the broker's answer decides.
func (s *brokerSender) capVersion(req kmsg.Request) {
	floor := map[int16]int16{4: 2, 6: 5, 5: 3}[req.Key()]
	maxV := s.cm.maxVersion(s.id, req.Key())
	if maxV >= floor && maxV < req.GetVersion() {
		req.SetVersion(maxV)
	}
}

func (o outgoingRequest) String() string {
	return fmt.Sprintf("%s to broker %d", kmsg.NameForKey(o.req.Key()), o.broker)
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
