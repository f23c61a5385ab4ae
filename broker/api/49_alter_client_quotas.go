package api

// AlterClientQuotas (key 49), versions 0–1 (flexible from 1).
//
// Behaviour, as Kafka 2.8's ZkAdminManager.alterClientQuotas, per entry:
// the entity (user, client-id, both, or ip; a null name is <default>)
// names the node /config/users/<u>, /config/users/<u>/clients/<c>,
// /config/clients/<c> or /config/ips/<ip> (names sanitized as Kafka
// does); each op sets or (remove) deletes one key of that node, keeping
// its other keys (a user's SCRAM credentials). Keys: producer_byte_rate and
// consumer_byte_rate (whole numbers, "must be a LONG value"),
// request_percentage and controller_mutation_rate (doubles, stored in
// Java's Double.toString form), and for ips connection_creation_rate
// ("must be a INT value", at least 0). The node is written with a change
// notification (every broker applies it, quotaconfig.go), or deleted when
// it is left empty without children; validate_only stops before the
// write. Errors are per entry with Kafka's messages: an empty entity, an
// unknown entity type, an empty name, ip mixed with user or client-id,
// an ip that is neither an address nor a resolvable host, an unknown key
// → INVALID_REQUEST.
//
// Authorization: AlterConfigs on the Cluster, else every entry answers
// CLUSTER_AUTHORIZATION_FAILED.

import (
	"context"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/quota"
	"github.com/klassik/klassik/zkpaths"
)

func (a *Apis) handleAlterClientQuotas(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	allowed := a.authorize(ctx, r, kmsg.ACLOperationAlterConfigs, kmsg.ACLResourceTypeCluster, clusterResource)
	for _, e := range req.Entries {
		re := kmsg.NewAlterClientQuotasResponseEntry()
		for _, ent := range e.Entity {
			x := kmsg.NewAlterClientQuotasResponseEntryEntity()
			x.Type, x.Name = ent.Type, ent.Name
			re.Entity = append(re.Entity, x)
		}
		if !allowed {
			msg := "Cluster authorization failed."
			re.ErrorCode, re.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, &msg
		} else if err := a.alterEntityQuotas(ctx, e, req.ValidateOnly); err != nil {
			re.ErrorCode, re.ErrorMessage = a.codeMessage(err, "alter client quotas failed")
			if re.ErrorCode == kerr.UnknownServerError.Code {
				re.ErrorMessage = nil
			}
		}
		resp.Entries = append(resp.Entries, re)
	}
	return resp, nil
}

// quotaKeyType is the ConfigDef type of a quota key.
type quotaKeyType int

const (
	quotaLong quotaKeyType = iota
	quotaInt
	quotaDouble
	quotaString // SCRAM credentials: not settable through this API
)

var (
	clientQuotaKeys = map[string]quotaKeyType{quota.ProducerByteRate: quotaLong, quota.ConsumerByteRate: quotaLong,
		quota.RequestPercentage: quotaDouble, quota.ControllerMutationRate: quotaDouble}
	userQuotaKeys = map[string]quotaKeyType{quota.ProducerByteRate: quotaLong, quota.ConsumerByteRate: quotaLong,
		quota.RequestPercentage: quotaDouble, quota.ControllerMutationRate: quotaDouble,
		"SCRAM-SHA-256": quotaString, "SCRAM-SHA-512": quotaString}
	ipQuotaKeys = map[string]quotaKeyType{quota.IPConnectionRate: quotaInt}
)

