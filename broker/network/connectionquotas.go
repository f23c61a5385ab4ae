package network

// Kafka's ConnectionQuotas (SocketServer.scala): connection counts per IP,
// per listener and broker-wide, and connection creation rates broker-wide,
// per listener and per IP (KIP-402, KIP-612).
//
//   - max.connections.per.ip (and its overrides): a connection beyond the
//     IP's limit is accepted and closed at once ("Rejected connection from
//     ..., address already has the configured maximum of N connections.").
//   - max.connections and listener.name.<l>.max.connections: the listener's
//     acceptor waits until a slot is free. The inter-broker listener is
//     protected when there is more than one listener: it waits only for its
//     own listener limit, and when it pushes the total over max.connections
//     the least recently used connection of another listener is closed.
//     Lowering max.connections live closes such connections too.
//   - max.connection.creation.rate (broker-wide, not counted on the
//     protected listener) and listener.name.<l>.max.connection.creation.rate:
//     the acceptor delays the connection until the rate is back under the
//     limit (at most quota.window.size.seconds).
//   - connection_creation_rate of /config/ips/<ip> and /config/ips/<default>:
//     a connection over its IP's rate is not counted anywhere and is closed
//     after the throttle time, so the client backs off.
//
// Rates are Kafka's Rate over a SampledStat: quota.window.num samples of
// quota.window.size.seconds, the window at least (samples-1) windows long.
//
// Lock order: Server.mu before connectionQuotas.mu (closeExcessConnections
// asks isProtected while holding Server.mu); an acceptor waiting in inc
// holds no Server lock.

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
)

// Unlimited is Kafka's default of every connection limit (Int.MaxValue).
const Unlimited = math.MaxInt32

// ConnectionQuotaConfig is the connection limits of the socket server; a
// nil *ConnectionQuotaConfig in Config means no limits.
type ConnectionQuotaConfig struct {
	// MaxConnectionsPerIP is max.connections.per.ip.
	MaxConnectionsPerIP int
	// MaxConnectionsPerIPOverrides is max.connections.per.ip.overrides:
	// IP address or host name → limit. Host names are resolved when the
	// configuration is applied, as Kafka does.
	MaxConnectionsPerIPOverrides map[string]int
	// MaxConnections is max.connections.
	MaxConnections int
	// MaxConnectionCreationRate is max.connection.creation.rate.
	MaxConnectionCreationRate int
	// Listeners holds listener.name.<l>.max.connections and
	// .max.connection.creation.rate by listener name; a listener not in
	// the map is unlimited.
	Listeners map[string]ListenerConnectionQuota
	// InterBrokerListener is the protected listener's name.
	InterBrokerListener string
	// QuotaWindowNum and QuotaWindowSize are quota.window.num and
	// quota.window.size.seconds (0 → Kafka's 11 and 1 s).
	QuotaWindowNum  int
	QuotaWindowSize time.Duration
}

// ListenerConnectionQuota is one listener's limits (Unlimited when unset).
type ListenerConnectionQuota struct {
	MaxConnections            int
	MaxConnectionCreationRate int
}

// UnlimitedConnections is a ConnectionQuotaConfig with Kafka's defaults.
func UnlimitedConnections() ConnectionQuotaConfig {
	return ConnectionQuotaConfig{MaxConnectionsPerIP: Unlimited, MaxConnections: Unlimited, MaxConnectionCreationRate: Unlimited}
}

// errTooManyConnections is Kafka's TooManyConnectionsException.
type errTooManyConnections struct {
	ip  netip.Addr
	max int
}

func (e *errTooManyConnections) Error() string {
	return fmt.Sprintf("Too many connections from /%s (maximum = %d)", e.ip, e.max)
}

// errConnectionThrottled is Kafka's ConnectionThrottledException: the IP
// is over its connection rate; the socket is closed at until.
type errConnectionThrottled struct {
	ip       netip.Addr
	throttle time.Duration
}

func (e *errConnectionThrottled) Error() string {
	return fmt.Sprintf("/%s throttled for %d", e.ip, e.throttle.Milliseconds())
}

var errQuotasClosed = errors.New("network: socket server shutting down")

type connectionQuotas struct {
	log *slog.Logger
	now func() time.Time

	// mu guards the following; cond (on mu) wakes acceptors waiting for a
	// slot or the end of a rate delay.
	mu             sync.Mutex
	cond           *sync.Cond
	samples        int
	window         time.Duration
	perIPDefault   int
	perIPOverrides map[netip.Addr]int
	brokerMax      int
	interBroker    string
	counts         map[netip.Addr]int
	listenerCounts map[string]int
	listeners      map[string]*listenerQuota
	total          int
	brokerRate     *rateSensor
	ipRateDefault  int
	ipRates        map[netip.Addr]int
	ipSensors      map[netip.Addr]*rateSensor
	closed         bool
}

