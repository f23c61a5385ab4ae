package zkpaths

// The ACL store of Kafka's AclAuthorizer (ZkData's ZkAclStore,
// ResourceZNode and AclEntry's JSON):
//
//	/kafka-acl/<ResourceType>/<name>                    literal patterns
//	/kafka-acl-extended/prefixed/<ResourceType>/<name>  prefixed patterns
//	/kafka-acl-changes/acl_changes_<10 digits>          "TOPIC:orders" (security.go)
//	/kafka-acl-extended-changes/acl_changes_<10 digits> JSON (security.go)
//
// A resource node holds {"version":1,"acls":[{"principal":"User:alice",
// "permissionType":"Allow","operation":"Read","host":"*"}]}: the permission
// and operation in Pascal case (SecurityUtils.permissionTypeName /
// operationName), the directory the resource type's Pascal-case name
// (SecurityUtils.resourceTypeName).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ACL pattern types that have a store of their own (PatternType.isSpecific).
const (
	ACLPatternLiteral  = "LITERAL"
	ACLPatternPrefixed = "PREFIXED"
)

// ACLResourceTypes are the directories Kafka 2.8's AclAuthorizer creates
// under each store (AclEntry.ResourceTypes: every ResourceType but UNKNOWN
// and ANY, Pascal-cased).
var ACLResourceTypes = []string{"Topic", "Group", "Cluster", "TransactionalId", "DelegationToken"}

// ACLStorePath is the root of one pattern type's ACLs: /kafka-acl for
// literal patterns, /kafka-acl-extended/<lower-case pattern type> otherwise.
func ACLStorePath(patternType string) string {
	if strings.EqualFold(patternType, ACLPatternLiteral) {
		return ACLLiteralPath
	}
	return ACLExtendedPath + "/" + strings.ToLower(patternType)
}

// ACLResourceTypePath is the directory of one resource type in a store.
func ACLResourceTypePath(patternType, resourceType string) string {
	return ACLStorePath(patternType) + "/" + resourceType
}

// ACLResourcePath is the node of one resource pattern. patternType is
// "literal" or "prefixed" in any case; resourceType the Pascal-case
// directory name ("Topic").
func ACLResourcePath(patternType, resourceType, name string) string {
	return ACLResourceTypePath(patternType, resourceType) + "/" + name
}

// ACLChangesPath is the change folder of a pattern type: literal changes go
// to /kafka-acl-changes, every other pattern type to
// /kafka-acl-extended-changes.
func ACLChangesPath(patternType string) string {
	if strings.EqualFold(patternType, ACLPatternLiteral) {
		return ACLLiteralChangesPath
	}
	return ACLExtendedChangesPath
}

// ACLChangeSeqPath is the path to create (persistent sequential) for one
// change notification of the pattern type.
func ACLChangeSeqPath(patternType string) string {
	return ACLChangesPath(patternType) + "/" + ACLChangePrefix
}

// ACLEntry is one access control entry of a resource node, with Kafka's
// stored spellings: Principal "User:alice", PermissionType "Allow"/"Deny",
// Operation Pascal case ("Read", "IdempotentWrite"), Host an address or "*".
type ACLEntry struct {
	Principal      string
	PermissionType string
	Operation      string
	Host           string
}

// EncodeACLs writes a resource node in the key order Kafka's Json writes
// AclEntry.toJsonCompatibleMap: version, acls; in each entry principal,
// permissionType, operation, host.
func EncodeACLs(acls []ACLEntry) []byte {
	b := []byte{'['}
	for i, a := range acls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, newObj().str("principal", a.Principal).str("permissionType", a.PermissionType).
			str("operation", a.Operation).str("host", a.Host).bytes()...)
	}
	b = append(b, ']')
	return newObj().int("version", 1).raw("acls", b).bytes()
}

// DecodeACLs reads a resource node as AclEntry.fromBytes does: empty data
// is no ACLs; otherwise the document must be an object with the integer
// version 1 and an array "acls" whose every element is an object with the
// four string fields, the principal in "<type>:<name>" form. Other fields
// are ignored (Kafka reads a JSON tree). Operation and permission names
// are not checked here: Kafka maps a name it does not know to UNKNOWN,
// which matches nothing.
func DecodeACLs(data []byte) ([]ACLEntry, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var v struct {
		Version json.RawMessage   `json:"version"`
		ACLs    []json.RawMessage `json:"acls"`
	}
	if err := unmarshal("acls", data, &v); err != nil {
		return nil, err
	}
	var version int
	if len(v.Version) == 0 || json.Unmarshal(v.Version, &version) != nil || version != 1 || strings.ContainsAny(string(v.Version), ".eE") {
		return nil, fmt.Errorf("zkpaths: acls: version must be the integer 1, got %s", orMissing(v.Version))
	}
	if v.ACLs == nil {
		return nil, fmt.Errorf("zkpaths: acls: missing acls array")
	}
	out := make([]ACLEntry, 0, len(v.ACLs))
	for i, raw := range v.ACLs {
		var e struct {
			Principal      *string `json:"principal"`
			PermissionType *string `json:"permissionType"`
			Operation      *string `json:"operation"`
			Host           *string `json:"host"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || bytes.HasPrefix(bytes.TrimSpace(raw), []byte("null")) {
			return nil, fmt.Errorf("zkpaths: acls: entry %d is not an object of strings", i)
		}
		if e.Principal == nil || e.PermissionType == nil || e.Operation == nil || e.Host == nil {
			return nil, fmt.Errorf("zkpaths: acls: entry %d needs principal, permissionType, operation and host", i)
		}
		if k := strings.IndexByte(*e.Principal, ':'); k < 0 {
			return nil, fmt.Errorf("zkpaths: acls: expected a string in format principalType:principalName but got %s", *e.Principal)
		}
		out = append(out, ACLEntry{Principal: *e.Principal, PermissionType: *e.PermissionType, Operation: *e.Operation, Host: *e.Host})
	}
	return out, nil
}

func orMissing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	return string(raw)
}
