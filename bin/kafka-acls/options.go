package main

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
)

const helpText = "This tool helps to manage acls on kafka."

var specs = append([]admintool.Spec{
	{Name: "bootstrap-server", HasArg: true, ArgName: "String: server to connect to", Help: "A list of host/port pairs to use for establishing the connection to the Kafka cluster. This list should be in the form host1:port1,host2:port2,... This config is required for acl management using admin client API."},
	{Name: "command-config", HasArg: true, ArgName: "String: command-config", Help: "A property file containing configs to be passed to Admin Client."},
	{Name: "authorizer", HasArg: true, ArgName: "String: authorizer", Help: "Fully qualified class name of the authorizer, defaults to kafka.security.authorizer.AclAuthorizer."},
	{Name: "authorizer-properties", HasArg: true, ArgName: "String: authorizer-properties", Multi: true, Help: "REQUIRED: properties required to configure an instance of Authorizer. These are key=val pairs. For the default authorizer the example values are: zookeeper.connect=localhost:2181"},
	{Name: "topic", HasArg: true, ArgName: "String: topic", Multi: true, Help: "topic to which ACLs should be added or removed. A value of * indicates ACL should apply to all topics."},
	{Name: "cluster", Help: "Add/Remove cluster ACLs."},
	{Name: "group", HasArg: true, ArgName: "String: group", Multi: true, Help: "Consumer Group to which the ACLs should be added or removed. A value of * indicates the ACLs should apply to all groups."},
	{Name: "transactional-id", HasArg: true, ArgName: "String: transactional-id", Multi: true, Help: "The transactionalId to which ACLs should be added or removed. A value of * indicates the ACLs should apply to all transactionalIds."},
	{Name: "idempotent", Help: "Enable idempotence for the producer. This should be used in combination with the --producer option. Note that idempotence is enabled automatically if the producer is authorized to a particular transactional-id."},
	{Name: "delegation-token", HasArg: true, ArgName: "String: delegation-token", Multi: true, Help: "Delegation token to which ACLs should be added or removed. A value of * indicates ACL should apply to all tokens."},
	{Name: "resource-pattern-type", HasArg: true, ArgName: "ANY|MATCH|LITERAL|PREFIXED", Help: "The type of the resource pattern or pattern filter. When adding acls, this should be a specific pattern type, e.g. 'literal' or 'prefixed'. When listing or removing acls, a specific pattern type can be used to list or remove acls from specific resource patterns, or use the filter values of 'any' or 'match', where 'any' will match any pattern type, but will match the resource name exactly, where as 'match' will perform pattern matching to list or remove all acls that affect the supplied resource(s). WARNING: 'match', when used in combination with the '--remove' switch, should be used with care. (default: LITERAL)"},
	{Name: "add", Help: "Indicates you are trying to add ACLs."},
	{Name: "remove", Help: "Indicates you are trying to remove ACLs."},
	{Name: "list", Help: "List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to specify a resource."},
	{Name: "operation", HasArg: true, ArgName: "String", Multi: true, Help: "Operation that is being allowed or denied. Valid operation names are: \n\tDescribe\n\tDescribeConfigs\n\tAlter\n\tIdempotentWrite\n\tRead\n\tDelete\n\tCreate\n\tClusterAction\n\tAll\n\tWrite\n\tAlterConfigs\n (default: All)"},
	{Name: "allow-principal", HasArg: true, ArgName: "String: allow-principal", Multi: true, Help: "principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. For example, User:* is the wild card indicating all users."},
	{Name: "deny-principal", HasArg: true, ArgName: "String: deny-principal", Multi: true, Help: "principal is in principalType:name format. By default anyone not added through --allow-principal is denied access. You only need to use this option as negation to already allowed set. Note that principalType must be supported by the Authorizer being used. For example if you wanted to allow access to all users in the system but not test-user you can define an ACL that allows access to User:* and specify --deny-principal=User:test@EXAMPLE.COM. AND PLEASE REMEMBER DENY RULES TAKES PRECEDENCE OVER ALLOW RULES."},
	{Name: "principal", HasArg: true, ArgName: "String: principal", Multi: true, Help: "List ACLs for the specified principal. principal is in principalType:name format. Note that principalType must be supported by the Authorizer being used. Multiple --principal option can be passed."},
	{Name: "allow-host", HasArg: true, ArgName: "String: allow-host", Multi: true, Help: "Host from which principals listed in --allow-principal will have access. If you have specified --allow-principal then the default for this option will be set to * which allows access from all hosts."},
	{Name: "deny-host", HasArg: true, ArgName: "String: deny-host", Multi: true, Help: "Host from which principals listed in --deny-principal will be denied access. If you have specified --deny-principal then the default for this option will be set to * which denies access from all hosts."},
	{Name: "producer", Help: "Convenience option to add/remove ACLs for producer role. This will generate ACLs that allows WRITE,DESCRIBE and CREATE on topic."},
	{Name: "consumer", Help: "Convenience option to add/remove ACLs for consumer role. This will generate ACLs that allows READ,DESCRIBE on topic and READ on group."},
	{Name: "force", Help: "Assume Yes to all queries and do not prompt."},
	{Name: "zk-tls-config-file", HasArg: true, ArgName: "String: Authorizer ZooKeeper TLS configuration", Help: "Identifies the file where ZooKeeper client TLS connectivity properties for the authorizer are defined.  Any properties other than the following (with or without an \"authorizer.\" prefix) are ignored: zookeeper.clientCnxnSocket, zookeeper.ssl.cipher.suites, zookeeper.ssl.client.enable, zookeeper.ssl.crl.enable, zookeeper.ssl.enabled.protocols, zookeeper.ssl.endpoint.identification.algorithm, zookeeper.ssl.keystore.location, zookeeper.ssl.keystore.password, zookeeper.ssl.keystore.type, zookeeper.ssl.ocsp.enable, zookeeper.ssl.protocol, zookeeper.ssl.truststore.location, zookeeper.ssl.truststore.password, zookeeper.ssl.truststore.type. Note that if SASL is not configured and zookeeper.set.acl is supposed to be true due to mutual certificate authentication being used then it is necessary to explicitly specify --authorizer-properties zookeeper.set.acl=true"},
}, admintool.HelpSpecs...)

