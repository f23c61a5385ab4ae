package admintool

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestFail(t *testing.T) {
	specs := listSpec
	timeout := NewKafkaError(kerr.RequestTimedOut.Code, nil)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{Usagef("bad"), "bad\n" + Usage(specs)},
		{&CommandFailed{Msg: "2 replica(s) could not be elected"}, "Exception in thread \"main\" kafka.common.AdminCommandFailedException: 2 replica(s) could not be elected\n"},
		{&CommandFailed{Msg: "Admin command failed", Cause: &AdminOperation{Msg: "gone"}},
			"Exception in thread \"main\" kafka.common.AdminCommandFailedException: Admin command failed\nCaused by: kafka.admin.AdminOperationException: gone\n"},
		{&AdminOperation{Msg: "empty"}, "Exception in thread \"main\" kafka.admin.AdminOperationException: empty\n"},
		{&ExecutionError{Cause: timeout}, "Exception in thread \"main\" java.util.concurrent.ExecutionException: " + timeout.String() + "\n"},
		{errors.New("odd"), "Exception in thread \"main\" org.apache.kafka.common.KafkaException: odd\n"},
	} {
		var out bytes.Buffer
		if code := Fail(tc.err, specs, &out); code != 1 || out.String() != tc.want {
			t.Errorf("%v: %d %q, want %q", tc.err, code, out.String(), tc.want)
		}
	}
}

func TestElectionCallError(t *testing.T) {
	for _, tc := range []struct {
		code int16
		line string
	}{
		{kerr.RequestTimedOut.Code, "Timeout waiting for election results"},
		{kerr.ClusterAuthorizationFailed.Code, "Not authorized to perform leader election"},
	} {
		var out bytes.Buffer
		cause := NewKafkaError(tc.code, nil)
		err := ElectionCallError(&out, cause)
		var cf *CommandFailed
		if out.String() != tc.line+"\n" || !errors.As(err, &cf) || cf.Msg != tc.line || cf.Cause != error(cause) {
			t.Errorf("code %d: %q %v", tc.code, out.String(), err)
		}
	}
	var out bytes.Buffer
	other := NewKafkaError(kerr.UnknownServerError.Code, nil)
	var ee *ExecutionError
	if err := ElectionCallError(&out, other); out.Len() != 0 || !errors.As(err, &ee) || ee.Cause != error(other) {
		t.Errorf("other: %q %v", out.String(), err)
	}
}
