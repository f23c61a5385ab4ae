package authorizer

// The in-memory ACL set and the decisions taken on it (AclAuthorizer's
// aclCache, matchingAcls, authorizeAction and authorizeByResourceType). No
// I/O and no locking here: the Authorizer guards a cache with its mutex.

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// versionedACLs are the entries of one resource pattern and the version of
// its znode (zkclient.NoACLVersion when it does not exist).
type versionedACLs struct {
	entries []security.AccessControlEntry // deduplicated, sorted; never modified once stored
	version int32
}

var noACLs = versionedACLs{version: zkclient.NoACLVersion}

// aclCache maps every resource pattern that has ACLs to them.
type aclCache struct {
	acls map[security.ResourcePattern]versionedACLs
}

func newACLCache() *aclCache {
	return &aclCache{acls: map[security.ResourcePattern]versionedACLs{}}
}

// set replaces a pattern's ACLs; no entries removes the pattern.
func (c *aclCache) set(p security.ResourcePattern, v versionedACLs) {
	if len(v.entries) == 0 {
		delete(c.acls, p)
		return
	}
	c.acls[p] = v
}

// normalize deduplicates and sorts entries (Kafka holds them in a Set).
func normalize(entries []security.AccessControlEntry) []security.AccessControlEntry {
	out := slices.Clone(entries)
	slices.SortFunc(out, compareEntries)
	return slices.Compact(out)
}

func compareEntries(a, b security.AccessControlEntry) int {
	if c := strings.Compare(a.Principal, b.Principal); c != 0 {
		return c
	}
	if c := strings.Compare(a.Host, b.Host); c != 0 {
		return c
	}
	if a.Operation != b.Operation {
		return int(a.Operation) - int(b.Operation)
	}
	return int(a.Permission) - int(b.Permission)
}

func comparePatterns(a, b security.ResourcePattern) int {
	if a.ResourceType != b.ResourceType {
		return int(a.ResourceType) - int(b.ResourceType)
	}
	if a.PatternType != b.PatternType {
		return int(a.PatternType) - int(b.PatternType)
	}
	return strings.Compare(a.Name, b.Name)
}

// rules are the authorizer's settings that decide besides the ACLs.
type rules struct {
	superUsers   map[string]bool // super.users
	allowIfNoACL bool            // allow.everyone.if.no.acl.found
}

// matching returns the ACLs that apply to one literal resource: those of
// every prefixed pattern the name starts with, of the wildcard literal and
// of the literal name (AclAuthorizer.matchingAcls).
func (c *aclCache) matching(rt kmsg.ACLResourceType, name string) [][]security.AccessControlEntry {
	var out [][]security.AccessControlEntry
	for i := 1; i <= len(name); i++ {
		if v, ok := c.acls[security.ResourcePattern{ResourceType: rt, Name: name[:i], PatternType: kmsg.ACLResourcePatternTypePrefixed}]; ok {
			out = append(out, v.entries)
		}
	}
	if v, ok := c.acls[security.ResourcePattern{ResourceType: rt, Name: security.WildcardResource, PatternType: kmsg.ACLResourcePatternTypeLiteral}]; ok {
		out = append(out, v.entries)
	}
	if name != security.WildcardResource {
		if v, ok := c.acls[security.ResourcePattern{ResourceType: rt, Name: name, PatternType: kmsg.ACLResourcePatternTypeLiteral}]; ok {
			out = append(out, v.entries)
		}
	}
	return out
}

// impliedBy lists the operations whose Allow grants op: Read, Write,
// Delete and Alter imply Describe; AlterConfigs implies DescribeConfigs.
func impliedBy(op kmsg.ACLOperation) []kmsg.ACLOperation {
	switch op {
	case kmsg.ACLOperationDescribe:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribe, kmsg.ACLOperationRead, kmsg.ACLOperationWrite,
			kmsg.ACLOperationDelete, kmsg.ACLOperationAlter}
	case kmsg.ACLOperationDescribeConfigs:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	}
	return []kmsg.ACLOperation{op}
}

// entryApplies is matchingAclExists' test of one entry: the permission,
// the principal or User:*, the operation or All, the host or *.
func entryApplies(e security.AccessControlEntry, perm kmsg.ACLPermissionType, principal, host string, op kmsg.ACLOperation) bool {
	return e.Permission == perm &&
		(e.Principal == principal || e.Principal == security.WildcardPrincipal) &&
		(e.Operation == op || e.Operation == kmsg.ACLOperationAll) &&
		(e.Host == host || e.Host == security.WildcardHost)
}