type action int

const (
	actionAdd action = iota
	actionRemove
	actionList
)

// aclOptions is a checked command line (AclCommandOptions after
// checkArgs).
type aclOptions struct {
	o           *admintool.Options
	action      action
	bootstrap   string
	commandConf string
	authorizer  string
	authzProps  []string
	patternType kmsg.ACLResourcePatternType
	force       bool
}

// parseOptions reads the command line as AclCommandOptions and runs its
// checkArgs, with Kafka's messages.
func parseOptions(args []string) (*aclOptions, string, error) {
	args = admintool.DefaultOptionalArg(args, "command-config", "")
	args = admintool.DefaultOptionalArg(args, "principal", "")
	o, special, err := admintool.ParseAdminCommand(specs, args)
	if o == nil {
		return nil, special, err
	}
	opts := &aclOptions{o: o, bootstrap: o.Value("bootstrap-server"), commandConf: o.Value("command-config"),
		authorizer: o.Value("authorizer"), authzProps: o.Values("authorizer-properties"), patternType: kmsg.ACLResourcePatternTypeLiteral,
		force: o.Has("force")}
	if o.Has("resource-pattern-type") {
		v := o.Value("resource-pattern-type")
		pt := kmsg.ACLResourcePatternTypeUnknown
		found := false
		for c := kmsg.ACLResourcePatternType(0); c <= kmsg.ACLResourcePatternTypePrefixed; c++ {
			if strings.EqualFold(v, c.String()) {
				pt, found = c, true
			}
		}
		switch {
		case !found:
			return nil, "", admintool.Usagef("Cannot parse argument '%s' of option resource-pattern-type", v)
		case pt == kmsg.ACLResourcePatternTypeUnknown:
			return nil, "", admintool.Usagef("Unknown resource-pattern-type: %s", v)
		}
		opts.patternType = pt
	}
	has := o.Has
	if has("bootstrap-server") && has("authorizer") {
		return nil, "", admintool.Usagef("Only one of --bootstrap-server or --authorizer must be specified")
	}
	if !has("bootstrap-server") && !has("authorizer-properties") {
		return nil, "", admintool.Usagef(`Missing required argument "[authorizer-properties]"`)
	}
	if has("command-config") && !has("bootstrap-server") {
		return nil, "", admintool.Usagef("The --command-config option can only be used with --bootstrap-server option")
	}
	if has("authorizer-properties") && has("bootstrap-server") {
		return nil, "", admintool.Usagef("The --authorizer-properties option can only be used with --authorizer option")
	}
	switch a, ok := o.OneOf([]string{"add", "remove", "list"}); {
	case !ok:
		return nil, "", admintool.Usagef("Command must include exactly one action: --list, --add, --remove. ")
	case a == "add":
		opts.action = actionAdd
	case a == "remove":
		opts.action = actionRemove
	default:
		opts.action = actionList
	}
	invalid := func(used string, others ...string) error {
		if !has(used) {
			return nil
		}
		for _, x := range others {
			if has(x) {
				return admintool.Usagef(`Option "[%s]" can't be used with option "[%s]"`, used, x)
			}
		}
		return nil
	}
	if err := invalid("list", "producer", "consumer", "allow-host", "allow-principal", "deny-host", "deny-principal"); err != nil {
		return nil, "", err
	}
	for _, role := range []string{"producer", "consumer"} {
		if err := invalid(role, "operation", "deny-principal", "deny-host"); err != nil {
			return nil, "", err
		}
	}
	switch {
	case has("principal") && !has("list"):
		return nil, "", admintool.Usagef("The --principal option is only available if --list is set")
	case has("producer") && !has("topic"):
		return nil, "", admintool.Usagef("With --producer you must specify a --topic")
	case has("idempotent") && !has("producer"):
		return nil, "", admintool.Usagef("The --idempotent option is only available if --producer is set")
	case has("consumer") && (!has("topic") || !has("group") || (!has("producer") && (has("cluster") || has("transactional-id")))):
		return nil, "", admintool.Usagef("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.")
	}
	return opts, "", nil
}

