package broker

import (
	"log/slog"

	"github.com/klassik/klassik/broker/loglevels"
)

// WithLogLevels makes reg the broker's logger registry (the BROKER_LOGGER
// resource): logger must already go through a loglevels.Handler of reg,
// whose inner handler lets every level through (kafka-server's does).
// Without it, New wraps its logger in a registry whose root level is the
// lowest level that logger lets through.
func WithLogLevels(reg *loglevels.Registry) Option {
	return func(o *options) { o.logLevels = reg }
}

// setupLogLevels returns the broker's registry and the logger its
// components log through.
func setupLogLevels(reg *loglevels.Registry, logger *slog.Logger) (*loglevels.Registry, *slog.Logger) {
	if reg != nil {
		return reg, logger
	}
	reg = loglevels.NewRegistry(loglevels.LowestEnabled(logger.Handler()))
	return reg, slog.New(loglevels.NewHandler(logger.Handler(), reg))
}

// LogLevels is the broker's logger registry.
func (b *Broker) LogLevels() *loglevels.Registry { return b.logLevels }