func anyApplies(sets [][]security.AccessControlEntry, perm kmsg.ACLPermissionType, principal, host string, op kmsg.ACLOperation) bool {
	for _, set := range sets {
		for _, e := range set {
			if entryApplies(e, perm, principal, host, op) {
				return true
			}
		}
	}
	return false
}

// decision is the outcome of one question and why, for the log line.
type decision struct {
	allowed bool
	reason  string
}

// authorize is AclAuthorizer.authorizeAction for one literal resource:
// super users may do anything; a resource without any ACL is decided by
// allow.everyone.if.no.acl.found; otherwise a matching Deny refuses and a
// matching Allow (of op or an operation implying it) is needed.
func (c *aclCache) authorize(r rules, principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) decision {
	if r.superUsers[principal] {
		return decision{true, "super user"}
	}
	sets := c.matching(rt, name)
	empty := true
	for _, s := range sets {
		if len(s) > 0 {
			empty = false
			break
		}
	}
	if empty {
		if r.allowIfNoACL {
			return decision{true, "no ACL found, allow.everyone.if.no.acl.found=true"}
		}
		return decision{false, "no ACL found"}
	}
	if anyApplies(sets, kmsg.ACLPermissionTypeDeny, principal, host, op) {
		return decision{false, "a Deny ACL matches"}
	}
	for _, implied := range impliedBy(op) {
		if anyApplies(sets, kmsg.ACLPermissionTypeAllow, principal, host, implied) {
			return decision{true, "an Allow ACL matches"}
		}
	}
	return decision{false, "no Allow ACL matches"}
}

// authorizeAny is AclAuthorizer.authorizeByResourceType (KIP-679): may the
// principal perform op on at least one resource of type rt? Only entries
// of exactly op or All count (no implied operations), for the principal or
// User:* and the host or *:
//   - a literal wildcard Deny refuses everything;
//   - otherwise allow.everyone.if.no.acl.found allows;
//   - without any Deny, any Allow allows;
//   - otherwise an Allow prefix not covered by a Deny prefix allows, or an
//     Allow literal that is the wildcard, or neither denied literally nor
//     covered by a Deny prefix.
func (c *aclCache) authorizeAny(r rules, principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType) decision {
	if r.superUsers[principal] {
		return decision{true, "super user"}
	}
	type key struct {
		perm kmsg.ACLPermissionType
		pt   kmsg.ACLResourcePatternType
	}
	names := map[key][]string{}
	for p, v := range c.acls {
		if p.ResourceType != rt {
			continue
		}
		for _, perm := range []kmsg.ACLPermissionType{kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny} {
			for _, e := range v.entries {
				if entryApplies(e, perm, principal, host, op) {
					k := key{perm, p.PatternType}
					names[k] = append(names[k], p.Name)
					break
				}
			}
		}
	}
	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	allow, deny := kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny
	denyLit, denyPre := names[key{deny, lit}], names[key{deny, pre}]
	if slices.Contains(denyLit, security.WildcardResource) {
		return decision{false, "a Deny ACL on every resource of the type matches"}
	}
	if r.allowIfNoACL {
		return decision{true, "allow.everyone.if.no.acl.found=true"}
	}
	allowLit, allowPre := names[key{allow, lit}], names[key{allow, pre}]
	if len(denyLit) == 0 && len(denyPre) == 0 {
		if len(allowLit) > 0 || len(allowPre) > 0 {
			return decision{true, "an Allow ACL matches"}
		}
		return decision{false, "no Allow ACL matches"}
	}
	dominated := func(name string) bool {
		for _, d := range denyPre {
			if strings.HasPrefix(name, d) {
				return true
			}
		}
		return false
	}
	for _, p := range allowPre {
		if !dominated(p) {
			return decision{true, "an Allow prefix not covered by a Deny matches"}
		}
	}
	for _, l := range allowLit {
		if l == security.WildcardResource || (!slices.Contains(denyLit, l) && !dominated(l)) {
			return decision{true, "an Allow literal not covered by a Deny matches"}
		}
	}
	return decision{false, "every Allow ACL is covered by a Deny"}
}

// bindings lists the cache's ACLs that match filter, sorted by resource
// pattern and entry.
func (c *aclCache) bindings(filter security.ACLFilter) []security.ACLBinding {
	var out []security.ACLBinding
	for p, v := range c.acls {
		if !filter.Pattern.Matches(p) {
			continue
		}
		for _, e := range v.entries {
			b := security.ACLBinding{Pattern: p, Entry: e}
			if e.Specific() && filter.Matches(b) {
				out = append(out, b)
			}
		}
	}
	slices.SortFunc(out, func(a, b security.ACLBinding) int {
		if c := comparePatterns(a.Pattern, b.Pattern); c != 0 {
			return c
		}
		return compareEntries(a.Entry, b.Entry)
	})
	return out
}
