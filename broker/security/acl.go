package security

// ACL value types shared by the authorizer, the ACL APIs and kafka-acls.sh
// (Kafka's org.apache.kafka.common.acl and .resource classes: ResourcePattern,
// AccessControlEntry, AclBinding and their filters), with Kafka 2.8's enum
// names (SecurityUtils' Pascal-case names in ZooKeeper, the upper-case enum
// names in tool output) and its filter semantics.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClusterResourceName is the name of Kafka's single Cluster resource.
const ClusterResourceName = "kafka-cluster"

// WildcardResource, WildcardHost and WildcardPrincipal are the wildcards of
// resource names, hosts and principals.
const (
	WildcardResource  = "*"
	WildcardHost      = "*"
	WildcardPrincipal = "User:*"
)

// Kafka 2.8's highest enum codes; kmsg knows later ones (USER resources,
// token operations), which a 2.8 broker reads as UNKNOWN.
const (
	maxResourceType = kmsg.ACLResourceTypeDelegationToken
	maxOperation    = kmsg.ACLOperationIdempotentWrite
	maxPermission   = kmsg.ACLPermissionTypeAllow
	maxPatternType  = kmsg.ACLResourcePatternTypePrefixed
)

// ResourceTypeFromCode is ResourceType.fromCode as 2.8 has it: codes it
// does not know are UNKNOWN.
func ResourceTypeFromCode(c int8) kmsg.ACLResourceType {
	if c < 0 || kmsg.ACLResourceType(c) > maxResourceType {
		return kmsg.ACLResourceTypeUnknown
	}
	return kmsg.ACLResourceType(c)
}

// OperationFromCode is AclOperation.fromCode (2.8).
func OperationFromCode(c int8) kmsg.ACLOperation {
	if c < 0 || kmsg.ACLOperation(c) > maxOperation {
		return kmsg.ACLOperationUnknown
	}
	return kmsg.ACLOperation(c)
}

// PermissionFromCode is AclPermissionType.fromCode.
func PermissionFromCode(c int8) kmsg.ACLPermissionType {
	if c < 0 || kmsg.ACLPermissionType(c) > maxPermission {
		return kmsg.ACLPermissionTypeUnknown
	}
	return kmsg.ACLPermissionType(c)
}

// PatternTypeFromCode is PatternType.fromCode.
func PatternTypeFromCode(c int8) kmsg.ACLResourcePatternType {
	if c < 0 || kmsg.ACLResourcePatternType(c) > maxPatternType {
		return kmsg.ACLResourcePatternTypeUnknown
	}
	return kmsg.ACLResourcePatternType(c)
}

// pascal is SecurityUtils.toPascalCase of an enum name ("TRANSACTIONAL_ID"
// -> "TransactionalId").
func pascal(enum string) string {
	var b strings.Builder
	up := true
	for _, r := range enum {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			b.WriteString(strings.ToLower(string(r)))
		}
	}
	return b.String()
}

// ResourceTypeName is SecurityUtils.resourceTypeName: the Pascal-case name
// of the ZooKeeper directory ("Topic", "TransactionalId").
func ResourceTypeName(rt kmsg.ACLResourceType) string { return pascal(rt.String()) }

// OperationName is SecurityUtils.operationName ("Read", "IdempotentWrite").
func OperationName(op kmsg.ACLOperation) string { return pascal(op.String()) }

// PermissionName is SecurityUtils.permissionTypeName ("Allow", "Deny").
func PermissionName(p kmsg.ACLPermissionType) string { return pascal(p.String()) }

// lookupName is SecurityUtils.valueFromMap: the Pascal-case name, or any
// spelling whose upper case equals the Pascal name's upper case
// ("transactionalid"); anything else is the zero value, UNKNOWN.
func lookupName[T ~int8](s string, max T, name func(T) string) T {
	for v := T(0); v <= max; v++ {
		if n := name(v); s == n || strings.ToUpper(s) == strings.ToUpper(n) {
			return v
		}
	}
	return 0
}

// ParseResourceType is SecurityUtils.resourceType.
func ParseResourceType(s string) kmsg.ACLResourceType {
	return lookupName(s, maxResourceType, ResourceTypeName)
}

// ParseOperation is SecurityUtils.operation.
func ParseOperation(s string) kmsg.ACLOperation { return lookupName(s, maxOperation, OperationName) }

