package api

// DescribeConfigs (key 32), versions 0–4 (flexible from 4).
//
// Behaviour:
//   - TOPIC (2): every topic-level config with its effective value (override
//     from /config/topics/<t> over the broker default), source and, when
//     include_synonyms (v1+), the synonym chain; invalid name →
//     INVALID_TOPIC_EXCEPTION, unknown topic → UNKNOWN_TOPIC_OR_PARTITION;
//   - BROKER (4): name = this broker's id → every key with its current
//     value, read_only=false for the dynamically updatable keys, and source
//     and synonyms in Kafka's precedence (DYNAMIC_BROKER_CONFIG,
//     DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG,
//     with the log.retention.ms/minutes/hours-style synonyms); "" → only
//     the dynamic cluster defaults (/config/brokers/<default>); another id
//     or a non-integer name → INVALID_REQUEST with Kafka's message;
//     password values are null;
//   - BROKER_LOGGER (8): the broker's loggers and levels (brokerlogger.go);
//   - other resource types → INVALID_REQUEST;
//   - include_documentation (v3+) returns each key's doc; config_type (v3+)
//     from the config tables;
//   - configuration_keys null = all;
//   - authorization: DescribeConfigs on the Cluster for BROKER and
//     BROKER_LOGGER (else CLUSTER_AUTHORIZATION_FAILED), on the topic for
//     TOPIC (else TOPIC_AUTHORIZATION_FAILED), with Kafka's messages and no
//     configs.

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

func (a *Apis) handleDescribeConfigs(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	synonyms := req.Version >= 1 && req.IncludeSynonyms
	docs := req.Version >= 3 && req.IncludeDocumentation
	for _, res := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType = res.ResourceType
		rr.ResourceName = res.ResourceName
		err := a.configsAuthorization(ctx, r, kmsg.ACLOperationDescribeConfigs, res.ResourceType, res.ResourceName)
		var configs []kmsg.DescribeConfigsResponseResourceConfig
		if err == nil {
			configs, err = a.describeResource(ctx, res, synonyms, docs)
		}
		if err != nil {
			rr.ErrorCode, rr.ErrorMessage = a.codeMessage(err, "describe configs failed", "resource", res.ResourceName)
		} else {
			rr.Configs = configs
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// configsAuthorization checks op (DescribeConfigs or AlterConfigs) on a
// config resource as Kafka does: on the Cluster for a broker or broker
// logger, on the topic for a topic. Other types are left to the handler.
// The denial carries Kafka's message for DescribeConfigs, none for the
// alter APIs.
func (a *Apis) configsAuthorization(ctx context.Context, r *request, op kmsg.ACLOperation, typ kmsg.ConfigResourceType, name string) error {
	withMessage := op == kmsg.ACLOperationDescribeConfigs
	switch typ {
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		if !a.authorize(ctx, r, op, kmsg.ACLResourceTypeCluster, clusterResource) {
			msg := ""
			if withMessage {
				msg = clusterAuthorizationFailedMessage
			}
			return denied(kerr.ClusterAuthorizationFailed, msg)
		}
	case kmsg.ConfigResourceTypeTopic:
		if !a.authorize(ctx, r, op, kmsg.ACLResourceTypeTopic, name) {
			msg := ""
			if withMessage {
				msg = topicAuthorizationFailedMessage
			}
			return denied(kerr.TopicAuthorizationFailed, msg)
		}
	}
	return nil
}

func (a *Apis) describeResource(ctx context.Context, res kmsg.DescribeConfigsRequestResource, synonyms, docs bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	switch res.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		if err := validateTopicName(res.ResourceName); err != nil {
			return nil, err
		}
		if _, _, err := a.zk.GetTopicAssignment(res.ResourceName); err != nil {
			if errors.Is(err, zkclient.ErrTopicNotFound) {
				return nil, fmt.Errorf("%w: topic %s does not exist", kerr.UnknownTopicOrPartition, res.ResourceName)
			}
			return nil, err
		}
		overrides, err := a.zk.GetEntityConfigs(zkpaths.ConfigTypeTopic, res.ResourceName)
		if err != nil {
			return nil, err
		}
		return a.describeTopicConfigs(overrides, res.ConfigNames, synonyms, docs), nil
	case kmsg.ConfigResourceTypeBroker:
		if res.ResourceName == "" {
			return a.describeBrokerDefaults(res.ConfigNames, synonyms, docs), nil
		}
		id, err := strconv.ParseInt(res.ResourceName, 10, 32)
		if err != nil {
			return nil, denied(kerr.InvalidRequest, "Broker id must be an integer, but it is: "+res.ResourceName)
		}
		if int32(id) != a.brokerID {
			return nil, denied(kerr.InvalidRequest, fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %s",
				a.brokerID, res.ResourceName))
		}
		return a.describeBrokerConfigs(res.ConfigNames, synonyms, docs), nil
	case kmsg.ConfigResourceTypeBrokerLogger:
		return a.describeBrokerLogger(res.ResourceName, res.ConfigNames)
	default:
		return nil, fmt.Errorf("%w: unsupported resource type %v", kerr.InvalidRequest, res.ResourceType)
	}
}
