package main

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
)

// controllerFailover: the controller is the broker holding the ephemeral
// /controller; each election bumps /controller_epoch, and every request a
// controller sends carries its epoch, so once a broker has heard from the
// new controller it refuses the old one's (STALE_CONTROLLER_EPOCH).
func controllerFailover(s *Stage) string {
	s.Step("Start a throwaway ZooKeeper and three brokers.")
	s.StartBrokers(3, map[string]string{"min.insync.replicas": "2"})

	s.Step("Find the controller: the broker that created the ephemeral znode /controller first. /controller_epoch counts the elections so far.")
	s.ZkGet("/controller")
	s.ZkGet("/controller_epoch")
	oldCtrl, oldEpoch := s.controller()
	s.Say("Broker %d is the controller, in controller epoch %d.", oldCtrl, oldEpoch)

	others := make([]int32, 0, 2)
	for _, b := range s.brokers {
		if b.ID != oldCtrl {
			others = append(others, b.ID)
		}
	}
	s.Step("Create topic demo with one partition on all three brokers, the controller first in the replica list, so it is also the partition's leader.")
	assignment := fmt.Sprintf("%d:%d:%d", oldCtrl, others[0], others[1])
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.brokers[0].Addr, "--create", "--topic", "demo", "--replica-assignment", assignment)
	tp := common.TopicPartition{Topic: "demo", Partition: 0}
	before := s.waitPartition(tp, "broker %d leading demo-0 with all three in the ISR", func(st partState) bool {
		return st.Leader == oldCtrl && len(st.ISR) == 3
	}, oldCtrl)
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.brokers[0].Addr, "--describe", "--topic", "demo")

	s.Step("kill -9 the controller (broker %d, pid %d): no controlled shutdown, no goodbye. Its ZooKeeper session lives on until zookeeper.session.timeout.ms (3 s here) passes without a heartbeat.", oldCtrl, s.Broker(oldCtrl).Pid())
	killedAt := time.Now()
	s.Signal(s.Broker(oldCtrl), syscall.SIGKILL)

	s.Step("Watch /controller: when the session expires ZooKeeper deletes the ephemeral znode, the surviving brokers' watches fire and they race to create it; the winner bumps /controller_epoch in the same multi-op.")
	var newCtrl int32
	var newEpoch int32
	s.WaitFor(30*time.Second, "a new controller", func() bool {
		id, ok, err := s.zkc.GetController()
		if err != nil || !ok || id == oldCtrl {
			return false
		}
		e, _, ok, err := s.zkc.GetControllerEpoch()
		newCtrl, newEpoch = id, e
		return err == nil && ok && e > oldEpoch
	})
	s.Say("After %.1f s broker %d holds /controller:", time.Since(killedAt).Seconds(), newCtrl)
	s.ZkGet("/controller")
	s.ZkGet("/controller_epoch")
	if newEpoch != oldEpoch+1 {
		s.Failf("controller epoch went from %d to %d, not to %d", oldEpoch, newEpoch, oldEpoch+1)
	}

	s.Step("The new controller moves leadership of demo-0 away from the dead broker: it writes the partition state (leader, ISR, a new leader epoch, its controller epoch) to ZooKeeper and sends LeaderAndIsr to the replicas.")
	after := s.waitPartition(tp, "a new leader for demo-0 in a new leader epoch", func(st partState) bool {
		return st.Leader != oldCtrl && st.Leader >= 0 && st.LeaderEpoch > before.LeaderEpoch && st.ControllerEpoch == newEpoch
	}, newCtrl)
	s.ZkGet("/brokers/topics/demo/partitions/0/state")
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.Broker(newCtrl).Addr, "--describe", "--topic", "demo")

	s.Step("Now play the old controller, alive again after a long pause and unaware it was replaced: send broker %d a LeaderAndIsr in the old controller epoch %d telling it that broker %d leads demo-0 again (leader epoch %d).", after.Leader, oldEpoch, oldCtrl, after.LeaderEpoch+10)
	stale := s.sendLeaderAndIsr(s.Broker(after.Leader), oldCtrl, oldEpoch, tp, oldCtrl, after.LeaderEpoch+10, []int32{oldCtrl, others[0], others[1]})
	s.Say("Answer: error code %d (%s).", stale, errName(stale))
	if stale != kerr.StaleControllerEpoch.Code {
		s.Failf("a LeaderAndIsr in the old controller epoch %d was answered with %s, not STALE_CONTROLLER_EPOCH", oldEpoch, errName(stale))
	}
	s.Say("The broker remembers the highest controller epoch it has seen (%d) and refuses anything older; ZooKeeper writes of the old", newEpoch)
	s.Say("controller fail too, because every controller write checks the version of /controller_epoch.")
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.Broker(newCtrl).Addr, "--describe", "--topic", "demo")
	if st := s.partition(tp); st.Leader != after.Leader || st.LeaderEpoch != after.LeaderEpoch {
		s.Failf("the stale request changed demo-0: leader %d epoch %d, was leader %d epoch %d", st.Leader, st.LeaderEpoch, after.Leader, after.LeaderEpoch)
	}

	return fmt.Sprintf("controller %d -> %d, controller epoch %d -> %d, LeaderAndIsr in epoch %d refused with STALE_CONTROLLER_EPOCH",
		oldCtrl, newCtrl, oldEpoch, newEpoch, oldEpoch)
}

