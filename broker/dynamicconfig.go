package broker

// Dynamic broker configuration on every broker (Kafka's
// DynamicBrokerConfig.initialize and BrokerConfigHandler): at start-up,
// before the logs are opened, the broker reads /config/brokers/<default>
// and /config/brokers/<id> and layers them over server.properties
// (b.dyn); a /config/changes notification for "brokers/<default>" or
// "brokers/<this id>" reloads both. Entries that cannot be applied
// (non-dynamic keys, unprefixed security keys, per-broker keys at the
// cluster default, unparsable values, undecodable passwords) are logged as
// errors and dropped, as Kafka does; a set that as a whole does not make a
// valid configuration is logged and not applied.
//
// Subscribers of b.dyn react to changes; this file subscribes the log
// defaults (every log without a topic override of a changed key gets the
// new value, Kafka's DynamicLogConfig) and unclean.leader.election.enable
// (the controller elects offline leaders when the default turns on).

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

// Dynamic is this broker's current configuration (server.properties with
// the /config/brokers layers); never nil.
func (b *Broker) Dynamic() *config.Dynamic { return b.dyn }

// loadDynamicConfig reads both layers from ZooKeeper and applies them; with
// reencode it first re-encodes this broker's stored passwords that were
// encoded with password.encoder.old.secret (Kafka's maybeReEncodePasswords).
// Only a ZooKeeper failure is returned; invalid content is logged.
func (b *Broker) loadDynamicConfig(reencode bool) error {
	defaults, err := b.zk.GetEntityConfigs(zkpaths.ConfigTypeBroker, zkpaths.ConfigEntityDefault)
	if err != nil {
		return err
	}
	var perBroker map[string]string
	if b.brokerID >= 0 {
		id := strconv.Itoa(int(b.brokerID))
		if perBroker, err = b.zk.GetEntityConfigs(zkpaths.ConfigTypeBroker, id); err != nil {
			return err
		}
		if reencode {
			perBroker = b.reencodePasswords(id, perBroker)
		}
	}
	b.applyDynamicLayers(defaults, perBroker)
	return nil
}

// applyDynamicLayers cleans both stored layers and makes them current,
// keeping the other layer when one alone is invalid (Kafka applies the
// default and the per-broker set separately).
func (b *Broker) applyDynamicLayers(storedDefaults, storedPerBroker map[string]string) {
	st := b.dyn.Static()
	defaults := config.FromPersistentProps(storedDefaults, false, st, b.dynLogger())
	perBroker := config.FromPersistentProps(storedPerBroker, true, st, b.dynLogger())
	curDef, curBroker := b.dyn.Layers()
	if err := b.dyn.Validate(defaults, curBroker); err != nil {
		b.logger.Error("cluster default configs could not be applied", "keys", slices.Sorted(maps.Keys(storedDefaults)), "err", err)
		defaults = curDef
	}
	if err := b.dyn.Update(defaults, perBroker); err != nil {
		b.logger.Error("per-broker configs could not be applied", "broker", b.brokerID, "keys", slices.Sorted(maps.Keys(storedPerBroker)), "err", err)
		if err := b.dyn.Update(defaults, curBroker); err != nil {
			b.logger.Error("cluster default configs could not be applied", "err", err)
		}
	}
}

func (b *Broker) dynLogger() func(msg string, args ...any) {
	return func(msg string, args ...any) { b.logger.Error(msg, args...) }
}

// reencodePasswords decodes the stored password configs with the old
// secret and writes them back encoded with the current one; values the old
// secret cannot decode are left as they are.
func (b *Broker) reencodePasswords(id string, stored map[string]string) map[string]string {
	st := b.dyn.Static()
	oldEnc, newEnc := st.NewPasswordEncoder(true), st.NewPasswordEncoder(false)
	if oldEnc == nil || newEnc == nil {
		return stored
	}
	next := maps.Clone(stored)
	changed := false
	for k, v := range stored {
		if !config.IsPasswordConfig(k) {
			continue
		}
		plain, err := oldEnc.Decode(v)
		if err != nil {
			continue
		}
		enc, err := newEnc.Encode(plain)
		if err != nil {
			continue
		}
		next[k], changed = enc, true
	}
	if !changed {
		return stored
	}
	if err := b.zk.ChangeEntityConfigs(zkpaths.ConfigTypeBroker, id, next); err != nil {
		b.logger.Error("re-encoding dynamic password configs with the new secret failed", "err", err)
		return stored
	}
	return next
}

// onBrokerConfigChange is the "brokers" handler of the config change
// listener (Kafka's BrokerConfigHandler): a change of the cluster default
// or of this broker's entity reloads both layers. A ZooKeeper error is
// returned, so the listener retries the notification.
func (b *Broker) onBrokerConfigChange(entity string) error {
	if entity != zkpaths.ConfigEntityDefault && entity != strconv.Itoa(int(b.brokerID)) {
		return nil
	}
	if err := b.loadDynamicConfig(false); err != nil {
		return fmt.Errorf("reading dynamic broker configs: %w", err)
	}
	b.logger.Info("applied dynamic broker config change", "entity", entity)
	return nil
}

// subscribeDynamicLogConfig re-derives every log's configuration when a
// broker log default changes, and tells the controller when the default of
// unclean.leader.election.enable turns on.
func (b *Broker) subscribeDynamicLogConfig() func() {
	return b.dyn.Subscribe(config.DynamicLogKeys(), func(old, cur *config.Config) {
		if b.logs == nil {
			return
		}
		for tp, l := range b.logs.AllLogs() {
			overrides, _ := b.topicCfgs.cached(tp.Topic)
			lc, err := logConfig(cur, overrides)
			if err != nil {
				b.logger.Error("re-deriving a log's config after a dynamic default change failed", "topic", tp.Topic, "err", err)
				continue
			}
			l.UpdateConfig(lc)
		}
		if cur.UncleanLeaderElectionEnable && !old.UncleanLeaderElectionEnable && b.ctrl != nil && b.meta != nil {
			for _, t := range b.meta.Topics() {
				b.ctrl.TopicUncleanLeaderElectionEnabled(t)
			}
		}
	})
}
