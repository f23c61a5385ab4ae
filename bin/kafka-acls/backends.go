package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/authorizer"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkBackend is AuthorizerService: Kafka's AclAuthorizer run in the tool,
// reading and writing the ACL znodes (with their change nodes) itself.
type zkBackend struct {
	zk   *zkclient.Client
	auth *authorizer.Authorizer
}

// newZKBackend reads --authorizer-properties (zookeeper.connect required;
// zookeeper.session.timeout.ms, zookeeper.connection.timeout.ms and
// zookeeper.set.acl, zookeeper.ssl.* and --zk-tls-config-file honoured) and loads every ACL, as the authorizer's
// configure does.
func newZKBackend(o *aclOptions) (*zkBackend, error) {
	if o.authorizer != "" && !authorizer.IsSupportedClass(o.authorizer) {
		return nil, &commandError{msg: o.authorizer + " is not an authorizer Klassik implements (" + authorizer.ClassName + ")"}
	}
	props := map[string]string{}
	for _, kv := range o.authzProps {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" {
			return nil, &commandError{msg: "Missing value for key " + k}
		}
		props[k] = v
	}
	connect := props["zookeeper.connect"]
	if connect == "" {
		return nil, &commandError{msg: `Missing required configuration "zookeeper.connect" which has no default value.`}
	}
	session, err := clitools.Millis(props, "zookeeper.session.timeout.ms", 18*time.Second)
	if err != nil {
		return nil, &commandError{msg: err.Error()}
	}
	connTimeout, err := clitools.Millis(props, "zookeeper.connection.timeout.ms", session)
	if err != nil {
		return nil, &commandError{msg: err.Error()}
	}
	secure, err := clitools.Bool(props, "zookeeper.set.acl", false)
	if err != nil {
		return nil, &commandError{msg: err.Error()}
	}
	// TLS from the authorizer properties and --zk-tls-config-file, the
	// JAAS Client login from KAFKA_OPTS, as AclAuthorizer configures its
	// ZooKeeper client.
	zkSec, err := clitools.AuthorizerZooKeeperOptions(props, o.o.Value("zk-tls-config-file"), secure)
	if err != nil {
		return nil, &commandError{msg: err.Error()}
	}
	zk, err := zkclient.Connect(connect, session, append(zkSec, zkclient.WithConnectTimeout(connTimeout),
		zkclient.WithLogger(slog.New(slog.DiscardHandler)))...)
	if err != nil {
		return nil, &commandError{msg: err.Error()}
	}
	a := authorizer.New(zk, authorizer.Config{Logger: slog.New(slog.DiscardHandler)})
	if err := a.Load(); err != nil {
		zk.Close()
		return nil, &commandError{msg: err.Error()}
	}
	return &zkBackend{zk: zk, auth: a}, nil
}

func (b *zkBackend) create(ctx context.Context, out io.Writer, bindings []security.ACLBinding) error {
	for _, e := range b.auth.CreateACLs(ctx, bindings) {
		if e != nil {
			fmt.Fprintf(out, "Error while adding ACLs: %s\n", errorMessage(e))
		}
	}
	return nil
}

func (b *zkBackend) remove(ctx context.Context, out io.Writer, filters []security.ACLFilter) error {
	for _, r := range b.auth.DeleteACLs(ctx, filters) {
		if r.Err != nil {
			fmt.Fprintf(out, "Error while removing ACLs: %s\n", errorMessage(r.Err))
		}
		for _, e := range r.Failures {
			if e != nil {
				fmt.Fprintf(out, "Error while removing ACLs: %s\n", errorMessage(e))
			}
		}
	}
	return nil
}

func (b *zkBackend) describe(_ context.Context, f security.ACLFilter) ([]security.ACLBinding, error) {
	return b.auth.ACLs(f), nil
}

func (b *zkBackend) close() { b.zk.Close() }

// errorMessage is an ApiException's getMessage.
func errorMessage(e *security.ACLError) string {
	if e.Message != "" {
		return e.Message
	}
	return admintool.NewKafkaError(e.Err.Code, nil).Message
}

// adminBackend is AdminClientService: the brokers' ACL APIs.
type adminBackend struct {
	cl      *kgo.Client
	timeout time.Duration
}

