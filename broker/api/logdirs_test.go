package api

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
)

// logDirsFake answers both log dir APIs with one directory and records
// that it was reached.
type logDirsFake struct{ reached *int }

func (f logDirsFake) AlterReplicaLogDirs(_ context.Context, req *kmsg.AlterReplicaLogDirsRequest) *kmsg.AlterReplicaLogDirsResponse {
	*f.reached++
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
	rt.Topic = "t"
	rt.Partitions = append(rt.Partitions, kmsg.AlterReplicaLogDirsResponseTopicPartition{Partition: 0})
	resp.Topics = append(resp.Topics, rt)
	return resp
}

func (f logDirsFake) DescribeLogDirs(_ context.Context, req *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	*f.reached++
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	resp.Dirs = append(resp.Dirs, kmsg.DescribeLogDirsResponseDir{Dir: "/d"})
	return resp
}

// TestLogDirsAuthorization: AlterReplicaLogDirs needs Alter on the Cluster
// (else CLUSTER_AUTHORIZATION_FAILED for every partition, nothing moved),
// DescribeLogDirs Describe on the Cluster (else no directory at all, as
// KafkaApis 2.8 answers versions 0-2); both are advertised once wired.
func TestLogDirsAuthorization(t *testing.T) {
	acls := &aclScript{}
	acls.grant("User:admin", kmsg.ACLOperationAlter, kmsg.ACLResourceTypeCluster, clusterResource)
	acls.grant("User:admin", kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeCluster, clusterResource)
	var reached int
	a := New(Config{BrokerID: 1, LogDirs: logDirsFake{&reached}, Authorizer: acls, Logger: slog.New(slog.DiscardHandler)})
	a.SetReady()
	send := func(principal string, req kmsg.Request) kmsg.Response {
		resp, err := a.Handle(context.Background(), &network.Request{Key: req.Key(), Version: req.GetVersion(), Body: req,
			Listener: "PLAINTEXT", Session: &network.Session{Authenticated: true, Principal: principal},
			RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}})
		if err != nil {
			t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
		}
		return resp
	}
	if !a.enabled(34) || !a.enabled(35) {
		t.Fatal("log dir APIs not enabled")
	}
	alter := kmsg.NewPtrAlterReplicaLogDirsRequest()
	alter.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{{Dir: "/d", Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{
		{Topic: "t", Partitions: []int32{0, 1}}, {Topic: "u", Partitions: []int32{2}}}}}
	r := send("User:alice", alter).(*kmsg.AlterReplicaLogDirsResponse)
	if reached != 0 || len(r.Topics) != 2 || len(r.Topics[0].Partitions) != 2 || len(r.Topics[1].Partitions) != 1 {
		t.Fatalf("unauthorized alter: reached %d, %+v", reached, r.Topics)
	}
	for _, rt := range r.Topics {
		for _, p := range rt.Partitions {
			if p.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
				t.Fatalf("unauthorized alter of %s-%d: code %d", rt.Topic, p.Partition, p.ErrorCode)
			}
		}
	}
	desc := kmsg.NewPtrDescribeLogDirsRequest()
	if d := send("User:alice", desc).(*kmsg.DescribeLogDirsResponse); reached != 0 || len(d.Dirs) != 0 {
		t.Fatalf("unauthorized describe: reached %d, %+v", reached, d.Dirs)
	}
	if r := send("User:admin", alter).(*kmsg.AlterReplicaLogDirsResponse); reached != 1 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("authorized alter: %+v", r)
	}
	if d := send("User:admin", desc).(*kmsg.DescribeLogDirsResponse); reached != 2 || len(d.Dirs) != 1 {
		t.Fatalf("authorized describe: %+v", d)
	}
}
