package config

// Dynamic broker configuration (Kafka's KIP-226 DynamicBrokerConfig): the
// values of /config/brokers/<default> (cluster-wide) and
// /config/brokers/<id> (this broker) are layered over the static
// configuration. Precedence, highest first: dynamic per-broker, dynamic
// cluster default, static (server.properties and --override), Kafka's
// default. Every change builds a whole new *Config, which replaces the
// current one atomically; components that hold a setting in their own
// state subscribe to the keys they use and are called with the old and the
// new Config after the swap.

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Source is where a broker key's current value comes from, highest
// precedence first; the values are DescribeConfigs' config_source.
type Source int8

const (
	SourceDynamicBroker        Source = 2 // DYNAMIC_BROKER_CONFIG
	SourceDynamicDefaultBroker Source = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG
	SourceStaticBroker         Source = 4 // STATIC_BROKER_CONFIG
	SourceDefault              Source = 5 // DEFAULT_CONFIG
)

// Dynamic holds a broker's current configuration. It is safe for
// concurrent use; Current never blocks.
type Dynamic struct {
	static *Config
	cur    atomic.Pointer[Config]

	// mu serializes updates and guards the layers and subscribers.
	mu          sync.Mutex
	clusterDefs map[string]string // /config/brokers/<default>
	perBroker   map[string]string // /config/brokers/<id>
	subs        map[int]subscriber
	nextSub     int
	validators  []func(old, new *Config) error // AddValidator
}

type subscriber struct {
	keys []string // nil: every key
	fn   func(old, new *Config)
}

// NewDynamic starts from the static configuration with no dynamic values.
func NewDynamic(static *Config) *Dynamic {
	d := &Dynamic{static: static, subs: map[int]subscriber{}}
	d.cur.Store(static)
	return d
}

// Static returns the configuration the broker was started with.
func (d *Dynamic) Static() *Config { return d.static }

// Current returns the configuration in force now. Callers read it once per
// decision and must not keep it across requests.
func (d *Dynamic) Current() *Config { return d.cur.Load() }

// Layers returns copies of the dynamic cluster-default and per-broker
// values in force.
func (d *Dynamic) Layers() (clusterDefault, perBroker map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.clusterDefs), maps.Clone(d.perBroker)
}

// Subscribe calls fn(old, new) after every update that changes the value
// of one of keys (every update when keys is nil). fn runs on the updating
// goroutine, after the new Config is current, with the update lock held:
// it must not call Update, Validate or Layers (Current is fine).
// The returned function unsubscribes.
func (d *Dynamic) Subscribe(keys []string, fn func(old, new *Config)) (cancel func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := d.nextSub
	d.nextSub++
	d.subs[id] = subscriber{keys: slices.Clone(keys), fn: fn}
	return func() {
		d.mu.Lock()
		delete(d.subs, id)
		d.mu.Unlock()
	}
}

// Update replaces both dynamic layers (nil = empty) and makes the
// resulting configuration current. When the layered configuration does
// not validate, nothing changes and the error says why.
func (d *Dynamic) Update(clusterDefault, perBroker map[string]string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	next, err := d.build(clusterDefault, perBroker)
	if err != nil {
		return err
	}
	old := d.cur.Load()
	d.clusterDefs, d.perBroker = maps.Clone(clusterDefault), maps.Clone(perBroker)
	d.cur.Store(next)
	for _, id := range slices.Sorted(maps.Keys(d.subs)) {
		s := d.subs[id]
		if s.keys == nil || changedAny(old, next, s.keys) {
			s.fn(old, next)
		}
	}
	return nil
}

// Validate reports whether the layers would build a valid configuration,
// without changing anything.
func (d *Dynamic) Validate(clusterDefault, perBroker map[string]string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err := d.build(clusterDefault, perBroker)
	return err
}

// AddValidator adds a check of every update against the configuration in
// force (Kafka's Reconfigurable.validateReconfiguration: thread counts
// within half and double, a key store keeping its identity). Update and
// Validate fail with its error; fn runs under the update lock and must not
// call the Dynamic.
func (d *Dynamic) AddValidator(fn func(old, new *Config) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.validators = append(d.validators, fn)
}

func (d *Dynamic) runValidators(next *Config) error {
	for _, v := range d.validators {
		if err := v(d.cur.Load(), next); err != nil {
			return err
		}
	}
	return nil
}

func (d *Dynamic) build(clusterDefault, perBroker map[string]string) (*Config, error) {
	props := maps.Clone(d.static.props)
	if props == nil {
		props = map[string]string{}
	}
	for _, layer := range []map[string]string{clusterDefault, perBroker} {
		for k, v := range layer {
			if appliedKey(k) {
				props[k] = v
			}
		}
	}
	next, err := fromMap(props, true)
	if err != nil {
		return nil, err
	}
	next.explicit = maps.Clone(d.static.explicit)
	next.source = map[string]Source{}
	for k := range clusterDefault {
		next.source[k] = SourceDynamicDefaultBroker
	}
	for k := range perBroker {
		next.source[k] = SourceDynamicBroker
	}
	// A dynamic value of one synonym hides the static values of the others
	// (Kafka's overrideProps): log.retention.ms set dynamically makes the
	// static log.retention.hours irrelevant, which the accessors already
	// honour because the _ms keys take precedence.
	if err := d.runValidators(next); err != nil {
		return nil, err
	}
	return next, nil
}

// Source returns where key's value in c comes from.
func (c *Config) Source(key string) Source {
	if s, ok := c.source[key]; ok {
		return s
	}
	if c.explicit[key] {
		return SourceStaticBroker
	}
	return SourceDefault
}

func changedAny(old, new *Config, keys []string) bool {
	for _, k := range keys {
		a, _ := old.Value(k)
		b, _ := new.Value(k)
		if a != b {
			return true
		}
		if old.listenerProps[k] != new.listenerProps[k] {
			return true
		}
	}
	return false
}

// StaticValue returns key's value when the configuration c was built from
// sets it (server.properties or an override; listener-prefixed keys
// included), false otherwise. Call it on Dynamic.Static().
func (c *Config) StaticValue(key string) (string, bool) {
	if v, ok := c.listenerProps[key]; ok {
		return v, true
	}
	if !c.explicit[key] {
		return "", false
	}
	return c.Value(key)
}

// StaticListenerKeys returns the listener.name.<listener>.<key> keys c was
// built with, sorted.
func StaticListenerKeys(c *Config) []string {
	return slices.Sorted(maps.Keys(c.listenerProps))
}

// appliedKey reports whether a dynamic layer's key takes part in building
// the Config: broker keys (implemented or Kafka-only) and listener keys.
// Custom keys are kept in the layers (DescribeConfigs lists them) but,
// as in Kafka, change nothing.
func appliedKey(k string) bool {
	if isKafkaBrokerKey(k) {
		return true
	}
	_, ok := listenerBaseName(k)
	return ok
}