// alterEntityQuotas applies one entry.
func (a *Apis) alterEntityQuotas(ctx context.Context, e kmsg.AlterClientQuotasRequestEntry, validateOnly bool) error {
	if len(e.Entity) == 0 {
		return denied(kerr.InvalidRequest, "Invalid empty client quota entity")
	}
	// Later entries of one type replace earlier ones (Kafka reads them
	// into a map).
	names := map[string]*string{}
	var order []string
	for _, ent := range e.Entity {
		if _, seen := names[ent.Type]; !seen {
			order = append(order, ent.Type)
		}
		names[ent.Type] = ent.Name
	}
	sanitized := func(n *string) string {
		if n == nil {
			return zkpaths.ConfigEntityDefault
		}
		return zkpaths.Sanitize(*n)
	}
	var user, client, ip *string // sanitized
	for _, typ := range order {
		n := names[typ]
		s := sanitized(n)
		switch typ {
		case quotaEntityUser:
			user = &s
		case quotaEntityClientID:
			client = &s
		case quotaEntityIP:
			ip = &s
		default:
			return apiErrorf(kerr.InvalidRequest, "Unhandled client quota entity type: %s", typ)
		}
		if n != nil && *n == "" {
			return apiErrorf(kerr.InvalidRequest, "Empty %s not supported", typ)
		}
	}
	var entityType, path string
	var keys map[string]quotaKeyType
	switch {
	case ip != nil && (user != nil || client != nil):
		return denied(kerr.InvalidRequest, "Invalid quota entity combination, IP entity should not be used with user/client ID entity.")
	case ip != nil:
		if !validIPEntity(ctx, names[quotaEntityIP]) {
			return apiErrorf(kerr.InvalidRequest, "%s is not a valid IP or resolvable host.", *ip)
		}
		entityType, path, keys = zkpaths.ConfigTypeIP, *ip, ipQuotaKeys
	case user != nil && client != nil:
		entityType, path, keys = zkpaths.ConfigTypeUser, *user+"/"+zkpaths.ConfigTypeClient+"/"+*client, userQuotaKeys
	case user != nil:
		entityType, path, keys = zkpaths.ConfigTypeUser, *user, userQuotaKeys
	case client != nil:
		entityType, path, keys = zkpaths.ConfigTypeClient, *client, clientQuotaKeys
	default:
		return denied(kerr.InvalidRequest, "Invalid client quota entity")
	}
	props, err := a.quotaStore.GetEntityConfigs(entityType, path)
	if err != nil {
		return err
	}
	for _, op := range e.Ops {
		if op.Remove {
			delete(props, op.Key)
			continue
		}
		typ, ok := keys[op.Key]
		if !ok {
			return apiErrorf(kerr.InvalidRequest, "Invalid configuration key %s", op.Key)
		}
		switch typ {
		case quotaDouble:
			props[op.Key] = jvm.DoubleToString(op.Value)
		case quotaLong, quotaInt:
			const epsilon = 1e-6
			var n int64
			name := "LONG"
			if typ == quotaLong {
				n = saturatingInt(op.Value+epsilon, math.MinInt64, math.MaxInt64)
			} else {
				name = "INT"
				n = saturatingInt(op.Value+epsilon, math.MinInt32, math.MaxInt32)
			}
			if math.IsNaN(op.Value) || math.Abs(float64(n)-op.Value) > epsilon {
				return apiErrorf(kerr.InvalidRequest, "Configuration %s must be a %s value", op.Key, name)
			}
			props[op.Key] = strconv.FormatInt(n, 10)
		default:
			return fmt.Errorf("api: unexpected config type STRING of %s", op.Key)
		}
	}
	if validateOnly {
		return nil
	}
	if v, ok := props[quota.IPConnectionRate]; ok && entityType == zkpaths.ConfigTypeIP {
		if n, err := strconv.ParseInt(v, 10, 32); err != nil || n < 0 {
			// Kafka's ConfigException: not an ApiException.
			return fmt.Errorf("api: invalid value %s for configuration %s: Value must be at least 0", v, quota.IPConnectionRate)
		}
	}
	return a.quotaStore.ChangeEntityConfigs(entityType, path, props)
}

// validIPEntity is Kafka's DynamicConfig.Ip.isValidIpEntity: <default>,
// an address, or a host name that resolves.
func validIPEntity(ctx context.Context, name *string) bool {
	if name == nil {
		return true
	}
	if net.ParseIP(*name) != nil {
		return true
	}
	if *name == "" || strings.ContainsAny(*name, "/ ") {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, *name)
	return err == nil && len(addrs) > 0
}

// saturatingInt converts like Scala's Double.toLong / toInt: toward zero,
// clamped to the type's range, NaN to 0.
func saturatingInt(f float64, lo, hi int64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= float64(hi):
		return hi
	case f <= float64(lo):
		return lo
	}
	return int64(f)
}
