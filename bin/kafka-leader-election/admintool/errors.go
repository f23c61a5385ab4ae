package admintool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// javaErrorsPackage is where Kafka's client keeps its ApiException classes.
const javaErrorsPackage = "org.apache.kafka.common.errors."

// exceptionNames lists the error codes whose Java class does not follow the
// CODE_NAME -> CodeNameException rule.
var exceptionNames = map[int16]string{
	kerr.UnknownServerError.Code:          "UnknownServerException",
	kerr.RequestTimedOut.Code:             "TimeoutException",
	kerr.InvalidTopicException.Code:       "InvalidTopicException",
	kerr.ClusterAuthorizationFailed.Code:  "ClusterAuthorizationException",
	kerr.TopicAuthorizationFailed.Code:    "TopicAuthorizationException",
	kerr.NotLeaderForPartition.Code:       "NotLeaderOrFollowerException",
	kerr.ReplicaNotAvailable.Code:         "ReplicaNotAvailableException",
	kerr.NetworkException.Code:            "NetworkException",
	kerr.CorruptMessage.Code:              "CorruptRecordException",
	kerr.PolicyViolation.Code:             "PolicyViolationException",
	kerr.InvalidRequest.Code:              "InvalidRequestException",
	kerr.UnsupportedVersion.Code:          "UnsupportedVersionException",
	kerr.ElectionNotNeeded.Code:           "ElectionNotNeededException",
	kerr.NoReassignmentInProgress.Code:    "NoReassignmentInProgressException",
	kerr.InvalidReplicaAssignment.Code:    "InvalidReplicaAssignmentException",
	kerr.ConcurrentTransactions.Code:      "ConcurrentTransactionsException",
	kerr.BrokerNotAvailable.Code:          "BrokerNotAvailableException",
	kerr.StaleControllerEpoch.Code:        "ControllerMovedException",
	kerr.ReassignmentInProgress.Code:      "ReassignmentInProgressException",
	kerr.GroupAuthorizationFailed.Code:    "GroupAuthorizationException",
	kerr.UnknownTopicOrPartition.Code:     "UnknownTopicOrPartitionException",
	kerr.PreferredLeaderNotAvailable.Code: "PreferredLeaderNotAvailableException",
	kerr.EligibleLeadersNotAvailable.Code: "EligibleLeadersNotAvailableException",
}

// KafkaError is a protocol error as the Java admin client raises it: the
// exception class, and the broker's message or else the code's default
// description.
type KafkaError struct {
	Code    int16
	Class   string // simple Java class name, e.g. PreferredLeaderNotAvailableException
	Message string
}

// Error is the exception's message alone (Throwable.getMessage).
func (e *KafkaError) Error() string { return e.Message }

// String is Throwable.toString: the qualified class name and the message.
func (e *KafkaError) String() string {
	if e.Message == "" {
		return javaErrorsPackage + e.Class
	}
	return javaErrorsPackage + e.Class + ": " + e.Message
}

// NewKafkaError maps an error code and the optional broker message to a
// KafkaError; code 0 yields nil.
func NewKafkaError(code int16, msg *string) *KafkaError {
	if code == 0 {
		return nil
	}
	ke := &KafkaError{Code: code}
	var kerrErr *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &kerrErr) {
		ke.Class = exceptionClass(kerrErr)
		// Kafka's default messages are sentences with a final period.
		ke.Message = strings.TrimSpace(kerrErr.Description)
		if ke.Message != "" && !strings.HasSuffix(ke.Message, ".") {
			ke.Message += "."
		}
	} else {
		ke.Class = "UnknownServerException"
		ke.Message = fmt.Sprintf("unknown error code %d", code)
	}
	if msg != nil && *msg != "" {
		ke.Message = *msg
	}
	return ke
}

func exceptionClass(e *kerr.Error) string {
	if n, ok := exceptionNames[e.Code]; ok {
		return n
	}
	var b strings.Builder
	for _, w := range strings.Split(strings.ToLower(e.Message), "_") {
		if w == "" {
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	name := b.String()
	if !strings.HasSuffix(name, "Exception") {
		name += "Exception"
	}
	return name
}

// UnsupportedAPI is the error the Java client raises when no broker knows an
// API ("The broker does not support ELECT_LEADERS").
func UnsupportedAPI(apiName string) *KafkaError {
	return &KafkaError{Code: kerr.UnsupportedVersion.Code, Class: "UnsupportedVersionException",
		Message: "The broker does not support " + apiName}
}

// ClientError turns an error from a franz-go request into what the Java
// admin client would have raised: an unknown API becomes
// UnsupportedVersionException, a deadline a TimeoutException, a kerr code
// its exception; anything else is returned unchanged.
func ClientError(err error, apiName string) error {
	if err == nil {
		return nil
	}
	var kerrErr *kerr.Error
	var opErr *net.OpError
	switch {
	case strings.Contains(err.Error(), "broker is too old"):
		return UnsupportedAPI(apiName)
	case errors.Is(err, context.DeadlineExceeded):
		return &KafkaError{Code: kerr.RequestTimedOut.Code, Class: "TimeoutException", Message: "Timed out waiting for a node assignment. Call: " + callName(apiName)}
	case errors.As(err, &opErr):
		// The Java client keeps retrying an unreachable cluster until its
		// timeout; franz-go gives up at once. Report the same timeout,
		// keeping the connection error.
		return &KafkaError{Code: kerr.RequestTimedOut.Code, Class: "TimeoutException",
			Message: "Timed out waiting for a node assignment. Call: " + callName(apiName) + " (" + err.Error() + ")"}
	case errors.As(err, &kerrErr):
		return NewKafkaError(kerrErr.Code, nil)
	}
	return err
}

// callName is the Java admin client's call name for an API, used in its
// timeout messages.
func callName(apiName string) string {
	parts := strings.Split(strings.ToLower(apiName), "_")
	for i := range parts {
		if i > 0 && parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// IsKafkaError reports whether err is a KafkaError with the given code.
func IsKafkaError(err error, code int16) bool {
	var ke *KafkaError
	return errors.As(err, &ke) && ke.Code == code
}

// Uncaught renders an exception that escapes a Kafka tool's main, as the JVM
// prints it on stderr (without the stack frames): the first line, then one
// "Caused by:" line per cause. Class names are fully qualified.
func Uncaught(class, msg string, causes ...string) string {
	var b strings.Builder
	b.WriteString(`Exception in thread "main" ` + class)
	if msg != "" {
		b.WriteString(": " + msg)
	}
	b.WriteByte('\n')
	for _, c := range causes {
		b.WriteString("Caused by: " + c + "\n")
	}
	return b.String()
}

// JavaString renders any error as Throwable.toString would for the class the
// Java tool would have raised: KafkaError with its class, anything else as
// a KafkaException.
func JavaString(err error) string {
	var ke *KafkaError
	if errors.As(err, &ke) {
		return ke.String()
	}
	var nf *NoSuchFile
	if errors.As(err, &nf) {
		return "java.nio.file.NoSuchFileException: " + nf.Path
	}
	return "org.apache.kafka.common.KafkaException: " + err.Error()
}

// NoSuchFile is Java's NoSuchFileException, raised by Kafka's
// Utils.readFileAsString for a missing file; its message is the path.
type NoSuchFile struct{ Path string }

func (e *NoSuchFile) Error() string { return e.Path }

// ReadFile reads a tool's input file; a missing file is a *NoSuchFile.
func ReadFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &NoSuchFile{Path: path}
	}
	return data, err
}
