package api

// The authorization hook of the request path (Kafka's Authorizer as
// KafkaApis calls it). Handlers ask one question per resource — may this
// principal, from this host, perform this operation on it — and answer a
// denial with the resource type's error code. Without an authorizer
// (authorizer.class.name empty) every action is allowed, as in Kafka.

import (
	"context"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
)

// Action is one authorization question.
type Action struct {
	// Principal is "User:<name>" ("User:ANONYMOUS" on unauthenticated
	// listeners); Host the client's IP address.
	Principal string
	Host      string
	Operation kmsg.ACLOperation
	// ResourceType is Topic, Group, Cluster (Name "kafka-cluster") or
	// TransactionalId.
	ResourceType kmsg.ACLResourceType
	Name         string
	// AnyResource asks whether op is allowed on some resource of the type
	// (Kafka's authorizeByResourceType); Name is then empty.
	AnyResource bool
	// Filtering marks a question whose denial refuses nothing, e.g. while
	// filling authorized_operations or hiding topics from a Metadata
	// listing (Kafka's logIfDenied=false): a denial is then logged at debug
	// instead of info.
	Filtering bool
}

// Authorizer decides actions. Implementations apply implied operations
// themselves (Read, Write, Delete and Alter imply Describe; AlterConfigs
// implies DescribeConfigs), as Kafka's AclAuthorizer does.
type Authorizer interface {
	Authorize(ctx context.Context, act Action) bool
}

// ACLAdmin is the ACL store DescribeAcls, CreateAcls and DeleteAcls work
// on: the configured authorizer (broker/security/authorizer). Without one
// (nil) those APIs answer SECURITY_DISABLED, as Kafka does.
type ACLAdmin interface {
	// ACLs lists the bindings matching filter.
	ACLs(filter security.ACLFilter) []security.ACLBinding
	// CreateACLs adds bindings; one result per binding, nil = created.
	CreateACLs(ctx context.Context, bindings []security.ACLBinding) []*security.ACLError
	// DeleteACLs removes the bindings each filter matches; one result per
	// filter.
	DeleteACLs(ctx context.Context, filters []security.ACLFilter) []security.ACLDeleteResult
}

// clusterResource is the name of Kafka's single Cluster resource.
const clusterResource = "kafka-cluster"

// authorize reports whether the request's principal may perform op on the
// resource; true when no authorizer is configured.
func (a *Apis) authorize(ctx context.Context, r *request, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	return a.decide(ctx, r, Action{Operation: op, ResourceType: rt, Name: name})
}

// authorizeAny reports whether op is allowed on some resource of type rt.
func (a *Apis) authorizeAny(ctx context.Context, r *request, op kmsg.ACLOperation, rt kmsg.ACLResourceType) bool {
	return a.decide(ctx, r, Action{Operation: op, ResourceType: rt, AnyResource: true})
}

func (a *Apis) decide(ctx context.Context, r *request, act Action) bool {
	if a.authorizer == nil {
		return true
	}
	act.Principal = "User:ANONYMOUS"
	if r.net != nil {
		if r.net.Session != nil {
			act.Principal = r.net.Session.Principal
		}
		if r.net.RemoteAddr != nil {
			if host, _, err := net.SplitHostPort(r.net.RemoteAddr.String()); err == nil {
				act.Host = host
			}
		}
	}
	return a.authorizer.Authorize(ctx, act)
}
