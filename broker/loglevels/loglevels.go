// Package loglevels is Klassik's Log4jController (kafka.utils, apache/kafka
// branch 2.8): a registry of named loggers with levels that change at run
// time, behind a slog.Handler.
//
// Kafka's loggers are log4j loggers named after classes
// (kafka.server.KafkaApis) plus a few named ones (state.change.logger);
// their levels form a hierarchy along the dots, a logger without a level of
// its own taking the nearest existing ancestor's, and "root" at the top.
// Klassik's components log through slog with a "component" attribute
// (logger.With("component", "kafka-apis")); the Handler maps each component
// to the Kafka logger name of the class it implements (componentLoggers)
// and drops records below that logger's effective level. A component
// without a Kafka counterpart is the logger "klassik.<component>".
//
// The registry belongs to one broker (brokers of one test process have
// their own), not to the process as log4j's LogManager does.
//
// Invariant: every logger's effective level is recomputed under mu on each
// change and published atomically, so Enabled takes no lock.
package loglevels

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Kafka's log4j levels as slog levels. FATAL and OFF have no slog
// counterpart: FATAL lets only records above ERROR through (Klassik logs
// none), OFF none at all.
const (
	LevelAll   = slog.Level(math.MinInt32)
	LevelTrace = slog.Level(-8)
	LevelDebug = slog.LevelDebug
	LevelInfo  = slog.LevelInfo
	LevelWarn  = slog.LevelWarn
	LevelError = slog.LevelError
	LevelFatal = slog.Level(12)
	LevelOff   = slog.Level(math.MaxInt32)
)

// RootLogger is the name of the top of the hierarchy.
const RootLogger = "root"

// levelNames are log4j's level names.
var levelNames = []struct {
	name  string
	level slog.Level
}{
	{"ALL", LevelAll}, {"TRACE", LevelTrace}, {"DEBUG", LevelDebug}, {"INFO", LevelInfo},
	{"WARN", LevelWarn}, {"ERROR", LevelError}, {"FATAL", LevelFatal}, {"OFF", LevelOff},
}

// validLevels are the levels a client may set (Kafka's
// LogLevelConfig.VALID_LOG_LEVELS), in the order Kafka's message lists
// them: the iteration order of its java.util.HashSet.
var validLevels = []string{"TRACE", "ERROR", "INFO", "FATAL", "DEBUG", "WARN"}

// IsValidLevel reports whether s is a level a client may set: one of
// FATAL, ERROR, WARN, INFO, DEBUG, TRACE, exactly so spelled.
func IsValidLevel(s string) bool { return slices.Contains(validLevels, s) }

// ValidLevels lists the settable levels as Kafka's error message does.
func ValidLevels() string { return strings.Join(validLevels, ", ") }

// LevelName is the log4j name of a level: the named level at or below l.
func LevelName(l slog.Level) string {
	name := "ALL"
	for _, n := range levelNames {
		if l >= n.level {
			name = n.name
		}
	}
	return name
}

func parseLevel(s string) (slog.Level, bool) {
	for _, n := range levelNames {
		if n.name == s {
			return n.level, true
		}
	}
	return 0, false
}

// componentLoggers maps Klassik's component names to the Kafka class each
// implements; its logger is the component's.
var componentLoggers = map[string]string{
	"kafka-apis":              "kafka.server.KafkaApis",
	"socket-server":           "kafka.network.SocketServer",
	"controller":              "kafka.controller.KafkaController",
	"group-coordinator":       "kafka.coordinator.group.GroupCoordinator",
	"txn-coordinator":         "kafka.coordinator.transaction.TransactionCoordinator",
	"log-manager":             "kafka.log.LogManager",
	"log-cleaner":             "kafka.log.LogCleaner",
	"replica-fetcher-manager": "kafka.server.ReplicaFetcherManager",
	"acl-authorizer":          "kafka.security.authorizer.AclAuthorizer",
	"zookeeper":               "kafka.zookeeper.ZooKeeperClient",
	"config-change-listener":  "kafka.common.ZkNodeChangeNotificationListener",
	"credential-provider":     "kafka.security.CredentialProvider",
}

// ServerLogger is the logger of lines without a component: the broker's
// own (Kafka's KafkaServer).
const ServerLogger = "kafka.server.KafkaServer"

// predefined are the loggers Kafka's config/log4j.properties names, which
// exist from the start and group the class loggers below them.
var predefined = []string{"kafka", "kafka.controller", "kafka.log.LogCleaner", "state.change.logger", ServerLogger}

// LoggerFor is the logger name of a component.
func LoggerFor(component string) string {
	if n, ok := componentLoggers[component]; ok {
		return n
	}
	return "klassik." + component
}

