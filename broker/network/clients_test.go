package network_test

import (
	"context"
	"net"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/network"
)

// metaHandler serves ApiVersions (through the network layer) and Metadata
// from a real metadata cache: the connect path every client takes.
type metaHandler struct{ c *metadata.Cache }

func (h metaHandler) Versions(key int16) (int16, int16, bool) {
	switch key {
	case 3:
		return 0, 12, true
	case 18:
		return 0, 3, true
	}
	return 0, 0, false
}

func (h metaHandler) Handle(_ context.Context, req *network.Request) (kmsg.Response, error) {
	return h.c.MetadataResponse(req.Body.(*kmsg.MetadataRequest), req.Listener), nil
}

// startCluster starts one server whose cache lists it as broker 0 (and
// controller) with topic "orders" (3 partitions) and "__consumer_offsets".
func startCluster(t *testing.T) (string, *metadata.Cache) {
	t.Helper()
	cache := metadata.New(0, "test-cluster")
	s, err := network.NewServer(network.Config{Listeners: []network.ListenerConfig{{Name: "PLAINTEXT", Host: "127.0.0.1", SecurityProtocol: "PLAINTEXT"}}}, metaHandler{cache})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	addr := s.BoundAddr("PLAINTEXT").String()
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)

	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version, um.ControllerID, um.ControllerEpoch = 8, 0, 1
	lb := kmsg.NewUpdateMetadataRequestLiveBroker()
	lb.ID = 0
	ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
	ep.Host, ep.Port, ep.ListenerName = host, int32(port), "PLAINTEXT"
	lb.Endpoints = []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{ep}
	um.LiveBrokers = []kmsg.UpdateMetadataRequestLiveBroker{lb}
	for _, tp := range []struct {
		name string
		n    int32
	}{{"orders", 3}, {"__consumer_offsets", 1}} {
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = tp.name, [16]byte{byte(tp.n)}
		for p := int32(0); p < tp.n; p++ {
			ps := kmsg.NewUpdateMetadataRequestTopicPartition()
			ps.Partition, ps.Leader, ps.LeaderEpoch, ps.ISR, ps.Replicas = p, 0, 1, []int32{0}, []int32{0}
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		um.TopicStates = append(um.TopicStates, ts)
	}
	cache.Update(um)
	return addr, cache
}

func TestClientsConnectKgo(t *testing.T) {
	addr, _ := startCluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if md.Cluster != "test-cluster" || md.Controller != 0 || len(md.Brokers) != 1 {
		t.Fatalf("cluster %q controller %d brokers %v", md.Cluster, md.Controller, md.Brokers)
	}
	if d, ok := md.Topics["orders"]; !ok || len(d.Partitions) != 3 || d.Err != nil {
		t.Fatalf("orders: %+v", md.Topics["orders"])
	}
	if !md.Topics["__consumer_offsets"].IsInternal {
		t.Fatal("__consumer_offsets not internal")
	}
}

func TestClientsConnectSarama(t *testing.T) {
	addr, _ := startCluster(t)
	for _, v := range []sarama.KafkaVersion{sarama.V2_1_0_0, sarama.V2_4_0_0, sarama.V3_3_0_0} {
		t.Run(v.String(), func(t *testing.T) {
			cfg := sarama.NewConfig()
			cfg.Version = v
			cfg.Net.DialTimeout, cfg.Net.ReadTimeout, cfg.Net.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
			cfg.Metadata.Retry.Max = 1
			cl, err := sarama.NewClient([]string{addr}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			topics, err := cl.Topics()
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(topics)
			if len(topics) != 2 || topics[1] != "orders" {
				t.Fatalf("topics %v", topics)
			}
			parts, err := cl.Partitions("orders")
			if err != nil || len(parts) != 3 {
				t.Fatalf("partitions %v %v", parts, err)
			}
			ctrl, err := cl.Controller()
			if err != nil || ctrl.ID() != 0 {
				t.Fatalf("controller %v %v", ctrl, err)
			}
			leader, err := cl.Leader("orders", 2)
			if err != nil || leader.ID() != 0 {
				t.Fatalf("leader %v %v", leader, err)
			}
		})
	}
}

func TestClientsConnectKafkaGo(t *testing.T) {
	addr, _ := startCluster(t)
	// Conn path: ApiVersions v0 then Metadata.
	conn, err := kafkago.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	parts, err := conn.ReadPartitions("orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 || parts[0].Leader.ID != 0 {
		t.Fatalf("partitions %+v", parts)
	}
	ctrl, err := conn.Controller()
	if err != nil || ctrl.ID != 0 {
		t.Fatalf("controller %+v %v", ctrl, err)
	}

	// Transport path.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	cl := &kafkago.Client{Addr: kafkago.TCP(addr), Transport: tr}
	md, err := cl.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{"orders", "missing"}})
	if err != nil {
		t.Fatal(err)
	}
	if md.ClusterID != "test-cluster" || len(md.Topics) != 2 || len(md.Topics[0].Partitions) != 3 || md.Topics[1].Error == nil {
		t.Fatalf("metadata %+v", md)
	}
}
