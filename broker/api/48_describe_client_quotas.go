package api

// DescribeClientQuotas (key 48), versions 0–1 (flexible from 1).
//
// Behaviour, as Kafka 2.8's ZkAdminManager.describeClientQuotas: the
// filter's components (entity type user, client-id or ip; match type
// exact with a name, default for the <default> entity, any for every
// named or default entity of the type) select the quota nodes of
// /config/users, /config/users/<u>/clients, /config/clients and
// /config/ips; strict excludes entities with a type the filter does not
// name. Each entity with at least one quota key is answered with its
// values as doubles (connection_creation_rate for ips; producer_byte_rate,
// consumer_byte_rate, request_percentage and controller_mutation_rate for
// users and clients). A <default> entity's name is null. A second
// component of one type, an empty type or ip combined with user or
// client-id is INVALID_REQUEST, another type UNSUPPORTED_VERSION, each with
// Kafka's message; entries are then null. Entries are sorted by entity.
//
// Authorization: DescribeConfigs on the Cluster, else
// CLUSTER_AUTHORIZATION_FAILED (no message).

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/quota"
	"github.com/klassik/klassik/zkpaths"
)

// ClientQuotaStore is where the client quota APIs read and write the
// quota nodes (*zkclient.Client).
type ClientQuotaStore interface {
	Children(p string) ([]string, error)
	GetEntityConfigs(entityType, name string) (map[string]string, error)
	ChangeEntityConfigs(entityType, name string, configs map[string]string) error
}

// The entity types of the quota APIs (ClientQuotaEntity).
const (
	quotaEntityUser     = "user"
	quotaEntityClientID = "client-id"
	quotaEntityIP       = "ip"
)

// quotaName is one half of a described entity: absent, <default>, or a
// (desanitized) name.
type quotaName struct {
	set, def bool
	name     string
}

func (n quotaName) wire() *string {
	if n.def {
		return nil
	}
	s := n.name
	return &s
}

// filterComponent is one decoded filter component; nil pointer = the type
// is not in the filter.
type filterComponent struct {
	any   bool // match any entity of the type
	match quotaName
}

// matches is Kafka's matches(nameComponent, name).
func (c *filterComponent) matches(n quotaName, strict bool) bool {
	if c == nil {
		return !n.set || !strict
	}
	if c.any {
		return n.set
	}
	return n.set && n.def == c.match.def && n.name == c.match.name
}

func (c *filterComponent) exact() bool { return c != nil && !c.any }

// sanitized is the znode name of an exact component's entity.
func (c *filterComponent) sanitized() string {
	if c.match.def {
		return zkpaths.ConfigEntityDefault
	}
	return zkpaths.Sanitize(c.match.name)
}

type describedQuota struct {
	user, client, ip quotaName
	values           map[string]float64
}

func (a *Apis) handleDescribeClientQuotas(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !a.authorize(ctx, r, kmsg.ACLOperationDescribeConfigs, kmsg.ACLResourceTypeCluster, clusterResource) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	found, err := a.describeClientQuotas(req)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = a.codeMessage(err, "describe client quotas failed")
		if resp.ErrorCode == kerr.UnknownServerError.Code {
			resp.ErrorMessage = nil
		}
		return resp, nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].key() < found[j].key() })
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, q := range found {
		e := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range []struct {
			typ string
			n   quotaName
		}{{quotaEntityUser, q.user}, {quotaEntityClientID, q.client}, {quotaEntityIP, q.ip}} {
			if p.n.set {
				ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
				ent.Type, ent.Name = p.typ, p.n.wire()
				e.Entity = append(e.Entity, ent)
			}
		}
		keys := make([]string, 0, len(q.values))
		for k := range q.values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, q.values[k]
			e.Values = append(e.Values, v)
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp, nil
}

func (q describedQuota) key() string {
	f := func(n quotaName) string {
		switch {
		case !n.set:
			return "0"
		case n.def:
			return "1"
		}
		return "2" + n.name
	}
	return f(q.user) + "\x00" + f(q.client) + "\x00" + f(q.ip)
}