// logger is one named logger.
type logger struct {
	effective atomic.Int64 // slog.Level, resolved along the hierarchy
}

func (l *logger) enabled(level slog.Level) bool { return int64(level) >= l.effective.Load() }

// Registry holds one broker's loggers and their levels.
type Registry struct {
	// mu guards the following.
	mu      sync.Mutex
	loggers map[string]*logger
	levels  map[string]slog.Level // levels set on loggers (root always)
}

// NewRegistry returns a registry whose root logger has level root and
// whose other predefined loggers have none.
func NewRegistry(root slog.Level) *Registry {
	r := &Registry{loggers: map[string]*logger{}, levels: map[string]slog.Level{RootLogger: root}}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loggerLocked(RootLogger)
	for _, n := range predefined {
		r.loggerLocked(n)
	}
	r.resolveLocked()
	return r
}

// loggerLocked returns the named logger, creating it with its inherited
// level.
func (r *Registry) loggerLocked(name string) *logger {
	if l, ok := r.loggers[name]; ok {
		return l
	}
	l := &logger{}
	r.loggers[name] = l
	l.effective.Store(int64(r.resolveNameLocked(name)))
	return l
}

func (r *Registry) logger(name string) *logger {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loggerLocked(name)
}

// resolveNameLocked is Log4jController.resolveLevel: the logger's own
// level, else the nearest existing ancestor's along the dots, else root's.
func (r *Registry) resolveNameLocked(name string) slog.Level {
	for {
		if l, ok := r.levels[name]; ok {
			return l
		}
		i := strings.LastIndexByte(name, '.')
		if i <= 0 {
			return r.levels[RootLogger]
		}
		// Only existing loggers carry levels (SetLevel requires one).
		name = name[:i]
	}
}

func (r *Registry) resolveLocked() {
	for name, l := range r.loggers {
		l.effective.Store(int64(r.resolveNameLocked(name)))
	}
}

// Loggers returns every logger with the name of its effective level
// (Log4jController.loggers).
func (r *Registry) Loggers() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.loggers))
	for name, l := range r.loggers {
		out[name] = LevelName(slog.Level(l.effective.Load()))
	}
	return out
}

// Exists reports whether the named logger exists (Log4jController.loggerExists).
func (r *Registry) Exists(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.loggers[name]
	return ok
}

// SetLevel sets a logger's level (log4j's Level.toLevel: an unknown name
// means DEBUG); false if the logger does not exist or a name is blank.
func (r *Registry) SetLevel(name, level string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.loggers[name]; !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(level) == "" {
		return false
	}
	l, ok := parseLevel(strings.ToUpper(level))
	if !ok {
		l = LevelDebug
	}
	r.levels[name] = l
	r.resolveLocked()
	return true
}

// UnsetLevel removes a logger's own level, so it inherits again; false if
// the logger does not exist. Root keeps its level.
func (r *Registry) UnsetLevel(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.loggers[name]; !ok || strings.TrimSpace(name) == "" {
		return false
	}
	if name != RootLogger {
		delete(r.levels, name)
	}
	r.resolveLocked()
	return true
}

// Handler filters records by the level of the logger they belong to and
// passes the others to the inner handler. The inner handler should let
// every level through (the registry decides).
type Handler struct {
	inner slog.Handler
	reg   *Registry
	lg    *logger
}

// NewHandler returns a handler for the logger ServerLogger of reg;
// With("component", c) moves to LoggerFor(c), With("logger", n) to n.
func NewHandler(inner slog.Handler, reg *Registry) *Handler {
	return &Handler{inner: inner, reg: reg, lg: reg.logger(ServerLogger)}
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.lg.enabled(l) && h.inner.Enabled(ctx, l)
}

func (h *Handler) Handle(ctx context.Context, r slog.Record) error { return h.inner.Handle(ctx, r) }

func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	lg := h.lg
	for _, a := range attrs {
		switch a.Key {
		case "component":
			lg = h.reg.logger(LoggerFor(a.Value.String()))
		case "logger":
			lg = h.reg.logger(a.Value.String())
		}
	}
	return &Handler{inner: h.inner.WithAttrs(attrs), reg: h.reg, lg: lg}
}

func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), reg: h.reg, lg: h.lg}
}

// LowestEnabled is the lowest log4j level inner lets through: the root
// level a registry wrapped around an existing handler starts with.
func LowestEnabled(inner slog.Handler) slog.Level {
	for _, n := range levelNames[1 : len(levelNames)-1] {
		if inner.Enabled(context.Background(), n.level) {
			return n.level
		}
	}
	return LevelOff
}