type listenerQuota struct {
	maxConns int
	rate     *rateSensor
}

func newConnectionQuotas(cfg ConnectionQuotaConfig, listenerNames []string, log *slog.Logger) *connectionQuotas {
	q := &connectionQuotas{
		log: log, now: time.Now,
		counts: map[netip.Addr]int{}, listenerCounts: map[string]int{}, listeners: map[string]*listenerQuota{},
		ipRateDefault: Unlimited, ipRates: map[netip.Addr]int{}, ipSensors: map[netip.Addr]*rateSensor{},
	}
	q.cond = sync.NewCond(&q.mu)
	q.samples, q.window = cfg.QuotaWindowNum, cfg.QuotaWindowSize
	if q.samples <= 0 {
		q.samples = 11
	}
	if q.window <= 0 {
		q.window = time.Second
	}
	q.brokerRate = newRateSensor(q.samples, q.window, cfg.MaxConnectionCreationRate)
	for _, l := range listenerNames {
		q.listeners[l] = &listenerQuota{maxConns: Unlimited, rate: newRateSensor(q.samples, q.window, Unlimited)}
		q.listenerCounts[l] = 0
	}
	q.applyLocked(cfg, resolveOverrides(cfg.MaxConnectionsPerIPOverrides, log), false)
	return q
}

// resolveOverrides turns max.connections.per.ip.overrides into addresses;
// a host name counts for every address it resolves to. It runs without
// the lock (DNS).
func resolveOverrides(in map[string]int, log *slog.Logger) map[netip.Addr]int {
	out := map[netip.Addr]int{}
	for host, n := range in {
		if a, err := netip.ParseAddr(host); err == nil {
			out[a.Unmap()] = n
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			log.Warn("max.connections.per.ip.overrides: cannot resolve host; its override is not applied", "host", host, "err", err)
			continue
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				out[a.Unmap()] = n
			}
		}
	}
	return out
}

// applyLocked installs cfg, logging what changed as Kafka's reconfigure
// does when announce is set.
func (q *connectionQuotas) applyLocked(cfg ConnectionQuotaConfig, overrides map[netip.Addr]int, announce bool) {
	info := func(msg string, args ...any) {
		if announce {
			q.log.Info(fmt.Sprintf(msg, args...))
		}
	}
	if cfg.MaxConnectionsPerIP != q.perIPDefault {
		info("Updating maxConnectionsPerIp: %d", cfg.MaxConnectionsPerIP)
		q.perIPDefault = cfg.MaxConnectionsPerIP
	}
	if !maps.Equal(overrides, q.perIPOverrides) {
		var parts []string
		for _, h := range slices.Sorted(maps.Keys(cfg.MaxConnectionsPerIPOverrides)) {
			parts = append(parts, fmt.Sprintf("%s=%d", h, cfg.MaxConnectionsPerIPOverrides[h]))
		}
		info("Updating maxConnectionsPerIpOverrides: %s", strings.Join(parts, ","))
		q.perIPOverrides = overrides
	}
	if cfg.MaxConnections != q.brokerMax {
		info("Updating broker-wide maxConnections: %d", cfg.MaxConnections)
		q.brokerMax = cfg.MaxConnections
	}
	if cfg.MaxConnectionCreationRate != q.brokerRate.bound {
		info("Updating broker-wide maxConnectionCreationRate: %d", cfg.MaxConnectionCreationRate)
		q.brokerRate.bound = cfg.MaxConnectionCreationRate
	}
	q.interBroker = cfg.InterBrokerListener
	for name, lq := range q.listeners {
		want, ok := cfg.Listeners[name]
		if !ok {
			want = ListenerConnectionQuota{MaxConnections: Unlimited, MaxConnectionCreationRate: Unlimited}
		}
		if want.MaxConnections != lq.maxConns {
			info("Updating listener %s maxConnections: %d", name, want.MaxConnections)
			lq.maxConns = want.MaxConnections
		}
		if want.MaxConnectionCreationRate != lq.rate.bound {
			info("Updated listener-%s max connection creation rate to %d", name, want.MaxConnectionCreationRate)
			lq.rate.bound = want.MaxConnectionCreationRate
		}
	}
	q.cond.Broadcast()
}

func (q *connectionQuotas) update(cfg ConnectionQuotaConfig) {
	overrides := resolveOverrides(cfg.MaxConnectionsPerIPOverrides, q.log)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.applyLocked(cfg, overrides, true)
}

