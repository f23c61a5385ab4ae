package admintool

import (
	"errors"
	"strings"
	"testing"

	"github.com/klassik/klassik/broker/common"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestParseOptions(t *testing.T) {
	specs := []Spec{{Name: "topic", HasArg: true, ArgName: "String: topic"}, {Name: "list"}}
	o, err := Parse(specs, []string{"--topic", "a", "--list", "--topic=b"})
	if err != nil || o.Value("topic") != "b" || !o.Has("list") || o.Has("nope") || strings.Join(o.Given(), ",") != "topic,list" ||
		strings.Join(o.Values("topic"), ",") != "a,b" || o.Values("nope") != nil {
		t.Fatalf("%+v %v", o, err)
	}
	if a, ok := o.OneOf([]string{"nope", "list"}); !ok || a != "list" {
		t.Errorf("one action: %q %v", a, ok)
	}
	if a, ok := o.OneOf([]string{"topic", "list"}); ok {
		t.Errorf("two actions accepted as %q", a)
	}
	for args, want := range map[string]string{
		"--top a":     "top is not a recognized option",
		"--list=x":    "Option list does not take an argument",
		"--topic":     "Option topic requires an argument",
		"positional":  "Found non-option argument 'positional'; all arguments must be options",
		"--list -- x": "Found non-option argument '--'; all arguments must be options",
	} {
		_, err := Parse(specs, strings.Fields(args))
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Msg != want {
			t.Errorf("%q: %v, want %q", args, err, want)
		}
	}
	u := Usage(specs)
	if !strings.HasPrefix(u, "Option                                  Description\n------                                  -----------\n--list") || !strings.Contains(u, "--topic <String: topic>") {
		t.Errorf("usage:\n%s", u)
	}
}

func TestKafkaError(t *testing.T) {
	msg := "broker says no"
	cases := []struct {
		code int16
		msg  *string
		want string
	}{
		{kerr.PreferredLeaderNotAvailable.Code, nil, "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available."},
		{kerr.EligibleLeadersNotAvailable.Code, &msg, "org.apache.kafka.common.errors.EligibleLeadersNotAvailableException: broker says no"},
		{kerr.InvalidReplicaAssignment.Code, &msg, "org.apache.kafka.common.errors.InvalidReplicaAssignmentException: broker says no"},
		{kerr.NoReassignmentInProgress.Code, &msg, "org.apache.kafka.common.errors.NoReassignmentInProgressException: broker says no"},
		{kerr.NotController.Code, &msg, "org.apache.kafka.common.errors.NotControllerException: broker says no"},
		{kerr.RequestTimedOut.Code, &msg, "org.apache.kafka.common.errors.TimeoutException: broker says no"},
	}
	for _, c := range cases {
		if got := NewKafkaError(c.code, c.msg).String(); got != c.want {
			t.Errorf("%d: %q, want %q", c.code, got, c.want)
		}
	}
	if NewKafkaError(0, &msg) != nil {
		t.Error("code 0 must be no error")
	}
	if got := JavaString(ClientError(errors.New("broker is too old; the broker has already indicated it will not know how to handle the request"), "ALTER_PARTITION_REASSIGNMENTS")); got != "org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not support ALTER_PARTITION_REASSIGNMENTS" {
		t.Errorf("too old: %q", got)
	}
	if !IsKafkaError(ClientError(kerr.ClusterAuthorizationFailed, "ELECT_LEADERS"), kerr.ClusterAuthorizationFailed.Code) {
		t.Error("kerr codes must map to their KafkaError")
	}
	if got := Uncaught("kafka.common.AdminCommandFailedException", "Admin command failed", "kafka.admin.AdminOperationException: busy"); got != "Exception in thread \"main\" kafka.common.AdminCommandFailedException: Admin command failed\nCaused by: kafka.admin.AdminOperationException: busy\n" {
		t.Errorf("uncaught: %q", got)
	}
}

func TestParsePartitionList(t *testing.T) {
	l, err := ParsePartitionList([]byte(`{"version":1,"partitions":[{"topic":"b","partition":2},{"topic":"a","partition":0},{"topic":"b","partition":2}]}`))
	if err != nil || JoinPartitions(l.Partitions, ",") != "a-0,b-2,b-2" || JoinPartitions(l.Duplicates, ",") != "b-2" {
		t.Fatalf("%+v %v", l, err)
	}
	if _, err := ParsePartitionList([]byte(`{"partitions":[]} trailing`)); !errors.Is(err, ErrNotJSON) {
		t.Errorf("trailing data: %v", err)
	}
	if _, err := ParsePartitionList([]byte(`[]`)); !errors.Is(err, ErrNotJSON) {
		t.Errorf("array: %v", err)
	}
	if _, err := ParsePartitionList([]byte(`{}`)); !errors.Is(err, ErrNoPartitions) {
		t.Errorf("no partitions: %v", err)
	}
	if _, err := ParsePartitionList([]byte(`{"partitions":{"topic":"a"}}`)); err == nil || !strings.Contains(err.Error(), "Expected JSON array") {
		t.Errorf("object partitions: %v", err)
	}
}

// FuzzParsePartitionList: the parser never panics; on success every
// duplicate is a listed partition and JoinPartitions round-trips the count.
func FuzzParsePartitionList(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"partitions":[{"topic":"t","partition":0}]}`,
		`{"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":0}]}`,
		`{"partitions":[{"topic":"t"}]}`,
		`{"partitions":null}`,
		`not json`,
		`{"partitions":[{"topic":"t","partition":99999999999}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParsePartitionList(data)
		if err != nil {
			return
		}
		seen := map[common.TopicPartition]bool{}
		for _, tp := range l.Partitions {
			seen[tp] = true
		}
		for _, d := range l.Duplicates {
			if !seen[d] {
				t.Fatalf("duplicate %v not listed", d)
			}
		}
		if len(l.Partitions) > 0 && len(strings.Split(JoinPartitions(l.Partitions, "\x00"), "\x00")) != len(l.Partitions) {
			t.Fatalf("join lost entries")
		}
	})
}
