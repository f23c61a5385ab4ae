package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// errorCode maps a Go error to the Kafka error code a response carries
// at the protocol edge: lower layers return (possibly wrapped) kerr values for
// protocol outcomes; anything else is an internal failure, answered with
// UNKNOWN_SERVER_ERROR and logged so the operator sees the cause.
func (a *Apis) errorCode(err error, msg string, attrs ...any) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	}
	a.logger.Error(msg, append(attrs, "err", err)...)
	return kerr.UnknownServerError.Code
}

// codeMessage returns the code for err and the error_message field Kafka
// fills next to it: the text of the error when there is one, else null
// (also for an error whose text is empty, such as a denial Kafka answers
// without a message).
func (a *Apis) codeMessage(err error, msg string, attrs ...any) (int16, *string) {
	code := a.errorCode(err, msg, attrs...)
	if code == 0 {
		return 0, nil
	}
	s := err.Error()
	if s == "" {
		return code, nil
	}
	return code, &s
}