// ParsePermission is SecurityUtils.permissionType.
func ParsePermission(s string) kmsg.ACLPermissionType {
	return lookupName(s, maxPermission, PermissionName)
}

// ResourceTypeFromString is ResourceType.fromString (the change nodes'
// spelling): the enum name in any case, else UNKNOWN.
func ResourceTypeFromString(s string) kmsg.ACLResourceType {
	for v := kmsg.ACLResourceType(0); v <= maxResourceType; v++ {
		if strings.ToUpper(s) == v.String() {
			return v
		}
	}
	return kmsg.ACLResourceTypeUnknown
}

// PatternTypeFromString is PatternType.fromString: the exact enum name.
func PatternTypeFromString(s string) kmsg.ACLResourcePatternType {
	for v := kmsg.ACLResourcePatternType(0); v <= maxPatternType; v++ {
		if s == v.String() {
			return v
		}
	}
	return kmsg.ACLResourcePatternTypeUnknown
}

// ParsePrincipal is SecurityUtils.parseKafkaPrincipal's check: a principal
// is "<type>:<name>", split at the first colon.
func ParsePrincipal(s string) (typ, name string, ok bool) {
	return strings.Cut(s, ":")
}

// ResourcePattern is Kafka's ResourcePattern: a resource type, a name and a
// specific pattern type (LITERAL or PREFIXED).
type ResourcePattern struct {
	ResourceType kmsg.ACLResourceType
	Name         string
	PatternType  kmsg.ACLResourcePatternType
}

// String is ResourcePattern.toString, which kafka-acls.sh prints.
func (p ResourcePattern) String() string {
	return "ResourcePattern(resourceType=" + p.ResourceType.String() + ", name=" + p.Name + ", patternType=" + p.PatternType.String() + ")"
}

// Known reports whether no element is UNKNOWN (ResourcePattern.isUnknown
// negated).
func (p ResourcePattern) Known() bool {
	return p.ResourceType != kmsg.ACLResourceTypeUnknown && p.PatternType != kmsg.ACLResourcePatternTypeUnknown
}

// Specific reports whether the pattern can be stored: a concrete resource
// type and LITERAL or PREFIXED (ResourcePattern's constructor refuses ANY
// and MATCH).
func (p ResourcePattern) Specific() bool {
	return p.ResourceType > kmsg.ACLResourceTypeAny && p.ResourceType <= maxResourceType &&
		(p.PatternType == kmsg.ACLResourcePatternTypeLiteral || p.PatternType == kmsg.ACLResourcePatternTypePrefixed)
}

// AccessControlEntry is Kafka's AccessControlEntry.
type AccessControlEntry struct {
	Principal  string // "User:alice"
	Host       string // an IP address or "*"
	Operation  kmsg.ACLOperation
	Permission kmsg.ACLPermissionType
}

// String is AccessControlEntry.toString.
func (e AccessControlEntry) String() string {
	return "(principal=" + e.Principal + ", host=" + e.Host + ", operation=" + e.Operation.String() +
		", permissionType=" + e.Permission.String() + ")"
}

// Specific reports whether the entry can be stored: a known, non-ANY
// operation and permission and a principal of the form type:name.
func (e AccessControlEntry) Specific() bool {
	_, _, ok := ParsePrincipal(e.Principal)
	return ok && e.Operation > kmsg.ACLOperationAny && e.Operation <= maxOperation &&
		e.Permission > kmsg.ACLPermissionTypeAny && e.Permission <= maxPermission
}

// ToFilter is AccessControlEntry.toFilter: a filter matching exactly e.
func (e AccessControlEntry) ToFilter() EntryFilter {
	p, h := e.Principal, e.Host
	return EntryFilter{Principal: &p, Host: &h, Operation: e.Operation, Permission: e.Permission}
}

// ACLBinding is Kafka's AclBinding: one entry on one resource pattern.
type ACLBinding struct {
	Pattern ResourcePattern
	Entry   AccessControlEntry
}

// Valid reports whether the binding may be created: every element known
// and specific (AuthorizerUtils.validateAclBinding plus the constructors'
// checks).
func (b ACLBinding) Valid() bool { return b.Pattern.Specific() && b.Entry.Specific() }

// PatternFilter is Kafka's ResourcePatternFilter. A nil Name matches every
// name; ResourceType ANY every type; PatternType ANY every pattern type
// with the exact name, MATCH every pattern that applies to the name
// (the literal name, the literal wildcard and every prefix of it).
type PatternFilter struct {
	ResourceType kmsg.ACLResourceType
	Name         *string
	PatternType  kmsg.ACLResourcePatternType
}

