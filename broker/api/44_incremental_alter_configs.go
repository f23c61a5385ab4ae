package api

// IncrementalAlterConfigs (key 44), versions 0–1 (flexible from 1).
//
// Behaviour: per key an operation applied to the current
// overrides: SET (0), DELETE (1), APPEND (2) and SUBTRACT (3) — the last two
// only for LIST-typed configs (else INVALID_CONFIG). The merged set is then
// validated and stored exactly like AlterConfigs (topic: /config/topics/<t>
// plus a /config/changes notification; broker: /config/brokers/<id> or
// <default>, starting from its stored set, with Kafka's
// prepareIncrementalConfigs rules and messages, configs.go). A key named
// twice within one resource, or a resource named twice → INVALID_REQUEST; an
// unknown operation → INVALID_REQUEST. Authorization as AlterConfigs
// (AlterConfigs on the Cluster for BROKER and BROKER_LOGGER, on the topic
// for TOPIC).

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/config"
)

func (a *Apis) handleIncrementalAlterConfigs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range alterEach(ctx, a, r, req.Resources, func(res kmsg.IncrementalAlterConfigsRequestResource) resourceKey {
		return resourceKey{res.ResourceType, res.ResourceName}
	}, req.ValidateOnly, "incremental alter configs failed", func(res kmsg.IncrementalAlterConfigsRequestResource, current map[string]string) (map[string]string, error) {
		if res.ResourceType == kmsg.ConfigResourceTypeBrokerLogger {
			return nil, a.alterBrokerLogger(res.ResourceName, res.Configs, req.ValidateOnly)
		}
		if res.ResourceType == kmsg.ConfigResourceTypeBroker {
			return applyIncrementalBroker(current, res.Configs)
		}
		return applyIncremental(res.ResourceType, current, res.Configs, a.conf().TopicDefault)
	}) {
		resp.Resources = append(resp.Resources, kmsg.IncrementalAlterConfigsResponseResource(rr))
	}
	return resp, nil
}

// applyIncremental returns current with ops applied (Kafka's
// ConfigAdminManager.prepareIncrementalConfigs).
func applyIncremental(typ kmsg.ConfigResourceType, current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig,
	topicDefault func(string) (string, bool)) (map[string]string, error) {
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.Name] {
			return nil, fmt.Errorf("%w: error due to duplicate config keys", kerr.InvalidRequest)
		}
		seen[op.Name] = true
	}
	next := maps.Clone(current)
	if next == nil {
		next = map[string]string{}
	}
	for _, op := range ops {
		isList := false
		if typ == kmsg.ConfigResourceTypeTopic {
			tc, ok := config.LookupTopicConfig(op.Name)
			if !ok {
				return nil, fmt.Errorf("%w: unknown topic config name: %s", kerr.InvalidConfig, op.Name)
			}
			isList = tc.Type == config.TypeList
		}
		value := ""
		if op.Value != nil {
			value = *op.Value
		}
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			next[op.Name] = value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(next, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if !isList {
				return nil, fmt.Errorf("%w: config value append is not allowed for config key: %s", kerr.InvalidConfig, op.Name)
			}
			cur, ok := next[op.Name]
			if !ok && typ == kmsg.ConfigResourceTypeTopic {
				// Start from the value the topic has today: the broker default.
				cur, _ = topicDefault(op.Name)
			}
			items := config.SplitList(cur)
			for _, v := range config.SplitList(value) {
				has := slices.Contains(items, v)
				if op.Op == kmsg.IncrementalAlterConfigOpAppend && !has {
					items = append(items, v)
				}
				if op.Op == kmsg.IncrementalAlterConfigOpSubtract && has {
					items = slices.DeleteFunc(items, func(s string) bool { return s == v })
				}
			}
			next[op.Name] = strings.Join(items, ",")
		default:
			return nil, fmt.Errorf("%w: unknown alter config operation %d for %s", kerr.InvalidRequest, op.Op, op.Name)
		}
	}
	return next, nil
}
