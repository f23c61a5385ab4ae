package zkpaths

import (
	"fmt"
	"strings"
)

// IsKRaft reports whether /controller is held by a KRaft controller during a
// ZooKeeper-to-KRaft migration; a ZooKeeper-mode broker must then neither
// delete the node nor try to become controller.
func (c ControllerInfo) IsKRaft() bool { return c.KRaftControllerEpoch >= 0 }

// EncodeLiteralACLChange is the data of a /kafka-acl-changes child: the
// plain string "<RESOURCE_TYPE>:<name>" (not JSON), e.g. "TOPIC:orders".
func EncodeLiteralACLChange(resourceType, name string) []byte {
	return []byte(strings.ToUpper(resourceType) + ":" + name)
}

// DecodeLiteralACLChange splits a literal ACL change at the first ':' only
// (names may contain colons); the type is returned upper-cased because
// Kafka 1.x wrote "Topic" where 2.0+ writes "TOPIC".
func DecodeLiteralACLChange(data []byte) (resourceType, name string, err error) {
	s := string(data)
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", "", fmt.Errorf("zkpaths: acl change %q: want <TYPE>:<name>", s)
	}
	return strings.ToUpper(s[:i]), s[i+1:], nil
}

// ExtendedACLChange is a /kafka-acl-extended-changes child (prefixed patterns).
type ExtendedACLChange struct {
	ResourceType string // enum name, e.g. "TOPIC"
	Name         string
	PatternType  string // "PREFIXED"
}

// Encode writes {"version":1,"resourceType":"TOPIC","name":"orders-","patternType":"PREFIXED"}.
func (e ExtendedACLChange) Encode() []byte {
	return newObj().int("version", 1).str("resourceType", e.ResourceType).str("name", e.Name).str("patternType", e.PatternType).bytes()
}

// DecodeExtendedACLChange reads an extended ACL change strictly: Kafka maps
// it onto a bean and rejects unknown fields and versions other than 1.
func DecodeExtendedACLChange(data []byte) (ExtendedACLChange, error) {
	var v struct {
		Version      *int    `json:"version"`
		ResourceType *string `json:"resourceType"`
		Name         *string `json:"name"`
		PatternType  *string `json:"patternType"`
	}
	if err := unmarshalStrict("extended acl change", data, &v); err != nil {
		return ExtendedACLChange{}, err
	}
	if v.Version == nil || *v.Version != 1 || v.ResourceType == nil || v.Name == nil || v.PatternType == nil {
		return ExtendedACLChange{}, fmt.Errorf("zkpaths: extended acl change: need version 1, resourceType, name, patternType")
	}
	return ExtendedACLChange{ResourceType: *v.ResourceType, Name: *v.Name, PatternType: *v.PatternType}, nil
}

// DelegationToken is the content of /delegation_token/tokens/<id>. The HMAC
// is not stored; brokers recompute it from the id and the secret key.
// Principals are stored sanitized (Sanitize("User:alice") = "User%3Aalice").
type DelegationToken struct {
	Version         int // 1 (Kafka <= 3.2) or 3 (3.3+); Encode writes 3 if 0
	TokenID         string
	Owner           string
	TokenRequester  string // v3; for older versions it equals Owner
	Renewers        []string
	IssueTimestamp  int64
	ExpiryTimestamp int64
	MaxTimestamp    int64
}

// Encode writes the token with the key order derived for Kafka 3.x builds:
// issueTimestamp, renewers, tokenRequester (v3), tokenId, owner,
// expiryTimestamp, maxTimestamp, version.
func (d DelegationToken) Encode() []byte {
	v := d.Version
	if v == 0 {
		v = 3
	}
	r := d.Renewers
	if r == nil {
		r = []string{}
	}
	o := newObj().int("issueTimestamp", d.IssueTimestamp).raw("renewers", appendStrings(nil, r))
	if v >= 3 {
		o.str("tokenRequester", d.TokenRequester)
	}
	return o.str("tokenId", d.TokenID).str("owner", d.Owner).int("expiryTimestamp", d.ExpiryTimestamp).
		int("maxTimestamp", d.MaxTimestamp).int("version", int64(v)).bytes()
}

// DecodeDelegationToken reads versions 1 to 3.
func DecodeDelegationToken(data []byte) (DelegationToken, error) {
	var v struct {
		Version   *int     `json:"version"`
		TokenID   *string  `json:"tokenId"`
		Owner     *string  `json:"owner"`
		Requester *string  `json:"tokenRequester"`
		Renewers  []string `json:"renewers"`
		Issue     int64    `json:"issueTimestamp"`
		Expiry    int64    `json:"expiryTimestamp"`
		Max       int64    `json:"maxTimestamp"`
	}
	if err := unmarshal("delegation token", data, &v); err != nil {
		return DelegationToken{}, err
	}
	if v.Version == nil || *v.Version < 1 || *v.Version > 3 || v.TokenID == nil || v.Owner == nil {
		return DelegationToken{}, fmt.Errorf("zkpaths: delegation token: need version 1-3, tokenId and owner")
	}
	d := DelegationToken{Version: *v.Version, TokenID: *v.TokenID, Owner: *v.Owner, TokenRequester: *v.Owner,
		Renewers: v.Renewers, IssueTimestamp: v.Issue, ExpiryTimestamp: v.Expiry, MaxTimestamp: v.Max}
	if d.Version >= 3 && v.Requester != nil {
		d.TokenRequester = *v.Requester
	}
	return d, nil
}