// updateIPConnectionRate sets /config/ips/<ip> (ip valid) or
// /config/ips/<default> (ip invalid); rate < 0 removes the entry.
func (q *connectionQuotas) updateIPConnectionRate(ip netip.Addr, rate int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if ip.IsValid() {
		ip = ip.Unmap()
		if rate < 0 {
			q.log.Info(fmt.Sprintf("Removing max connection rate override for /%s", ip))
			delete(q.ipRates, ip)
		} else {
			q.log.Info(fmt.Sprintf("Updating max connection rate override for /%s to %d", ip, rate))
			q.ipRates[ip] = rate
		}
		return
	}
	if rate < 0 {
		rate = Unlimited
	}
	q.ipRateDefault = rate
	q.log.Info(fmt.Sprintf("Updated default max IP connection rate to %d", rate))
}

// connectionRateForIP is the IP's connection_creation_rate in force.
func (q *connectionQuotas) connectionRateForIP(ip netip.Addr) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ipRateLocked(ip.Unmap())
}

func (q *connectionQuotas) ipRateLocked(ip netip.Addr) int {
	if r, ok := q.ipRates[ip]; ok {
		return r
	}
	return q.ipRateDefault
}

func (q *connectionQuotas) protectedLocked(listener string) bool {
	return listener == q.interBroker && len(q.listenerCounts) > 1
}

func (q *connectionQuotas) slotAvailableLocked(listener string) bool {
	if lq := q.listeners[listener]; lq != nil && q.listenerCounts[listener] >= lq.maxConns {
		return false
	}
	return q.protectedLocked(listener) || q.total < q.brokerMax
}

// inc admits a new connection from ip on listener: it waits for a slot and
// for the broker and listener rates (bounded by the window), then counts
// the connection. An *errConnectionThrottled leaves nothing counted; an
// *errTooManyConnections has counted the connection, so the caller calls
// dec after closing it, as Kafka's acceptor does.
func (q *connectionQuotas) inc(listener string, ip netip.Addr) error {
	ip = ip.Unmap()
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.waitForSlotLocked(listener); err != nil {
		return err
	}
	if err := q.recordIPLocked(listener, ip); err != nil {
		return err
	}
	n := q.counts[ip]
	q.counts[ip] = n + 1
	q.total++
	if _, ok := q.listenerCounts[listener]; ok {
		q.listenerCounts[listener]++
	}
	max := q.perIPDefault
	if o, ok := q.perIPOverrides[ip]; ok {
		max = o
	}
	if n >= max {
		return &errTooManyConnections{ip: ip, max: max}
	}
	return nil
}

func (q *connectionQuotas) waitForSlotLocked(listener string) error {
	start := q.now()
	delay := q.recordRateLocked(listener, start)
	if delay <= 0 && q.slotAvailableLocked(listener) {
		return nil
	}
	end := start.Add(delay)
	for {
		if q.closed {
			return errQuotasClosed
		}
		remaining := end.Sub(q.now())
		if remaining <= 0 && q.slotAvailableLocked(listener) {
			return nil
		}
		if remaining > 0 {
			t := time.AfterFunc(remaining, q.cond.Broadcast)
			q.cond.Wait()
			t.Stop()
		} else {
			q.cond.Wait()
		}
	}
}

// maxThrottle bounds every rate delay (Kafka: quota.window.size.seconds).
func (q *connectionQuotas) maxThrottle() time.Duration { return q.window }

// recordRateLocked records the connection in the broker-wide (unless the
// listener is protected) and the listener's rate and returns the longer
// of the two delays.
func (q *connectionQuotas) recordRateLocked(listener string, now time.Time) time.Duration {
	var d time.Duration
	if !q.protectedLocked(listener) {
		d = q.brokerRate.recordAndThrottle(now, q.maxThrottle())
	}
	if lq := q.listeners[listener]; lq != nil {
		d = max(d, lq.rate.recordAndThrottle(now, q.maxThrottle()))
	}
	return d
}

// recordIPLocked applies the IP's connection rate; over it, the
// connection is taken back out of every rate it was recorded in.
func (q *connectionQuotas) recordIPLocked(listener string, ip netip.Addr) error {
	rate := q.ipRateLocked(ip)
	if rate == Unlimited {
		return nil
	}
	now := q.now()
	s := q.ipSensors[ip]
	if s == nil {
		q.pruneIPSensorsLocked(now)
		s = newRateSensor(q.samples, q.window, rate)
		q.ipSensors[ip] = s
	}
	s.bound = rate
	d := s.recordAndThrottle(now, q.maxThrottle())
	if d <= 0 {
		return nil
	}
	s.record(-1, now)
	if !q.protectedLocked(listener) {
		q.brokerRate.record(-1, now)
	}
	if lq := q.listeners[listener]; lq != nil {
		lq.rate.record(-1, now)
	}
	return &errConnectionThrottled{ip: ip, throttle: d}
}

