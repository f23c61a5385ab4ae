package authorizer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// Class names authorizer.class.name accepts: Kafka 2.8's AclAuthorizer and
// the SimpleAclAuthorizer it replaced (which 2.8 runs as AclAuthorizer).
const (
	ClassName       = "kafka.security.authorizer.AclAuthorizer"
	LegacyClassName = "kafka.security.auth.SimpleAclAuthorizer"
)

// IsSupportedClass reports whether authorizer.class.name names an
// authorizer Klassik implements.
func IsSupportedClass(name string) bool { return name == ClassName || name == LegacyClassName }

// ParseSuperUsers reads super.users: principals separated by semicolons,
// each trimmed and of the form type:name (AclAuthorizer.configure).
func ParseSuperUsers(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	parts := strings.Split(s, ";")
	for len(parts) > 0 && parts[len(parts)-1] == "" { // Java's split drops trailing empty strings
		parts = parts[:len(parts)-1]
	}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if _, _, ok := security.ParsePrincipal(p); !ok || p == "" {
			return nil, fmt.Errorf("expected a string in format principalType:principalName but got %s", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// Config configures an Authorizer.
type Config struct {
	SuperUsers                []string // super.users, parsed
	AllowEveryoneIfNoACLFound bool     // allow.everyone.if.no.acl.found
	Logger                    *slog.Logger
	// Now is the clock of the change listeners' purge; nil is time.Now.
	Now func() time.Time
}

// maxUpdateRetries bounds the conditional-write retries of one resource
// (AclAuthorizer.maxUpdateRetries).
const maxUpdateRetries = 10

// Authorizer is Kafka's AclAuthorizer on ZooKeeper.
type Authorizer struct {
	zk        *zkclient.Client
	rules     rules
	logger    *slog.Logger
	decisions *slog.Logger // kafka.authorizer.logger
	now       func() time.Time
	listeners []*changeListener

	// updateMu serializes the writes of ACLs and the processing of change
	// notifications (AclAuthorizer's lock); it is held across ZooKeeper
	// I/O, and mu is taken inside it only for the in-memory update.
	updateMu sync.Mutex

	// mu guards the following.
	mu    sync.RWMutex
	cache *aclCache
}

// New makes an authorizer on a ZooKeeper session. Start (a broker) or Load
// (a tool) fills it.
func New(zk *zkclient.Client, cfg Config) *Authorizer {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	su := map[string]bool{}
	for _, p := range cfg.SuperUsers {
		su[p] = true
	}
	return &Authorizer{zk: zk, rules: rules{superUsers: su, allowIfNoACL: cfg.AllowEveryoneIfNoACLFound},
		logger:    cfg.Logger.With("component", "acl-authorizer"),
		decisions: cfg.Logger.With("logger", "kafka.authorizer.logger"),
		now:       cfg.Now, cache: newACLCache()}
}

// Start creates the ACL paths, starts both change listeners and then loads
// every ACL, so that no change falls between the load and the first
// notification (AclAuthorizer.configure).
func (a *Authorizer) Start() error {
	if err := a.zk.CreateACLPaths(); err != nil {
		return fmt.Errorf("authorizer: creating the ACL paths: %w", err)
	}
	a.listeners = []*changeListener{
		startChangeListener(a.zk, zkpaths.ACLLiteralChangesPath, a.literalChange, a.now, a.logger),
		startChangeListener(a.zk, zkpaths.ACLExtendedChangesPath, a.extendedChange, a.now, a.logger),
	}
	return a.loadCache()
}

// Load creates the ACL paths and loads every ACL, without listening for
// changes (kafka-acls.sh's single command).
func (a *Authorizer) Load() error {
	if err := a.zk.CreateACLPaths(); err != nil {
		return fmt.Errorf("authorizer: creating the ACL paths: %w", err)
	}
	return a.loadCache()
}

// Close stops the change listeners; the ZooKeeper session is the caller's.
func (a *Authorizer) Close() {
	for _, l := range a.listeners {
		l.stop()
	}
}

// loadCache reads every resource of both stores (AclAuthorizer.loadCache).
// A resource type directory Kafka 2.8 does not know is skipped.
func (a *Authorizer) loadCache() error {
	a.updateMu.Lock()
	defer a.updateMu.Unlock()
	for _, pt := range []kmsg.ACLResourcePatternType{kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed} {
		types, err := a.zk.GetACLResourceTypes(pt.String())
		if err != nil {
			return fmt.Errorf("authorizer: listing %s: %w", zkpaths.ACLStorePath(pt.String()), err)
		}
		for _, dir := range types {
			rt := security.ParseResourceType(dir)
			if rt <= kmsg.ACLResourceTypeAny {
				a.logger.Warn("ignoring unknown ResourceType", "resource_type", dir)
				continue
			}
			names, err := a.zk.GetACLResourceNames(pt.String(), dir)
			if err != nil {
				return fmt.Errorf("authorizer: listing %s: %w", zkpaths.ACLResourceTypePath(pt.String(), dir), err)
			}
			for _, name := range names {
				p := security.ResourcePattern{ResourceType: rt, Name: name, PatternType: pt}
				v, err := a.readZK(p)
				if err != nil {
					return err
				}
				a.mu.Lock()
				a.cache.set(p, v)
				a.mu.Unlock()
			}
		}
	}
	a.mu.RLock()
	n := len(a.cache.acls)
	a.mu.RUnlock()
	a.logger.Info("loaded ACLs", "resources", n)
	return nil
}

// readZK reads one resource's ACLs. A node that cannot be decoded counts
// as no ACLs and is logged (Kafka reads unparsable JSON as no ACLs too):
// it grants nothing beyond what allow.everyone.if.no.acl.found grants.
func (a *Authorizer) readZK(p security.ResourcePattern) (versionedACLs, error) {
	ptName, rtName := p.PatternType.String(), security.ResourceTypeName(p.ResourceType)
	data, version, err := a.zk.GetACLs(ptName, rtName, p.Name)
	if err != nil {
		return versionedACLs{}, fmt.Errorf("authorizer: reading the ACLs of %s: %w", p, err)
	}
	if version == zkclient.NoACLVersion {
		return noACLs, nil
	}
	stored, err := zkpaths.DecodeACLs(data)
	if err != nil {
		a.logger.Error("unreadable ACL node; treating it as holding no ACLs", "path", zkpaths.ACLResourcePath(ptName, rtName, p.Name), "err", err)
		return versionedACLs{version: version}, nil
	}
	entries := make([]security.AccessControlEntry, len(stored))
	for i, e := range stored {
		entries[i] = security.AccessControlEntry{Principal: e.Principal, Host: e.Host,
			Operation: security.ParseOperation(e.Operation), Permission: security.ParsePermission(e.PermissionType)}
	}
	return versionedACLs{entries: normalize(entries), version: version}, nil
}

// encode writes entries in Kafka's resource node JSON.
func encode(entries []security.AccessControlEntry) []byte {
	stored := make([]zkpaths.ACLEntry, len(entries))
	for i, e := range entries {
		stored[i] = zkpaths.ACLEntry{Principal: e.Principal, PermissionType: security.PermissionName(e.Permission),
			Operation: security.OperationName(e.Operation), Host: e.Host}
	}
	return zkpaths.EncodeACLs(stored)
}

// Authorize answers one question of the request handlers (api.Authorizer)
// and logs it as kafka.authorizer.logger does: an allowed action at
// debug, a denied one at info (debug for filtering questions).
func (a *Authorizer) Authorize(_ context.Context, act api.Action) bool {
	a.mu.RLock()
	var d decision
	if act.AnyResource {
		d = a.cache.authorizeAny(a.rules, act.Principal, act.Host, act.Operation, act.ResourceType)
	} else {
		d = a.cache.authorize(a.rules, act.Principal, act.Host, act.Operation, act.ResourceType, act.Name)
	}
	a.mu.RUnlock()
	level := slog.LevelDebug
	if !d.allowed && !act.Filtering {
		level = slog.LevelInfo
	}
	if a.decisions.Enabled(context.Background(), level) {
		a.decisions.Log(context.Background(), level, decisionLine(act, d.allowed), "reason", d.reason)
	}
	return d.allowed
}

// decisionLine is AclAuthorizer.logAuditMessage's text (without the
// request name, which an Action does not carry).
func decisionLine(act api.Action, allowed bool) string {
	result := "Denied"
	if allowed {
		result = "Allowed"
	}
	resource := security.ResourceTypeName(act.ResourceType) + ":LITERAL:" + act.Name
	if act.AnyResource {
		resource = security.ResourceTypeName(act.ResourceType) + ":UNKNOWN:NONE"
	}
	return "Principal = " + act.Principal + " is " + result + " Operation = " + security.OperationName(act.Operation) +
		" from host = " + act.Host + " on resource = " + resource
}

// ACLs lists the bindings matching filter (Authorizer.acls), sorted.
func (a *Authorizer) ACLs(filter security.ACLFilter) []security.ACLBinding {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.cache.bindings(filter)
}

// CreateACLs adds bindings, one result per binding (nil = created):
// invalid bindings fail with INVALID_REQUEST, the others are written per
// resource pattern with conditional updates and announced by a change
// notification (AclAuthorizer.createAcls).
func (a *Authorizer) CreateACLs(_ context.Context, bindings []security.ACLBinding) []*security.ACLError {
	results := make([]*security.ACLError, len(bindings))
	byPattern := map[security.ResourcePattern][]int{}
	var order []security.ResourcePattern
	for i, b := range bindings {
		if !b.Valid() {
			results[i] = &security.ACLError{Err: kerr.InvalidRequest, Message: "Failed to create ACL"}
			continue
		}
		if _, ok := byPattern[b.Pattern]; !ok {
			order = append(order, b.Pattern)
		}
		byPattern[b.Pattern] = append(byPattern[b.Pattern], i)
	}
	a.updateMu.Lock()
	defer a.updateMu.Unlock()
	for _, p := range order {
		idx := byPattern[p]
		err := a.updateResource(p, func(cur []security.AccessControlEntry) []security.AccessControlEntry {
			next := slices.Clone(cur)
			for _, i := range idx {
				next = append(next, bindings[i].Entry)
			}
			return next
		})
		if err != nil {
			for _, i := range idx {
				results[i] = apiError(err)
			}
		}
	}
	return results
}

// DeleteACLs removes the bindings matching each filter, one result per
// filter listing what it deleted (AclAuthorizer.deleteAcls). A binding
// several filters match is reported under the first of them.
func (a *Authorizer) DeleteACLs(_ context.Context, filters []security.ACLFilter) []security.ACLDeleteResult {
	results := make([]security.ACLDeleteResult, len(filters))
	a.updateMu.Lock()
	defer a.updateMu.Unlock()
	// Every cached pattern, plus the exact patterns a definite filter names
	// (they may exist in ZooKeeper before this broker has heard of them).
	set := map[security.ResourcePattern]bool{}
	a.mu.RLock()
	for p := range a.cache.acls {
		set[p] = true
	}
	a.mu.RUnlock()
	for _, f := range filters {
		if !f.Pattern.MatchesAtMostOne() {
			continue
		}
		for _, pt := range []kmsg.ACLResourcePatternType{kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed} {
			if f.Pattern.PatternType == pt || f.Pattern.PatternType == kmsg.ACLResourcePatternTypeAny {
				p := security.ResourcePattern{ResourceType: f.Pattern.ResourceType, Name: *f.Pattern.Name, PatternType: pt}
				if p.Specific() {
					set[p] = true
				}
			}
		}
	}
	resources := make([]security.ResourcePattern, 0, len(set))
	for p := range set {
		resources = append(resources, p)
	}
	slices.SortFunc(resources, comparePatterns)
	for _, p := range resources {
		var matching []int
		for i, f := range filters {
			if f.Pattern.Matches(p) {
				matching = append(matching, i)
			}
		}
		if len(matching) == 0 {
			continue
		}
		var deleted []security.ACLBinding
		var owners []int
		err := a.updateResource(p, func(cur []security.AccessControlEntry) []security.AccessControlEntry {
			deleted, owners = deleted[:0], owners[:0]
			var keep []security.AccessControlEntry
			for _, e := range cur {
				owner := -1
				for _, i := range matching {
					if filters[i].Entry.Matches(e) {
						owner = i
						break
					}
				}
				if owner < 0 {
					keep = append(keep, e)
					continue
				}
				deleted = append(deleted, security.ACLBinding{Pattern: p, Entry: e})
				owners = append(owners, owner)
			}
			return keep
		})
		var failure *security.ACLError
		if err != nil {
			failure = apiError(err)
		}
		for j, b := range deleted {
			r := &results[owners[j]]
			r.Deleted = append(r.Deleted, b)
			r.Failures = append(r.Failures, failure)
		}
	}
	return results
}

// apiError turns a failed update into the error a client sees.
func apiError(err error) *security.ACLError {
	var ae *security.ACLError
	if errors.As(err, &ae) {
		return ae
	}
	return &security.ACLError{Err: kerr.UnknownServerError, Message: err.Error()}
}

// updateResource applies change to a resource's ACLs with conditional
// ZooKeeper writes, retrying on a concurrent change up to maxUpdateRetries
// times; when the ACLs changed it updates the cache and creates the change
// notification (AclAuthorizer.updateResourceAcls). updateMu must be held.
func (a *Authorizer) updateResource(p security.ResourcePattern, change func([]security.AccessControlEntry) []security.AccessControlEntry) error {
	a.mu.RLock()
	cur, cached := a.cache.acls[p]
	a.mu.RUnlock()
	if !cached {
		var err error
		if cur, err = a.readZK(p); err != nil {
			return err
		}
	}
	ptName, rtName := p.PatternType.String(), security.ResourceTypeName(p.ResourceType)
	for retries := 0; ; retries++ {
		next := normalize(change(cur.entries))
		var ok bool
		var version int32
		var err error
		switch {
		case len(next) > 0 && cur.version != zkclient.NoACLVersion:
			ok, version, err = a.zk.ConditionalSetACLs(ptName, rtName, p.Name, encode(next), cur.version)
		case len(next) > 0:
			ok, err = a.zk.CreateACLsIfNotExists(ptName, rtName, p.Name, encode(next))
		default:
			ok, err = a.zk.ConditionalDeleteACLs(ptName, rtName, p.Name, cur.version)
			version = zkclient.NoACLVersion
		}
		if err != nil {
			return fmt.Errorf("authorizer: updating the ACLs of %s: %w", p, err)
		}
		if ok {
			changed := !slices.Equal(next, cur.entries)
			a.mu.Lock()
			a.cache.set(p, versionedACLs{entries: next, version: version})
			a.mu.Unlock()
			if !changed {
				return nil
			}
			a.logger.Info("updated ACLs", "resource", p.String(), "version", version)
			if err := a.notifyChange(p); err != nil {
				return err
			}
			return nil
		}
		if retries >= maxUpdateRetries {
			return fmt.Errorf("Failed to update ACLs for %s after trying a maximum of %d times", p, maxUpdateRetries)
		}
		time.Sleep(time.Duration(100+rand.IntN(50)) * time.Millisecond)
		if cur, err = a.readZK(p); err != nil {
			return err
		}
	}
}

// notifyChange creates the change notification of a resource: the literal
// "TOPIC:orders" form for literal patterns, the JSON event for prefixed.
func (a *Authorizer) notifyChange(p security.ResourcePattern) error {
	var data []byte
	if p.PatternType == kmsg.ACLResourcePatternTypeLiteral {
		data = zkpaths.EncodeLiteralACLChange(p.ResourceType.String(), p.Name)
	} else {
		data = zkpaths.ExtendedACLChange{ResourceType: p.ResourceType.String(), Name: p.Name, PatternType: p.PatternType.String()}.Encode()
	}
	if _, err := a.zk.CreateACLChangeNotification(p.PatternType.String(), data); err != nil {
		return fmt.Errorf("authorizer: announcing the ACL change of %s: %w", p, err)
	}
	return nil
}

// literalChange handles one /kafka-acl-changes notification.
func (a *Authorizer) literalChange(data []byte) error {
	typ, name, err := zkpaths.DecodeLiteralACLChange(data)
	if err != nil {
		return fmt.Errorf("%w: %v", errBadNotification, err)
	}
	rt := security.ResourceTypeFromString(typ)
	if rt <= kmsg.ACLResourceTypeAny {
		return fmt.Errorf("%w: unknown resource type %q", errBadNotification, typ)
	}
	return a.reload(security.ResourcePattern{ResourceType: rt, Name: name, PatternType: kmsg.ACLResourcePatternTypeLiteral})
}

// extendedChange handles one /kafka-acl-extended-changes notification.
func (a *Authorizer) extendedChange(data []byte) error {
	ch, err := zkpaths.DecodeExtendedACLChange(data)
	if err != nil {
		return fmt.Errorf("%w: %v", errBadNotification, err)
	}
	p := security.ResourcePattern{ResourceType: security.ResourceTypeFromString(ch.ResourceType), Name: ch.Name,
		PatternType: security.PatternTypeFromString(ch.PatternType)}
	if !p.Specific() {
		return fmt.Errorf("%w: not a stored resource pattern: %s", errBadNotification, p)
	}
	return a.reload(p)
}

// reload refreshes one resource from ZooKeeper after a notification
// (processAclChangeNotification).
func (a *Authorizer) reload(p security.ResourcePattern) error {
	a.updateMu.Lock()
	defer a.updateMu.Unlock()
	v, err := a.readZK(p)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.cache.set(p, v)
	a.mu.Unlock()
	a.logger.Info("processed an ACL change notification", "resource", p.String(), "acls", len(v.entries), "zk_version", v.version)
	return nil
}