func newAdminBackend(o *aclOptions) (*adminBackend, error) {
	props, err := admintool.LoadOptionalProperties(o.commandConf)
	if err != nil {
		return nil, &commandError{msg: err.Error()}
	}
	cl, timeout, err := admintool.NewClient(o.bootstrap, "adminclient-1", 30*time.Second, props)
	if err != nil {
		return nil, &commandError{msg: err.Error()}
	}
	return &adminBackend{cl: cl, timeout: timeout}, nil
}

func (b *adminBackend) close() { b.cl.Close() }

// kafkaError is how the Java admin client's future fails: the exception's
// toString as the ExecutionException's message.
func kafkaError(code int16, msg *string) error {
	return &commandError{msg: admintool.NewKafkaError(code, msg).String()}
}

func (b *adminBackend) call(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	resp, err := b.cl.Request(ctx, req)
	if err != nil {
		return nil, &commandError{msg: admintool.JavaString(admintool.ClientError(err, kmsg.NameForKey(req.Key())))}
	}
	return resp, nil
}

func (b *adminBackend) create(ctx context.Context, _ io.Writer, bindings []security.ACLBinding) error {
	req := kmsg.NewPtrCreateACLsRequest()
	for _, bd := range bindings {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = bd.Pattern.ResourceType, bd.Pattern.Name, bd.Pattern.PatternType
		c.Principal, c.Host, c.Operation, c.PermissionType = bd.Entry.Principal, bd.Entry.Host, bd.Entry.Operation, bd.Entry.Permission
		req.Creations = append(req.Creations, c)
	}
	resp, err := b.call(ctx, req)
	if err != nil {
		return err
	}
	for _, r := range resp.(*kmsg.CreateACLsResponse).Results {
		if r.ErrorCode != 0 {
			return kafkaError(r.ErrorCode, r.ErrorMessage)
		}
	}
	return nil
}

func (b *adminBackend) remove(ctx context.Context, _ io.Writer, filters []security.ACLFilter) error {
	req := kmsg.NewPtrDeleteACLsRequest()
	for _, f := range filters {
		d := kmsg.NewDeleteACLsRequestFilter()
		d.ResourceType, d.ResourceName, d.ResourcePatternType = f.Pattern.ResourceType, f.Pattern.Name, f.Pattern.PatternType
		d.Principal, d.Host, d.Operation, d.PermissionType = f.Entry.Principal, f.Entry.Host, f.Entry.Operation, f.Entry.Permission
		req.Filters = append(req.Filters, d)
	}
	resp, err := b.call(ctx, req)
	if err != nil {
		return err
	}
	for _, r := range resp.(*kmsg.DeleteACLsResponse).Results {
		if r.ErrorCode != 0 {
			return kafkaError(r.ErrorCode, r.ErrorMessage)
		}
		for _, m := range r.MatchingACLs {
			if m.ErrorCode != 0 {
				return kafkaError(m.ErrorCode, m.ErrorMessage)
			}
		}
	}
	return nil
}

func (b *adminBackend) describe(ctx context.Context, f security.ACLFilter) ([]security.ACLBinding, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourceName, req.ResourcePatternType = f.Pattern.ResourceType, f.Pattern.Name, f.Pattern.PatternType
	req.Principal, req.Host, req.Operation, req.PermissionType = f.Entry.Principal, f.Entry.Host, f.Entry.Operation, f.Entry.Permission
	raw, err := b.call(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.DescribeACLsResponse)
	if resp.ErrorCode != 0 {
		return nil, kafkaError(resp.ErrorCode, resp.ErrorMessage)
	}
	var out []security.ACLBinding
	for _, r := range resp.Resources {
		p := security.ResourcePattern{ResourceType: r.ResourceType, Name: r.ResourceName, PatternType: r.ResourcePatternType}
		es := make([]security.AccessControlEntry, 0, len(r.ACLs))
		for _, a := range r.ACLs {
			es = append(es, security.AccessControlEntry{Principal: a.Principal, Host: a.Host, Operation: a.Operation, Permission: a.PermissionType})
		}
		sortEntries(es)
		for _, e := range es {
			out = append(out, security.ACLBinding{Pattern: p, Entry: e})
		}
	}
	return out, nil
}
