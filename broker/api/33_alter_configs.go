package api

// AlterConfigs (key 33), versions 0–2 (flexible from 2).
//
// Behaviour: replaces the complete set of dynamic configs
// of each resource (unlisted keys are removed).
//   - TOPIC: the topic must exist (UNKNOWN_TOPIC_OR_PARTITION); the new set
//     is validated (INVALID_CONFIG with Kafka's messages); unless
//     validate_only, /config/topics/<t> is written and a /config/changes
//     notification created, so every broker applies it live;
//   - BROKER: name "" is the cluster default (/config/brokers/<default>),
//     otherwise it must be this broker's id (INVALID_REQUEST "Unexpected
//     broker id, ..." — a client sends a per-broker alteration to that
//     broker). The set is checked as Kafka's DynamicBrokerConfig.validate
//     (non-dynamic keys, security keys without a listener prefix, types,
//     per-broker keys at the default, then the whole resulting
//     configuration); a refusal is INVALID_REQUEST "Invalid config value
//     for resource ConfigResource(type=BROKER, name='…'): …". Unless
//     validate_only the set is stored (passwords encoded with
//     password.encoder.secret) with a change notification, and every
//     broker applies it;
//   - a resource named twice → INVALID_REQUEST for each occurrence; entries
//     with a null value are ignored, as Kafka does;
//   - authorization: AlterConfigs on the Cluster for BROKER (else
//     CLUSTER_AUTHORIZATION_FAILED), on the topic for TOPIC (else
//     TOPIC_AUTHORIZATION_FAILED), without a message.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
)

func (a *Apis) handleAlterConfigs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	resp.Resources = alterEach(ctx, a, r, req.Resources, func(res kmsg.AlterConfigsRequestResource) resourceKey {
		return resourceKey{res.ResourceType, res.ResourceName}
	}, req.ValidateOnly, "alter configs failed", func(res kmsg.AlterConfigsRequestResource, _ map[string]string) (map[string]string, error) {
		if res.ResourceType == kmsg.ConfigResourceTypeBrokerLogger {
			return nil, errAlterConfigsBrokerLogger
		}
		cfgs := map[string]string{}
		var nulls []string
		for _, c := range res.Configs {
			if c.Value != nil {
				cfgs[c.Name] = *c.Value
			} else {
				nulls = append(nulls, c.Name)
			}
		}
		// Kafka refuses null values; topics keep Klassik's earlier leniency.
		if len(nulls) > 0 && res.ResourceType == kmsg.ConfigResourceTypeBroker {
			return nil, denied(kerr.InvalidRequest, "Null value not supported for : "+strings.Join(nulls, ","))
		}
		return cfgs, nil
	})
	return resp, nil
}

// alterEach is the loop AlterConfigs and IncrementalAlterConfigs share: for
// each resource (of the request's resource type R, named by key), in order,
// it computes the new override set with update(resource, current),
// validates and (unless validateOnly) stores it. A resource named twice
// answers INVALID_REQUEST for each occurrence and is not touched. The
// answers are AlterConfigs' response resources; IncrementalAlterConfigs'
// have the same fields and convert.
func alterEach[R any](ctx context.Context, a *Apis, r *request, resources []R, key func(R) resourceKey, validateOnly bool, failMsg string,
	update func(res R, current map[string]string) (map[string]string, error)) []kmsg.AlterConfigsResponseResource {
	keys := make([]resourceKey, len(resources))
	for i, res := range resources {
		keys[i] = key(res)
	}
	dup := duplicates(keys)
	var out []kmsg.AlterConfigsResponseResource
	for i, k := range keys {
		var err error
		if dup[k] {
			err = fmt.Errorf("%w: error due to duplicate resource %s", kerr.InvalidRequest, k.name)
		} else if err = a.configsAuthorization(ctx, r, kmsg.ACLOperationAlterConfigs, k.typ, k.name); err == nil {
			alter := func() error {
				return a.alterResource(ctx, k.typ, k.name, validateOnly, func(current map[string]string) (map[string]string, error) {
					return update(resources[i], current)
				})
			}
			// A ZooKeeper request fails, never resent, when the broker's
			// session expires before its answer. Altering a resource reads
			// the current set and writes the whole new one, so it is run
			// again, once, on the new session: whatever of the first run
			// landed, the second ends in the state asked for (incremental
			// APPEND and SUBTRACT add or remove a value only once).
			if err = alter(); errors.Is(err, zk.ErrSessionExpired) {
				a.logger.Info("ZooKeeper session expired while altering configs; running the alteration again on the new session", "resource", k.name, "error", err)
				err = alter()
			}
		}
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = k.typ, k.name
		rr.ErrorCode, rr.ErrorMessage = a.codeMessage(err, failMsg, "resource", k.name)
		out = append(out, rr)
	}
	return out
}

// alterResource computes the new override set of a resource with update
// (given the current one), validates it and, unless validateOnly, stores it.
func (a *Apis) alterResource(ctx context.Context, typ kmsg.ConfigResourceType, name string, validateOnly bool,
	update func(current map[string]string) (map[string]string, error)) error {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if err := a.requireTopic(name); err != nil {
			return err
		}
		current, err := a.zk.GetEntityConfigs(zkpaths.ConfigTypeTopic, name)
		if err != nil {
			return err
		}
		next, err := update(current)
		if err != nil {
			return err
		}
		if err := a.validateTopicConfigs(next); err != nil {
			return err
		}
		if validateOnly {
			return nil
		}
		if err := a.zk.ChangeEntityConfigs(zkpaths.ConfigTypeTopic, name, next); err != nil {
			return err
		}
		a.logger.Info("updated topic config", "topic", name, "configs", next)
		return nil
	case kmsg.ConfigResourceTypeBroker:
		entity, perBroker, err := a.brokerEntity(name)
		if err != nil {
			return err
		}
		current, err := a.currentBrokerConfigs(entity, perBroker)
		if err != nil {
			return err
		}
		next, err := update(current)
		if err != nil {
			return err
		}
		return a.alterBrokerConfigs(name, entity, perBroker, next, validateOnly)
	case kmsg.ConfigResourceTypeBrokerLogger:
		// Log levels change inside update (brokerlogger.go); AlterConfigs'
		// update refuses the type.
		_, err := update(nil)
		return err
	default:
		return fmt.Errorf("%w: unsupported resource type %v", kerr.InvalidRequest, typ)
	}
}
