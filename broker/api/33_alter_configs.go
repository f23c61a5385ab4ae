package api

// AlterConfigs (key 33), versions 0–2 (flexible from 2).
//
// Behaviour: replaces the complete set of dynamic configs
// of each resource (unlisted keys are removed).
//   - TOPIC: the topic must exist (UNKNOWN_TOPIC_OR_PARTITION); the new set
//     is validated (INVALID_CONFIG with Kafka's messages); unless
//     validate_only, /config/topics/<t> is written and a /config/changes
//     notification created, so every broker applies it live;
//   - BROKER: dynamic broker configs are not supported yet: a request for
//     this broker's id answers INVALID_CONFIG naming the keys that cannot be
//     updated dynamically; another id → INVALID_REQUEST;
//   - a resource named twice → INVALID_REQUEST for each occurrence; entries
//     with a null value are ignored, as Kafka does.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func (a *Apis) handleAlterConfigs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	keys := make([]resourceKey, len(req.Resources))
	for i, res := range req.Resources {
		keys[i] = resourceKey{res.ResourceType, res.ResourceName}
	}
	dup := duplicates(keys)
	for _, res := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		var err error
		if dup[resourceKey{res.ResourceType, res.ResourceName}] {
			err = fmt.Errorf("%w: error due to duplicate resource %s", kerr.InvalidRequest, res.ResourceName)
		} else {
			cfgs := map[string]string{}
			for _, c := range res.Configs {
				if c.Value != nil {
					cfgs[c.Name] = *c.Value
				}
			}
			err = a.alterResource(ctx, res.ResourceType, res.ResourceName, req.ValidateOnly, func(map[string]string) (map[string]string, error) {
				return cfgs, nil
			})
		}
		rr.ErrorCode, rr.ErrorMessage = a.codeMessage(err, "alter configs failed", "resource", res.ResourceName)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// alterResource computes the new override set of a resource with update
// (given the current one), validates it and, unless validateOnly, stores it.
func (a *Apis) alterResource(ctx context.Context, typ kmsg.ConfigResourceType, name string, validateOnly bool,
	update func(current map[string]string) (map[string]string, error)) error {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if err := validateTopicName(name); err != nil {
			return err
		}
		if _, _, err := a.zk.GetTopicAssignment(name); err != nil {
			if errors.Is(err, zkclient.ErrTopicNotFound) {
				return fmt.Errorf("%w: topic %s does not exist", kerr.UnknownTopicOrPartition, name)
			}
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
		if name != "" {
			if id, err := strconv.ParseInt(name, 10, 32); err != nil || int32(id) != a.brokerID {
				return fmt.Errorf("%w: unexpected broker id, expected %d or empty string, but received %s",
					kerr.InvalidRequest, a.brokerID, name)
			}
		}
		next, err := update(map[string]string{})
		if err != nil {
			return err
		}
		if len(next) == 0 {
			return nil
		}
		keys := make([]string, 0, len(next))
		for k := range next {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Errorf("%w: cannot update these configs dynamically: %s", kerr.InvalidConfig, strings.Join(keys, ", "))
	default:
		return fmt.Errorf("%w: unsupported resource type %v", kerr.InvalidRequest, typ)
	}
}