// describeClientQuotas decodes the filter and reads the matching nodes.
func (a *Apis) describeClientQuotas(req *kmsg.DescribeClientQuotasRequest) ([]describedQuota, error) {
	var user, client, ip *filterComponent
	for _, c := range req.Components {
		fc := &filterComponent{}
		switch c.MatchType {
		case 0:
			if c.Match == nil {
				return nil, errors.New("api: exact quota filter component without a name")
			}
			fc.match = quotaName{set: true, name: *c.Match}
		case 1:
			fc.match = quotaName{set: true, def: true}
		case 2:
			fc.any = true
		default:
			return nil, fmt.Errorf("api: unexpected match type: %d", c.MatchType)
		}
		var slot **filterComponent
		switch c.EntityType {
		case quotaEntityUser:
			slot = &user
		case quotaEntityClientID:
			slot = &client
		case quotaEntityIP:
			slot = &ip
		case "":
			return nil, denied(kerr.InvalidRequest, "Unexpected empty filter component entity type")
		default:
			return nil, apiErrorf(kerr.UnsupportedVersion, "Custom entity type '%s' not supported", c.EntityType)
		}
		if *slot != nil {
			what := map[string]string{quotaEntityUser: "user", quotaEntityClientID: "client", quotaEntityIP: "ip"}[c.EntityType]
			return nil, apiErrorf(kerr.InvalidRequest, "Duplicate %s filter component entity type", what)
		}
		*slot = fc
	}
	if (user != nil || client != nil) && ip != nil {
		return nil, denied(kerr.InvalidRequest, "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.")
	}
	var out []describedQuota
	if ip == nil {
		q, err := a.describeUserClientQuotas(user, client, req.Strict)
		if err != nil {
			return nil, err
		}
		out = append(out, q...)
	}
	if user == nil && client == nil {
		q, err := a.describeIPQuotas(ip, req.Strict)
		if err != nil {
			return nil, err
		}
		out = append(out, q...)
	}
	return out, nil
}

// quotaNode is a node read for a description.
type quotaNode struct {
	user, client, ip quotaName
	config           map[string]string
}

// entityName reads a znode name back into a described name.
func entityName(sanitized string) (quotaName, error) {
	if sanitized == zkpaths.ConfigEntityDefault {
		return quotaName{set: true, def: true}, nil
	}
	n, err := zkpaths.Desanitize(sanitized)
	if err != nil {
		return quotaName{}, err
	}
	return quotaName{set: true, name: n}, nil
}