var clusterFilter = filterOf(kmsg.ACLResourceTypeCluster, security.ClusterResourceName, kmsg.ACLResourcePatternTypeLiteral)

func filterOf(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType) security.PatternFilter {
	return security.PatternFilter{ResourceType: rt, Name: &name, PatternType: pt}
}

// resourceFilters is getResourceFilter: one filter per named resource, in
// Kafka's order (topics, the cluster, groups, transactional ids, tokens);
// the cluster only for literal patterns.
func (a *aclOptions) resourceFilters(dieIfNone bool) ([]security.PatternFilter, error) {
	var out []security.PatternFilter
	add := func(f security.PatternFilter) {
		for _, g := range out {
			if g.ResourceType == f.ResourceType && *g.Name == *f.Name && g.PatternType == f.PatternType {
				return
			}
		}
		out = append(out, f)
	}
	for _, t := range a.o.Values("topic") {
		add(filterOf(kmsg.ACLResourceTypeTopic, strings.TrimSpace(t), a.patternType))
	}
	if a.patternType == kmsg.ACLResourcePatternTypeLiteral && (a.o.Has("cluster") || a.o.Has("idempotent")) {
		add(clusterFilter)
	}
	for _, g := range a.o.Values("group") {
		add(filterOf(kmsg.ACLResourceTypeGroup, strings.TrimSpace(g), a.patternType))
	}
	for _, x := range a.o.Values("transactional-id") {
		add(filterOf(kmsg.ACLResourceTypeTransactionalId, x, a.patternType))
	}
	for _, d := range a.o.Values("delegation-token") {
		add(filterOf(kmsg.ACLResourceTypeDelegationToken, strings.TrimSpace(d), a.patternType))
	}
	if len(out) == 0 && dieIfNone {
		return nil, admintool.Usagef("You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --delegation-token <Delegation Token ID>")
	}
	return out, nil
}