// pruneIPSensorsLocked drops the rate of IPs idle for a whole quota
// window, so addresses passing by do not pile up.
func (q *connectionQuotas) pruneIPSensorsLocked(now time.Time) {
	if len(q.ipSensors) < 1024 {
		return
	}
	for ip, s := range q.ipSensors {
		if s.idleSince(now) > time.Duration(q.samples)*q.window {
			delete(q.ipSensors, ip)
		}
	}
}

// dec forgets a closed connection.
func (q *connectionQuotas) dec(listener string, ip netip.Addr) {
	ip = ip.Unmap()
	q.mu.Lock()
	defer q.mu.Unlock()
	switch n := q.counts[ip]; {
	case n <= 0:
		q.log.Error(fmt.Sprintf("Attempted to decrease connection count for address with no connections, address: /%s", ip))
	case n == 1:
		delete(q.counts, ip)
	default:
		q.counts[ip] = n - 1
	}
	if q.total <= 0 {
		q.log.Error("Attempted to decrease total connection count for broker with no connections")
	} else {
		q.total--
	}
	if n, ok := q.listenerCounts[listener]; ok {
		if n == 0 {
			q.log.Error(fmt.Sprintf("Attempted to decrease connection count for listener %s with no connections", listener))
		} else {
			q.listenerCounts[listener] = n - 1
		}
	}
	q.cond.Broadcast()
}

// excess is how many connections of unprotected listeners must close to
// bring the total back under max.connections (Kafka's
// maxConnectionsExceeded, checked by each processor).
func (q *connectionQuotas) excess() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return max(q.total-q.brokerMax, 0)
}

func (q *connectionQuotas) isProtected(listener string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.protectedLocked(listener)
}

func (q *connectionQuotas) get(ip netip.Addr) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.counts[ip.Unmap()]
}

func (q *connectionQuotas) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// rateSensor is Kafka's Sensor with one Rate metric and an upper quota:
// samples of window length in round robin; the rate is the sum of the
// samples over the elapsed time, counted as at least (n-1) windows.
type rateSensor struct {
	n       int
	window  time.Duration
	bound   int // quota, events per second; Unlimited disables it
	samples []rateSample
	current int
}

type rateSample struct {
	start time.Time
	value float64
}

func newRateSensor(n int, window time.Duration, bound int) *rateSensor {
	return &rateSensor{n: n, window: window, bound: bound}
}

func (r *rateSensor) record(v float64, now time.Time) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, rateSample{start: now})
		r.current = 0
	}
	if now.Sub(r.samples[r.current].start) >= r.window {
		r.current = (r.current + 1) % r.n
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, rateSample{start: now})
		} else {
			r.samples[r.current] = rateSample{start: now}
		}
	}
	r.samples[r.current].value += v
}

func (r *rateSensor) purge(now time.Time) {
	expire := time.Duration(r.n) * r.window
	for i := range r.samples {
		if now.Sub(r.samples[i].start) >= expire {
			r.samples[i] = rateSample{start: now}
		}
	}
}