func (a *Apis) quotaChildren(p string) ([]string, error) {
	kids, err := a.quotaStore.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// allEntityConfigs reads every node below /config/<entityType>.
func (a *Apis) allEntityConfigs(entityType string, name func(quotaName) quotaNode) ([]quotaNode, error) {
	kids, err := a.quotaChildren(zkpaths.ConfigTypePath(entityType))
	if err != nil {
		return nil, err
	}
	var out []quotaNode
	for _, k := range kids {
		n, err := entityName(k)
		if err != nil {
			return nil, err
		}
		cfg, err := a.quotaStore.GetEntityConfigs(entityType, k)
		if err != nil {
			return nil, err
		}
		node := name(n)
		node.config = cfg
		out = append(out, node)
	}
	return out, nil
}

// describeUserClientQuotas is Kafka's handleDescribeClientQuotas.
func (a *Apis) describeUserClientQuotas(user, client *filterComponent, strict bool) ([]describedQuota, error) {
	excludeUser, excludeClient := strict && user == nil, strict && client == nil
	var nodes []quotaNode
	get := func(entityType, name string, node quotaNode) error {
		cfg, err := a.quotaStore.GetEntityConfigs(entityType, name)
		node.config = cfg
		nodes = append(nodes, node)
		return err
	}
	// <user>
	switch {
	case user.exact() && excludeClient:
		if err := get(zkpaths.ConfigTypeUser, user.sanitized(), quotaNode{user: user.match}); err != nil {
			return nil, err
		}
	case !excludeUser && !client.exact():
		all, err := a.allEntityConfigs(zkpaths.ConfigTypeUser, func(n quotaName) quotaNode { return quotaNode{user: n} })
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, all...)
	}
	// <client-id>
	switch {
	case excludeUser && client.exact():
		if err := get(zkpaths.ConfigTypeClient, client.sanitized(), quotaNode{client: client.match}); err != nil {
			return nil, err
		}
	case !user.exact() && !excludeClient:
		all, err := a.allEntityConfigs(zkpaths.ConfigTypeClient, func(n quotaName) quotaNode { return quotaNode{client: n} })
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, all...)
	}
	// <user, client-id>
	switch {
	case user.exact() && client.exact():
		p := user.sanitized() + "/" + zkpaths.ConfigTypeClient + "/" + client.sanitized()
		if err := get(zkpaths.ConfigTypeUser, p, quotaNode{user: user.match, client: client.match}); err != nil {
			return nil, err
		}
	case !excludeUser && !excludeClient:
		users, err := a.quotaChildren(zkpaths.ConfigTypePath(zkpaths.ConfigTypeUser))
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			un, err := entityName(u)
			if err != nil {
				return nil, err
			}
			clients, err := a.quotaChildren(zkpaths.ConfigPath(zkpaths.ConfigTypeUser, u+"/"+zkpaths.ConfigTypeClient))
			if err != nil {
				return nil, err
			}
			for _, c := range clients {
				cn, err := entityName(c)
				if err != nil {
					return nil, err
				}
				if err := get(zkpaths.ConfigTypeUser, u+"/"+zkpaths.ConfigTypeClient+"/"+c, quotaNode{user: un, client: cn}); err != nil {
					return nil, err
				}
			}
		}
	}
	var out []describedQuota
	for _, n := range nodes {
		values, err := quotaValues(n.config, quota.ProducerByteRate, quota.ConsumerByteRate, quota.RequestPercentage, quota.ControllerMutationRate)
		if err != nil {
			return nil, err
		}
		if len(values) > 0 && user.matches(n.user, strict) && client.matches(n.client, strict) {
			out = append(out, describedQuota{user: n.user, client: n.client, values: values})
		}
	}
	return out, nil
}

// describeIPQuotas is Kafka's handleDescribeIpQuotas.
func (a *Apis) describeIPQuotas(ip *filterComponent, strict bool) ([]describedQuota, error) {
	var nodes []quotaNode
	switch {
	case ip.exact():
		cfg, err := a.quotaStore.GetEntityConfigs(zkpaths.ConfigTypeIP, ip.sanitized())
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, quotaNode{ip: ip.match, config: cfg})
	case (ip != nil && ip.any) || (ip == nil && !strict):
		all, err := a.allEntityConfigs(zkpaths.ConfigTypeIP, func(n quotaName) quotaNode { return quotaNode{ip: n} })
		if err != nil {
			return nil, err
		}
		nodes = all
	}
	var out []describedQuota
	for _, n := range nodes {
		values, err := quotaValues(n.config, quota.IPConnectionRate)
		if err != nil {
			return nil, err
		}
		if len(values) > 0 {
			out = append(out, describedQuota{ip: n.ip, values: values})
		}
	}
	return out, nil
}

// quotaValues picks the quota keys of a node as doubles.
func quotaValues(cfg map[string]string, keys ...string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, k := range keys {
		s, ok := cfg[k]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("api: unexpected client quota configuration value: %s -> %s", k, s)
		}
		out[k] = v
	}
	return out, nil
}

// apiErrorf is an error answered with code and exactly the formatted
// message (Kafka's ApiException text).
func apiErrorf(code *kerr.Error, format string, args ...any) error {
	return denied(code, fmt.Sprintf(format, args...))
}