// String is ResourcePatternFilter.toString (kafka-acls.sh's confirmation
// prompt).
func (f PatternFilter) String() string {
	name := "<any>"
	if f.Name != nil {
		name = *f.Name
	}
	return "ResourcePattern(resourceType=" + f.ResourceType.String() + ", name=" + name + ", patternType=" + f.PatternType.String() + ")"
}

// Matches is ResourcePatternFilter.matches.
func (f PatternFilter) Matches(p ResourcePattern) bool {
	if f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != p.ResourceType {
		return false
	}
	if f.PatternType != kmsg.ACLResourcePatternTypeAny && f.PatternType != kmsg.ACLResourcePatternTypeMatch && f.PatternType != p.PatternType {
		return false
	}
	if f.Name == nil {
		return true
	}
	name := *f.Name
	if f.PatternType == kmsg.ACLResourcePatternTypeAny || f.PatternType == p.PatternType {
		return name == p.Name
	}
	switch p.PatternType {
	case kmsg.ACLResourcePatternTypeLiteral:
		return name == p.Name || p.Name == WildcardResource
	case kmsg.ACLResourcePatternTypePrefixed:
		return strings.HasPrefix(name, p.Name)
	}
	return false
}

// MatchesAtMostOne is ResourcePatternFilter.matchesAtMostOne: a concrete
// type, a name and a pattern type other than MATCH (and not UNKNOWN).
func (f PatternFilter) MatchesAtMostOne() bool {
	return f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != kmsg.ACLResourceTypeUnknown && f.Name != nil &&
		f.PatternType != kmsg.ACLResourcePatternTypeMatch && f.PatternType != kmsg.ACLResourcePatternTypeUnknown
}

// EntryFilter is Kafka's AccessControlEntryFilter: nil principal or host
// and ANY operation or permission match everything.
type EntryFilter struct {
	Principal  *string
	Host       *string
	Operation  kmsg.ACLOperation
	Permission kmsg.ACLPermissionType
}

// Matches is AccessControlEntryFilter.matches.
func (f EntryFilter) Matches(e AccessControlEntry) bool {
	return (f.Principal == nil || *f.Principal == e.Principal) && (f.Host == nil || *f.Host == e.Host) &&
		(f.Operation == kmsg.ACLOperationAny || f.Operation == e.Operation) &&
		(f.Permission == kmsg.ACLPermissionTypeAny || f.Permission == e.Permission)
}

// ACLFilter is Kafka's AclBindingFilter.
type ACLFilter struct {
	Pattern PatternFilter
	Entry   EntryFilter
}

// AnyACL matches every binding (AclBindingFilter.ANY).
var AnyACL = ACLFilter{
	Pattern: PatternFilter{ResourceType: kmsg.ACLResourceTypeAny, PatternType: kmsg.ACLResourcePatternTypeAny},
	Entry:   EntryFilter{Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny},
}

// Matches is AclBindingFilter.matches.
func (f ACLFilter) Matches(b ACLBinding) bool {
	return f.Pattern.Matches(b.Pattern) && f.Entry.Matches(b.Entry)
}

// Known reports whether no element of the filter is UNKNOWN
// (AclBindingFilter.isUnknown negated).
func (f ACLFilter) Known() bool {
	return f.Pattern.ResourceType != kmsg.ACLResourceTypeUnknown && f.Pattern.PatternType != kmsg.ACLResourcePatternTypeUnknown &&
		f.Entry.Operation != kmsg.ACLOperationUnknown && f.Entry.Permission != kmsg.ACLPermissionTypeUnknown
}

// ACLError is the outcome of one ACL creation or deletion that failed: a
// Kafka error code with its message (ApiError).
type ACLError struct {
	Err     *kerr.Error
	Message string
}

func (e *ACLError) Error() string {
	if e.Message == "" {
		return e.Err.Message
	}
	return e.Err.Message + ": " + e.Message
}

// ACLDeleteResult is Kafka's AclDeleteResult for one filter: the bindings
// it deleted, each with its own error (nil when deleted), or Err for the
// whole filter.
type ACLDeleteResult struct {
	Err      *ACLError
	Deleted  []ACLBinding
	Failures []*ACLError // parallel to Deleted; nil entries succeeded
}
