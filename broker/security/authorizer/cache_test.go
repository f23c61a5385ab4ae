package authorizer

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
)

const (
	topic   = kmsg.ACLResourceTypeTopic
	group   = kmsg.ACLResourceTypeGroup
	cluster = kmsg.ACLResourceTypeCluster
	txnID   = kmsg.ACLResourceTypeTransactionalId

	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed

	allow = kmsg.ACLPermissionTypeAllow
	deny  = kmsg.ACLPermissionTypeDeny

	opAll      = kmsg.ACLOperationAll
	opRead     = kmsg.ACLOperationRead
	opWrite    = kmsg.ACLOperationWrite
	opCreate   = kmsg.ACLOperationCreate
	opDelete   = kmsg.ACLOperationDelete
	opAlter    = kmsg.ACLOperationAlter
	opDescribe = kmsg.ACLOperationDescribe
	opDescCfg  = kmsg.ACLOperationDescribeConfigs
	opAltCfg   = kmsg.ACLOperationAlterConfigs
	opIdem     = kmsg.ACLOperationIdempotentWrite
)

// acl is one binding of a test's ACL set.
type acl struct {
	rt        kmsg.ACLResourceType
	name      string
	pt        kmsg.ACLResourcePatternType
	principal string
	host      string
	op        kmsg.ACLOperation
	perm      kmsg.ACLPermissionType
}

func cacheOf(acls ...acl) *aclCache {
	c := newACLCache()
	byPattern := map[security.ResourcePattern][]security.AccessControlEntry{}
	for _, a := range acls {
		p := security.ResourcePattern{ResourceType: a.rt, Name: a.name, PatternType: a.pt}
		byPattern[p] = append(byPattern[p], security.AccessControlEntry{Principal: a.principal, Host: a.host, Operation: a.op, Permission: a.perm})
	}
	for p, es := range byPattern {
		c.set(p, versionedACLs{entries: normalize(es), version: 0})
	}
	return c
}