// principals is getPrincipals: each value trimmed and parsed as
// type:name.
func (a *aclOptions) principals(opt string) ([]string, error) {
	var out []string
	for _, p := range a.o.Values(opt) {
		p = strings.TrimSpace(p)
		if _, _, ok := security.ParsePrincipal(p); !ok || p == "" {
			return nil, &commandError{msg: "expected a string in format principalType:principalName but got " + p}
		}
		out = appendNew(out, p)
	}
	return out, nil
}

func appendNew(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// hosts is getHosts: the given hosts, or * when principals were given.
func (a *aclOptions) hosts(hostOpt, principalOpt string) []string {
	if a.o.Has(hostOpt) {
		var out []string
		for _, h := range a.o.Values(hostOpt) {
			out = appendNew(out, strings.TrimSpace(h))
		}
		return out
	}
	if a.o.Has(principalOpt) {
		return []string{security.WildcardHost}
	}
	return nil
}

// entries is getAcl: every allowed principal × operation × host, then the
// denied ones.
func (a *aclOptions) entries(ops []kmsg.ACLOperation) ([]security.AccessControlEntry, error) {
	allowP, err := a.principals("allow-principal")
	if err != nil {
		return nil, err
	}
	denyP, err := a.principals("deny-principal")
	if err != nil {
		return nil, err
	}
	var out []security.AccessControlEntry
	add := func(ps, hosts []string, perm kmsg.ACLPermissionType) {
		for _, p := range ps {
			for _, op := range ops {
				for _, h := range hosts {
					e := security.AccessControlEntry{Principal: p, Host: h, Operation: op, Permission: perm}
					if !containsEntry(out, e) {
						out = append(out, e)
					}
				}
			}
		}
	}
	add(allowP, a.hosts("allow-host", "allow-principal"), kmsg.ACLPermissionTypeAllow)
	add(denyP, a.hosts("deny-host", "deny-principal"), kmsg.ACLPermissionTypeDeny)
	return out, nil
}

func containsEntry(l []security.AccessControlEntry, e security.AccessControlEntry) bool {
	for _, x := range l {
		if x == e {
			return true
		}
	}
	return false
}

// filterACLs pairs a resource filter with the entries of the command.
type filterACLs struct {
	filter  security.PatternFilter
	entries []security.AccessControlEntry
}

// supportedOperations is AclEntry.supportedOperations plus All, in
// Kafka's listing order.
var supportedOperations = map[kmsg.ACLResourceType][]kmsg.ACLOperation{
	kmsg.ACLResourceTypeTopic: {kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeGroup: {kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete},
	kmsg.ACLResourceTypeCluster: {kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe},
	kmsg.ACLResourceTypeTransactionalId: {kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite},
	kmsg.ACLResourceTypeDelegationToken: {kmsg.ACLOperationDescribe},
}

// filterToACLs is getResourceFilterToAcls: the command-line ACLs on every
// resource, or the --producer / --consumer roles' ACLs, then the
// operation check (validateOperation).
func (a *aclOptions) filterToACLs() ([]filterACLs, error) {
	var out []filterACLs
	put := func(f security.PatternFilter, es []security.AccessControlEntry, merge bool) {
		for i := range out {
			g := out[i].filter
			if g.ResourceType == f.ResourceType && *g.Name == *f.Name && g.PatternType == f.PatternType {
				if merge {
					for _, e := range es {
						if !containsEntry(out[i].entries, e) {
							out[i].entries = append(out[i].entries, e)
						}
					}
				} else {
					out[i].entries = es
				}
				return
			}
		}
		out = append(out, filterACLs{filter: f, entries: es})
	}
	filters, err := a.resourceFilters(true)
	if err != nil {
		return nil, err
	}
	producer, consumer := a.o.Has("producer"), a.o.Has("consumer")
	if !producer && !consumer {
		var ops []kmsg.ACLOperation
		names := a.o.Values("operation")
		if len(names) == 0 {
			names = []string{"All"}
		}
		for _, n := range names {
			op := security.ParseOperation(strings.TrimSpace(n))
			if !containsOp(ops, op) {
				ops = append(ops, op)
			}
		}
		es, err := a.entries(ops)
		if err != nil {
			return nil, err
		}
		for _, f := range filters {
			put(f, es, false)
		}
	}
	if producer {
		topicACLs, err := a.entries([]kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe, kmsg.ACLOperationCreate})
		if err != nil {
			return nil, err
		}
		txnACLs, err := a.entries([]kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe})
		if err != nil {
			return nil, err
		}
		for _, f := range filters {
			if f.ResourceType == kmsg.ACLResourceTypeTopic {
				put(f, topicACLs, false)
			}
		}
		for _, f := range filters {
			if f.ResourceType == kmsg.ACLResourceTypeTransactionalId {
				put(f, txnACLs, false)
			}
		}
		if a.o.Has("idempotent") {
			idem, err := a.entries([]kmsg.ACLOperation{kmsg.ACLOperationIdempotentWrite})
			if err != nil {
				return nil, err
			}
			put(clusterFilter, idem, false)
		}
	}
	if consumer {
		topicACLs, err := a.entries([]kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe})
		if err != nil {
			return nil, err
		}
		groupACLs, err := a.entries([]kmsg.ACLOperation{kmsg.ACLOperationRead})
		if err != nil {
			return nil, err
		}
		for _, f := range filters {
			switch f.ResourceType {
			case kmsg.ACLResourceTypeTopic:
				put(f, topicACLs, true)
			case kmsg.ACLResourceTypeGroup:
				put(f, groupACLs, true)
			}
		}
	}
	for _, fa := range out {
		valid := append(append([]kmsg.ACLOperation(nil), supportedOperations[fa.filter.ResourceType]...), kmsg.ACLOperationAll)
		for _, e := range fa.entries {
			if !containsOp(valid, e.Operation) {
				names := make([]string, len(valid))
				for i, op := range valid {
					names[i] = op.String()
				}
				return nil, admintool.Usagef("ResourceType %s only supports operations %s", fa.filter.ResourceType, strings.Join(names, ","))
			}
		}
	}
	return out, nil
}

func containsOp(l []kmsg.ACLOperation, op kmsg.ACLOperation) bool {
	for _, x := range l {
		if x == op {
			return true
		}
	}
	return false
}

// resourceToACLs is getResourceToAcls (--add): specific patterns only and
// at least one principal.
func (a *aclOptions) resourceToACLs() ([]filterACLs, error) {
	if a.patternType != kmsg.ACLResourcePatternTypeLiteral && a.patternType != kmsg.ACLResourcePatternTypePrefixed {
		return nil, admintool.Usagef("A '--resource-pattern-type' value of '%s' is not valid when adding acls.", a.patternType)
	}
	out, err := a.filterToACLs()
	if err != nil {
		return nil, err
	}
	for _, fa := range out {
		if len(fa.entries) == 0 {
			return nil, admintool.Usagef("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
		}
	}
	return out, nil
}

// commandError fails the command as AclCommand's main does: "Error while
// executing ACL command: <message>" on stdout, status 1.
type commandError struct{ msg string }

func (e *commandError) Error() string { return e.msg }