// windowSize is Kafka's Rate.windowSize.
func (r *rateSensor) windowSize(now time.Time) time.Duration {
	r.purge(now)
	if len(r.samples) == 0 {
		r.samples = append(r.samples, rateSample{start: now})
	}
	oldest := r.samples[0].start
	for _, s := range r.samples[1:] {
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := now.Sub(oldest).Milliseconds()
	win := r.window.Milliseconds()
	full := elapsed / win
	if minFull := int64(r.n - 1); full < minFull {
		elapsed += (minFull - full) * win
	}
	return time.Duration(elapsed) * time.Millisecond
}

// rate is events per second at now.
func (r *rateSensor) rate(now time.Time) float64 {
	r.purge(now)
	var total float64
	for _, s := range r.samples {
		total += s.value
	}
	w := r.windowSize(now).Seconds()
	if w <= 0 {
		return 0
	}
	return total / w
}

// recordAndThrottle records one event and, when the rate is now above
// the bound, returns Kafka's throttle time (the time the rate needs to come
// back to the bound), capped at maxThrottle.
func (r *rateSensor) recordAndThrottle(now time.Time, maxThrottle time.Duration) time.Duration {
	r.record(1, now)
	if r.bound == Unlimited {
		return 0
	}
	v := r.rate(now)
	b := float64(r.bound)
	if v <= b {
		return 0
	}
	if b <= 0 {
		return maxThrottle
	}
	ms := math.Round((v - b) / b * float64(r.windowSize(now).Milliseconds()))
	return min(time.Duration(ms)*time.Millisecond, maxThrottle)
}

func (r *rateSensor) idleSince(now time.Time) time.Duration {
	var last time.Time
	for _, s := range r.samples {
		if s.start.After(last) {
			last = s.start
		}
	}
	return now.Sub(last)
}

// remoteIP is the peer's address of an accepted connection.
func remoteIP(nc net.Conn) netip.Addr {
	if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	ap, err := netip.ParseAddrPort(nc.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// tcpConn is the TCP connection under nc (also under a TLS listener's).
func tcpConn(nc net.Conn) (*net.TCPConn, bool) {
	if t, ok := nc.(interface{ NetConn() net.Conn }); ok {
		nc = t.NetConn()
	}
	tc, ok := nc.(*net.TCPConn)
	return tc, ok
}

// admit runs the connection quotas for a just-accepted connection (the
// acceptor may wait here, as Kafka's does). It reports false when the
// connection was refused: closed at once over its IP's limit, or closed
// after the throttle time over its IP's rate.
func (s *Server) admit(nc net.Conn, lc ListenerConfig, ip netip.Addr) bool {
	err := s.quotas.inc(lc.Name, ip)
	var tooMany *errTooManyConnections
	var throttled *errConnectionThrottled
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooMany):
		s.log.Info(fmt.Sprintf("Rejected connection from /%s, address already has the configured maximum of %d connections.", tooMany.ip, tooMany.max),
			"listener", lc.Name)
		nc.Close()
		s.quotas.dec(lc.Name, ip)
	case errors.As(err, &throttled):
		s.log.Debug(fmt.Sprintf("Delaying closing of connection from /%s for %d ms", ip, throttled.throttle.Milliseconds()), "listener", lc.Name)
		s.delayedClose(nc, throttled.throttle)
	default: // shutting down
		nc.Close()
	}
	return false
}

// delayedClose closes a throttled connection after d (Kafka's
// DelayedCloseSocket), or at shutdown.
func (s *Server) delayedClose(nc net.Conn, d time.Duration) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.ctx.Done():
		}
		nc.Close()
	}()
}

// closeExcessConnections closes the least recently used connections of
// unprotected listeners while the total is above max.connections (after
// the inter-broker listener went over it, or max.connections was lowered).
func (s *Server) closeExcessConnections() {
	n := s.quotas.excess()
	if n == 0 {
		return
	}
	s.mu.Lock()
	var cands []*conn
	for c := range s.conns {
		if !c.closing.Load() && !s.quotas.isProtected(c.lc.Name) {
			cands = append(cands, c)
		}
	}
	slices.SortFunc(cands, func(a, b *conn) int { return cmp.Compare(a.lastActive.Load(), b.lastActive.Load()) })
	// Connections already closing still count until their goroutine ends.
	closingNow := 0
	for c := range s.conns {
		if c.closing.Load() {
			closingNow++
		}
	}
	n -= closingNow
	for i := 0; i < n && i < len(cands); i++ {
		c := cands[i]
		c.closing.Store(true)
		s.log.Info("closing the least recently used connection: max.connections exceeded", "listener", c.lc.Name, "conn", c.id)
		c.nc.Close()
	}
	s.mu.Unlock()
}

// UpdateConnectionQuotas applies new connection limits to the running
// server (dynamic max.connections*, max.connection.creation.rate): waiting
// acceptors re-check at once and connections over a lowered
// max.connections are closed, least recently used first.
func (s *Server) UpdateConnectionQuotas(cfg ConnectionQuotaConfig) {
	s.quotas.update(cfg)
	s.closeExcessConnections()
}

// UpdateIPConnectionRate sets the connection_creation_rate of one IP
// (/config/ips/<ip>), or the default of every IP (/config/ips/<default>)
// when ip is the zero Addr; rate < 0 removes the entry.
func (s *Server) UpdateIPConnectionRate(ip netip.Addr, rate int) {
	s.quotas.updateIPConnectionRate(ip, rate)
}

// ConnectionRateForIP is the connection_creation_rate in force for ip
// (Unlimited when none).
func (s *Server) ConnectionRateForIP(ip netip.Addr) int { return s.quotas.connectionRateForIP(ip) }

// ConnectionCount is the number of open connections from ip.
func (s *Server) ConnectionCount(ip netip.Addr) int { return s.quotas.get(ip) }