// The decisions of Kafka's AclAuthorizer (AclAuthorizerTest's cases, the
// operation table of AclOperation's javadoc) on one literal resource.
func TestAuthorize(t *testing.T) {
	alice, bob := "User:alice", "User:bob"
	const h1, h2 = "192.168.0.1", "10.0.0.9"
	cases := []struct {
		name      string
		acls      []acl
		rules     rules
		principal string
		host      string
		op        kmsg.ACLOperation
		rt        kmsg.ACLResourceType
		res       string
		want      bool
	}{
		{name: "no ACL denies by default", principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "no ACL with allow.everyone.if.no.acl.found", rules: rules{allowIfNoACL: true}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: true},
		{name: "an ACL of someone else: ACLs found, so allow.everyone does not apply",
			acls: []acl{{topic, "t", literal, bob, "*", opRead, allow}}, rules: rules{allowIfNoACL: true},
			principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "super user without ACLs", rules: rules{superUsers: map[string]bool{alice: true}}, principal: alice, host: h1, op: opAlter, rt: cluster, res: "kafka-cluster", want: true},
		{name: "super user despite Deny", acls: []acl{{topic, "t", literal, alice, "*", opAll, deny}},
			rules: rules{superUsers: map[string]bool{alice: true}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: true},
		{name: "literal Allow", acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: true},
		{name: "literal Allow of another topic", acls: []acl{{topic, "u", literal, alice, "*", opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "other resource type", acls: []acl{{group, "t", literal, alice, "*", opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "wildcard resource", acls: []acl{{topic, "*", literal, alice, "*", opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "anything", want: true},
		{name: "wildcard principal", acls: []acl{{topic, "t", literal, "User:*", "*", opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: true},
		{name: "wildcard principal is User:* only", acls: []acl{{topic, "t", literal, "Group:*", "*", opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "host match", acls: []acl{{topic, "t", literal, alice, h1, opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: true},
		{name: "host mismatch", acls: []acl{{topic, "t", literal, alice, h1, opRead, allow}}, principal: alice, host: h2, op: opRead, rt: topic, res: "t", want: false},
		{name: "prefixed Allow", acls: []acl{{topic, "orders-", prefixed, alice, "*", opWrite, allow}}, principal: alice, host: h1, op: opWrite, rt: topic, res: "orders-eu", want: true},
		{name: "prefixed is not a substring match", acls: []acl{{topic, "orders-", prefixed, alice, "*", opWrite, allow}}, principal: alice, host: h1, op: opWrite, rt: topic, res: "my-orders-eu", want: false},
		{name: "prefix equal to the name", acls: []acl{{topic, "orders", prefixed, alice, "*", opWrite, allow}}, principal: alice, host: h1, op: opWrite, rt: topic, res: "orders", want: true},
		{name: "literal is not a prefix", acls: []acl{{topic, "orders", literal, alice, "*", opWrite, allow}}, principal: alice, host: h1, op: opWrite, rt: topic, res: "orders-eu", want: false},
		{name: "Deny beats Allow", acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}, {topic, "t", literal, alice, "*", opRead, deny}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "wildcard Deny beats literal Allow", acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}, {topic, "*", literal, "User:*", "*", opRead, deny}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "prefixed Deny beats literal Allow", acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}, {topic, "t", prefixed, alice, "*", opAll, deny}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "Deny from one host only", acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}, {topic, "t", literal, alice, h2, opRead, deny}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: true},
		{name: "Deny of another operation", acls: []acl{{topic, "t", literal, alice, "*", opAll, allow}, {topic, "t", literal, alice, "*", opWrite, deny}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: true},
		{name: "Deny Read does not deny Describe", acls: []acl{{topic, "t", literal, alice, "*", opDescribe, allow}, {topic, "t", literal, alice, "*", opRead, deny}}, principal: alice, host: h1, op: opDescribe, rt: topic, res: "t", want: true},
		{name: "All allows everything", acls: []acl{{cluster, "kafka-cluster", literal, alice, "*", opAll, allow}}, principal: alice, host: h1, op: opIdem, rt: cluster, res: "kafka-cluster", want: true},
		{name: "Read implies Describe", acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}}, principal: alice, host: h1, op: opDescribe, rt: topic, res: "t", want: true},
		{name: "Write implies Describe", acls: []acl{{topic, "t", literal, alice, "*", opWrite, allow}}, principal: alice, host: h1, op: opDescribe, rt: topic, res: "t", want: true},
		{name: "Delete implies Describe", acls: []acl{{topic, "t", literal, alice, "*", opDelete, allow}}, principal: alice, host: h1, op: opDescribe, rt: topic, res: "t", want: true},
		{name: "Alter implies Describe", acls: []acl{{topic, "t", literal, alice, "*", opAlter, allow}}, principal: alice, host: h1, op: opDescribe, rt: topic, res: "t", want: true},
		{name: "Create does not imply Describe", acls: []acl{{topic, "t", literal, alice, "*", opCreate, allow}}, principal: alice, host: h1, op: opDescribe, rt: topic, res: "t", want: false},
		{name: "Describe does not imply Read", acls: []acl{{topic, "t", literal, alice, "*", opDescribe, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "AlterConfigs implies DescribeConfigs", acls: []acl{{topic, "t", literal, alice, "*", opAltCfg, allow}}, principal: alice, host: h1, op: opDescCfg, rt: topic, res: "t", want: true},
		{name: "DescribeConfigs does not imply AlterConfigs", acls: []acl{{topic, "t", literal, alice, "*", opDescCfg, allow}}, principal: alice, host: h1, op: opAltCfg, rt: topic, res: "t", want: false},
		{name: "Alter does not imply AlterConfigs", acls: []acl{{topic, "t", literal, alice, "*", opAlter, allow}}, principal: alice, host: h1, op: opAltCfg, rt: topic, res: "t", want: false},
		{name: "Deny Write with Allow Write implies no Describe? Describe still allowed by Read",
			acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}, {topic, "t", literal, alice, "*", opWrite, deny}}, principal: alice, host: h1, op: opDescribe, rt: topic, res: "t", want: true},
		{name: "ANONYMOUS needs its own ACLs", acls: []acl{{topic, "t", literal, alice, "*", opRead, allow}}, principal: "User:ANONYMOUS", host: h1, op: opRead, rt: topic, res: "t", want: false},
		{name: "principal match is exact", acls: []acl{{topic, "t", literal, "User:Alice", "*", opRead, allow}}, principal: alice, host: h1, op: opRead, rt: topic, res: "t", want: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := cacheOf(c.acls...).authorize(c.rules, c.principal, c.host, c.op, c.rt, c.res)
			if got.allowed != c.want {
				t.Fatalf("allowed = %v (%s), want %v", got.allowed, got.reason, c.want)
			}
		})
	}
}

// authorizeByResourceType (KIP-679), after AclAuthorizerTest's
// testAuthorizeByResourceType* cases.
func TestAuthorizeAny(t *testing.T) {
	alice := "User:alice"
	const h = "192.168.0.1"
	cases := []struct {
		name  string
		acls  []acl
		rules rules
		op    kmsg.ACLOperation
		rt    kmsg.ACLResourceType
		want  bool
	}{
		{name: "nothing", op: opWrite, rt: topic, want: false},
		{name: "allow.everyone.if.no.acl.found", rules: rules{allowIfNoACL: true}, op: opWrite, rt: topic, want: true},
		{name: "super user", rules: rules{superUsers: map[string]bool{alice: true}}, op: opIdem, rt: cluster, want: true},
		{name: "one literal Allow", acls: []acl{{topic, "t", literal, alice, "*", opWrite, allow}}, op: opWrite, rt: topic, want: true},
		{name: "Allow All", acls: []acl{{txnID, "tx", literal, alice, h, opAll, allow}}, op: opWrite, rt: txnID, want: true},
		{name: "no implied operations", acls: []acl{{topic, "t", literal, alice, "*", opWrite, allow}}, op: opDescribe, rt: topic, want: false},
		{name: "other host", acls: []acl{{topic, "t", literal, alice, "10.0.0.1", opWrite, allow}}, op: opWrite, rt: topic, want: false},
		{name: "other type", acls: []acl{{group, "t", literal, alice, "*", opWrite, allow}}, op: opWrite, rt: topic, want: false},
		{name: "wildcard Deny wins even with allow.everyone", acls: []acl{{topic, "*", literal, "User:*", "*", opWrite, deny}}, rules: rules{allowIfNoACL: true}, op: opWrite, rt: topic, want: false},
		{name: "literal Deny of the allowed literal", acls: []acl{{topic, "t", literal, alice, "*", opWrite, allow}, {topic, "t", literal, alice, "*", opWrite, deny}}, op: opWrite, rt: topic, want: false},
		{name: "literal Deny of another literal", acls: []acl{{topic, "t", literal, alice, "*", opWrite, allow}, {topic, "u", literal, alice, "*", opWrite, deny}}, op: opWrite, rt: topic, want: true},
		{name: "Deny prefix covers the Allow literal", acls: []acl{{topic, "abc", literal, alice, "*", opWrite, allow}, {topic, "a", prefixed, alice, "*", opWrite, deny}}, op: opWrite, rt: topic, want: false},
		{name: "Deny prefix covers the Allow prefix", acls: []acl{{topic, "abc", prefixed, alice, "*", opWrite, allow}, {topic, "ab", prefixed, alice, "*", opWrite, deny}}, op: opWrite, rt: topic, want: false},
		{name: "Allow prefix shorter than the Deny prefix", acls: []acl{{topic, "a", prefixed, alice, "*", opWrite, allow}, {topic, "abc", prefixed, alice, "*", opWrite, deny}}, op: opWrite, rt: topic, want: true},
		{name: "Allow wildcard literal survives a literal Deny", acls: []acl{{topic, "*", literal, alice, "*", opWrite, allow}, {topic, "t", literal, alice, "*", opWrite, deny}}, op: opWrite, rt: topic, want: true},
		{name: "Deny for another principal does not count", acls: []acl{{topic, "t", literal, alice, "*", opWrite, allow}, {topic, "*", literal, "User:bob", "*", opWrite, deny}}, op: opWrite, rt: topic, want: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := cacheOf(c.acls...).authorizeAny(c.rules, alice, h, c.op, c.rt)
			if got.allowed != c.want {
				t.Fatalf("allowed = %v (%s), want %v", got.allowed, got.reason, c.want)
			}
		})
	}
}

func strp(s string) *string { return &s }

// ResourcePatternFilter and AccessControlEntryFilter semantics, and what
// the cache returns for them.
func TestFilters(t *testing.T) {
	c := cacheOf(
		acl{topic, "orders", literal, "User:alice", "*", opRead, allow},
		acl{topic, "*", literal, "User:bob", "*", opWrite, allow},
		acl{topic, "ord", prefixed, "User:carol", "10.0.0.1", opRead, deny},
		acl{topic, "other", literal, "User:alice", "*", opRead, allow},
		acl{group, "orders", literal, "User:alice", "*", opRead, allow},
	)
	anyEntry := security.EntryFilter{Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}
	names := func(f security.ACLFilter) []string {
		var out []string
		for _, b := range c.bindings(f) {
			out = append(out, b.Pattern.ResourceType.String()+":"+b.Pattern.PatternType.String()+":"+b.Pattern.Name+"/"+b.Entry.Principal)
		}
		return out
	}
	cases := []struct {
		name string
		f    security.ACLFilter
		want []string
	}{
		{"any", security.AnyACL, []string{"TOPIC:LITERAL:*/User:bob", "TOPIC:LITERAL:orders/User:alice", "TOPIC:LITERAL:other/User:alice",
			"TOPIC:PREFIXED:ord/User:carol", "GROUP:LITERAL:orders/User:alice"}},
		{"literal exact", security.ACLFilter{Pattern: security.PatternFilter{ResourceType: topic, Name: strp("orders"), PatternType: literal}, Entry: anyEntry},
			[]string{"TOPIC:LITERAL:orders/User:alice"}},
		{"any pattern type, exact name", security.ACLFilter{Pattern: security.PatternFilter{ResourceType: topic, Name: strp("ord"), PatternType: kmsg.ACLResourcePatternTypeAny}, Entry: anyEntry},
			[]string{"TOPIC:PREFIXED:ord/User:carol"}},
		{"match: literal, wildcard and prefixes", security.ACLFilter{Pattern: security.PatternFilter{ResourceType: topic, Name: strp("orders"), PatternType: kmsg.ACLResourcePatternTypeMatch}, Entry: anyEntry},
			[]string{"TOPIC:LITERAL:*/User:bob", "TOPIC:LITERAL:orders/User:alice", "TOPIC:PREFIXED:ord/User:carol"}},
		{"any type, prefixed", security.ACLFilter{Pattern: security.PatternFilter{ResourceType: kmsg.ACLResourceTypeAny, PatternType: prefixed}, Entry: anyEntry},
			[]string{"TOPIC:PREFIXED:ord/User:carol"}},
		{"principal and host", security.ACLFilter{Pattern: security.AnyACL.Pattern,
			Entry: security.EntryFilter{Principal: strp("User:alice"), Host: strp("*"), Operation: opRead, Permission: allow}},
			[]string{"TOPIC:LITERAL:orders/User:alice", "TOPIC:LITERAL:other/User:alice", "GROUP:LITERAL:orders/User:alice"}},
		{"deny only", security.ACLFilter{Pattern: security.AnyACL.Pattern, Entry: security.EntryFilter{Operation: kmsg.ACLOperationAny, Permission: deny}},
			[]string{"TOPIC:PREFIXED:ord/User:carol"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := names(tc.f)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
	if !(security.PatternFilter{ResourceType: topic, Name: strp("t"), PatternType: kmsg.ACLResourcePatternTypeAny}).MatchesAtMostOne() ||
		(security.PatternFilter{ResourceType: topic, Name: strp("t"), PatternType: kmsg.ACLResourcePatternTypeMatch}).MatchesAtMostOne() ||
		(security.PatternFilter{ResourceType: topic, PatternType: literal}).MatchesAtMostOne() {
		t.Fatal("MatchesAtMostOne")
	}
}

// The names Kafka stores and prints.
func TestNames(t *testing.T) {
	for got, want := range map[string]string{
		security.ResourceTypeName(txnID):                                                                                    "TransactionalId",
		security.ResourceTypeName(kmsg.ACLResourceTypeDelegationToken):                                                      "DelegationToken",
		security.OperationName(opIdem):                                                                                      "IdempotentWrite",
		security.OperationName(kmsg.ACLOperationClusterAction):                                                              "ClusterAction",
		security.PermissionName(allow):                                                                                      "Allow",
		security.ResourcePattern{ResourceType: topic, Name: "orders", PatternType: literal}.String():                        "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)",
		security.AccessControlEntry{Principal: "User:alice", Host: "*", Operation: opRead, Permission: allow}.String():      "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)",
		security.PatternFilter{ResourceType: kmsg.ACLResourceTypeAny, PatternType: kmsg.ACLResourcePatternTypeAny}.String(): "ResourcePattern(resourceType=ANY, name=<any>, patternType=ANY)",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	for s, want := range map[string]kmsg.ACLOperation{"Read": opRead, "READ": opRead, "read": opRead, "IdempotentWrite": opIdem,
		"idempotentwrite": opIdem, "IDEMPOTENT_WRITE": kmsg.ACLOperationUnknown, "Fly": kmsg.ACLOperationUnknown, "CreateTokens": kmsg.ACLOperationUnknown} {
		if got := security.ParseOperation(s); got != want {
			t.Errorf("ParseOperation(%q) = %v, want %v", s, got, want)
		}
	}
	if security.ParseResourceType("User") != kmsg.ACLResourceTypeUnknown || security.ParseResourceType("TRANSACTIONALID") != txnID ||
		security.ResourceTypeFromString("transactional_id") != txnID || security.ResourceTypeFromString("TransactionalId") != kmsg.ACLResourceTypeUnknown {
		t.Error("resource type names")
	}
	if su, err := ParseSuperUsers(" User:admin ; User:ops"); err != nil || len(su) != 2 || su[0] != "User:admin" || su[1] != "User:ops" {
		t.Errorf("super users: %v %v", su, err)
	}
	if su, err := ParseSuperUsers("User:admin;"); err != nil || len(su) != 1 {
		t.Errorf("trailing semicolon: %v %v", su, err)
	}
	if _, err := ParseSuperUsers("User:a; ;User:b"); err == nil {
		t.Error("empty super user accepted")
	}
	if _, err := ParseSuperUsers("admin"); err == nil {
		t.Error("super user without type accepted")
	}
}