// controller reads /controller and /controller_epoch.
func (s *Stage) controller() (id, epoch int32) {
	id, ok, err := s.zkc.GetController()
	if err != nil || !ok {
		s.Failf("no /controller: %v", err)
	}
	epoch, _, ok, err = s.zkc.GetControllerEpoch()
	if err != nil || !ok {
		s.Failf("no /controller_epoch: %v", err)
	}
	return id, epoch
}

// partState is a partition's state znode.
type partState struct {
	Leader, LeaderEpoch, ControllerEpoch int32
	ISR                                  []int32
}

// partition reads /brokers/topics/<t>/partitions/<p>/state.
func (s *Stage) partition(tp common.TopicPartition) partState {
	st, ok, err := s.zkc.GetPartitionState(tp)
	if err != nil || !ok {
		return partState{Leader: -1}
	}
	isr := slices.Clone(st.ISR)
	slices.Sort(isr)
	return partState{Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ControllerEpoch: st.ControllerEpoch, ISR: isr}
}

// waitPartition waits until the partition's state znode satisfies cond
// and broker informed (a broker id, or -1) answers Metadata with the same
// leader, so the brokers have applied it too.
func (s *Stage) waitPartition(tp common.TopicPartition, what string, cond func(partState) bool, informed int32) partState {
	var st partState
	s.WaitFor(30*time.Second, fmt.Sprintf(what, informed), func() bool {
		st = s.partition(tp)
		if !cond(st) {
			return false
		}
		return informed < 0 || s.metadataLeader(s.Broker(informed), tp) == st.Leader
	})
	return st
}

// metadataLeader asks broker b (Metadata) for the partition's leader, -1
// when it does not know one.
func (s *Stage) metadataLeader(b *Broker, tp common.TopicPartition) int32 {
	resp := s.request(b, func() kmsg.Request {
		req := kmsg.NewPtrMetadataRequest()
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(tp.Topic)
		req.Topics = append(req.Topics, t)
		return req
	}())
	if resp == nil {
		return -1
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		for _, p := range t.Partitions {
			if p.Partition == tp.Partition && p.ErrorCode == 0 {
				return p.Leader
			}
		}
	}
	return -1
}

// request sends req to broker b alone and returns the response, nil when
// it could not be sent.
func (s *Stage) request(b *Broker, req kmsg.Request) kmsg.Response {
	cl := s.brokerClient(b)
	ctx, cancel := s.Context(5 * time.Second)
	defer cancel()
	resp, err := cl.Request(ctx, req)
	if err != nil {
		return nil
	}
	return resp
}

// brokerClient is a client that knows only broker b (so every request
// goes to b), made once per broker.
func (s *Stage) brokerClient(b *Broker) *kgo.Client {
	if b.client == nil {
		b.client = s.Client(kgo.SeedBrokers(b.Addr))
	}
	return b.client
}

// sendLeaderAndIsr sends one LeaderAndIsr as controller ctrl in epoch
// ctrlEpoch to broker b and returns the top-level error code.
func (s *Stage) sendLeaderAndIsr(b *Broker, ctrl, ctrlEpoch int32, tp common.TopicPartition, leader, leaderEpoch int32, replicas []int32) int16 {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 4
	req.ControllerID = ctrl
	req.ControllerEpoch = ctrlEpoch
	req.BrokerEpoch = -1
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Topic = tp.Topic
	ps.Partition = tp.Partition
	ps.ControllerEpoch = ctrlEpoch
	ps.Leader = leader
	ps.LeaderEpoch = leaderEpoch
	ps.ISR = replicas
	ps.Replicas = replicas
	req.PartitionStates = append(req.PartitionStates, ps)
	for _, id := range replicas {
		lb := kmsg.NewLeaderAndISRRequestLiveLeader()
		lb.BrokerID = id
		lb.Host = "127.0.0.1"
		lb.Port = int32(s.Broker(id).Port)
		req.LiveLeaders = append(req.LiveLeaders, lb)
	}
	ctx, cancel := s.Context(10 * time.Second)
	defer cancel()
	resp, err := s.brokerClient(b).Broker(int(b.ID)).Request(ctx, req)
	if err != nil {
		s.Failf("LeaderAndIsr to broker %d: %v", b.ID, err)
	}
	return resp.(*kmsg.LeaderAndISRResponse).ErrorCode
}

// errName is the protocol name of an error code ("NONE" for 0).
func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprint(code)
}
