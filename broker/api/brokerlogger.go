package api

// BROKER_LOGGER (config resource type 8): the broker's loggers and their
// levels, as Kafka 2.8's ConfigHelper (describe) and ZkAdminManager
// (incremental alter) serve them through Log4jController. Klassik's
// loggers are broker/loglevels' registry.
//
// Behaviour:
//   - DescribeConfigs: the resource name must be this broker's id ("" →
//     "Broker id must not be empty", not an integer → "Broker id must be an
//     integer, but it is: x", another id → "Unexpected broker id, expected
//     1 but received 2", all INVALID_REQUEST); every logger with its
//     effective level (root included), source DYNAMIC_BROKER_LOGGER_CONFIG,
//     not sensitive, not read-only, no synonyms; configuration_keys filter
//     the names;
//   - IncrementalAlterConfigs: "" names no broker and is accepted, as in
//     Kafka; another id → INVALID_REQUEST "Unexpected broker id, expected 1,
//     but received 2"; every operation is validated before any applies:
//     SET needs an existing logger and one of FATAL, ERROR, WARN, INFO,
//     DEBUG, TRACE; DELETE an existing logger other than root; APPEND and
//     SUBTRACT are refused; a failed check answers INVALID_REQUEST with
//     Kafka's text ("Invalid config value for resource
//     ConfigResource(type=BROKER_LOGGER, name='1'): Logger x does not
//     exist!"); validate_only stops after the checks;
//   - AlterConfigs (33) refuses the type: "AlterConfigs is only supported
//     for topics and brokers, but resource type is BROKER_LOGGER".

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/loglevels"
)

// brokerLoggerError is an INVALID_REQUEST answered with Kafka's exact
// error_message.
type brokerLoggerError struct{ msg string }

func (e *brokerLoggerError) Error() string { return e.msg }
func (e *brokerLoggerError) Unwrap() error { return kerr.InvalidRequest }

func brokerLoggerErrorf(format string, args ...any) error {
	return &brokerLoggerError{fmt.Sprintf(format, args...)}
}

// errAlterConfigsBrokerLogger is AlterConfigs' (33) answer for a
// BROKER_LOGGER resource.
var errAlterConfigsBrokerLogger = brokerLoggerErrorf("AlterConfigs is only supported for topics and brokers, but resource type is BROKER_LOGGER")

// brokerLoggerResource is Kafka's ConfigResource.toString for the type.
func brokerLoggerResource(name string) string {
	return fmt.Sprintf("ConfigResource(type=BROKER_LOGGER, name='%s')", name)
}

// brokerIDOf is ZkAdminManager.resourceNameToBrokerId.
func brokerIDOf(name string) (int32, error) {
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return 0, brokerLoggerErrorf("Broker id must be an integer, but it is: %s", name)
	}
	return int32(id), nil
}

// describeBrokerLogger answers DescribeConfigs for BROKER_LOGGER.
func (a *Apis) describeBrokerLogger(name string, keys []string) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	if name == "" {
		return nil, brokerLoggerErrorf("Broker id must not be empty")
	}
	id, err := brokerIDOf(name)
	if err != nil {
		return nil, err
	}
	if id != a.brokerID {
		return nil, brokerLoggerErrorf("Unexpected broker id, expected %d but received %s", a.brokerID, name)
	}
	loggers := a.logLevels.Loggers()
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for _, n := range slices.Sorted(maps.Keys(loggers)) {
		if keys != nil && !slices.Contains(keys, n) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		level := loggers[n]
		c.Name, c.Value, c.Source = n, &level, kmsg.ConfigSourceDynamicBrokerLoggerConfig
		c.ConfigSynonyms = []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{}
		out = append(out, c)
	}
	return out, nil
}

// alterBrokerLogger applies IncrementalAlterConfigs' operations on a
// BROKER_LOGGER resource: all are checked, then (unless validateOnly) all
// applied in order.
func (a *Apis) alterBrokerLogger(name string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, validateOnly bool) error {
	if name != "" {
		id, err := brokerIDOf(name)
		if err != nil {
			return err
		}
		if id != a.brokerID {
			return brokerLoggerErrorf("Unexpected broker id, expected %d, but received %s", a.brokerID, name)
		}
	}
	count := map[string]int{}
	var dups, nulls []string
	for _, op := range ops {
		if count[op.Name]++; count[op.Name] == 2 {
			dups = append(dups, op.Name)
		}
		if op.Value == nil && op.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, opName(op.Op)+":"+op.Name)
		}
	}
	if len(dups) > 0 {
		return brokerLoggerErrorf("Error due to duplicate config keys : %s", strings.Join(dups, ","))
	}
	if len(nulls) > 0 {
		return brokerLoggerErrorf("Null value not supported for : %s", strings.Join(nulls, ","))
	}
	invalid := func(format string, args ...any) error {
		return brokerLoggerErrorf("Invalid config value for resource %s: %s", brokerLoggerResource(name), fmt.Sprintf(format, args...))
	}
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if !a.logLevels.Exists(op.Name) {
				return invalid("Logger %s does not exist!", op.Name)
			}
			if !loglevels.IsValidLevel(*op.Value) {
				return invalid("Cannot set the log level of %s to %s as it is not a supported log level. Valid log levels are %s",
					op.Name, *op.Value, loglevels.ValidLevels())
			}
		case kmsg.IncrementalAlterConfigOpDelete:
			if !a.logLevels.Exists(op.Name) {
				return invalid("Logger %s does not exist!", op.Name)
			}
			if op.Name == loglevels.RootLogger {
				return brokerLoggerErrorf("Removing the log level of the %s logger is not allowed", loglevels.RootLogger)
			}
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			return brokerLoggerErrorf("%s operation is not allowed for the BROKER_LOGGER resource", opName(op.Op))
		default:
			return brokerLoggerErrorf("Unknown alter config operation %d for %s", op.Op, op.Name)
		}
	}
	if validateOnly {
		return nil
	}
	for _, op := range ops {
		if op.Op == kmsg.IncrementalAlterConfigOpSet {
			a.logger.Info("updating the log level", "logger", op.Name, "level", *op.Value)
			a.logLevels.SetLevel(op.Name, *op.Value)
		} else {
			a.logger.Info("unset the log level", "logger", op.Name)
			a.logLevels.UnsetLevel(op.Name)
		}
	}
	return nil
}
