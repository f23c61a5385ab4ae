package main

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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
	// The new leader must have heard from the new controller before it is
	// sent the stale request, or it would rightly accept it.
	s.WaitFor(30*time.Second, "the new leader told by the new controller", func() bool {
		return s.metadataLeader(s.Broker(after.Leader), tp) == after.Leader
	})
	s.ZkGet("/brokers/topics/demo/partitions/0/state")
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.Broker(newCtrl).Addr, "--describe", "--topic", "demo")

	s.Step("Now play the old controller, alive again after a long pause and unaware it was replaced: send broker %d a LeaderAndIsr in the old controller epoch %d telling it that broker %d leads demo-0 again (leader epoch %d).", after.Leader, oldEpoch, oldCtrl, after.LeaderEpoch+10)
	stale := s.sendLeaderAndIsr(s.Broker(after.Leader), oldCtrl, oldEpoch, tp, oldCtrl, after.LeaderEpoch+10, []int32{oldCtrl, others[0], others[1]})
	s.Say("Answer: error code %d (%s).", stale, errName(stale))
	if stale != kerr.StaleControllerEpoch.Code {
		s.Failf("a LeaderAndIsr in the old controller epoch %d was answered with %s, not STALE_CONTROLLER_EPOCH", oldEpoch, errName(stale))
	}
	s.Say("The broker remembers the highest controller epoch it has seen (%d) and refuses anything older; ZooKeeper writes of the old controller fail too, because every controller write checks the version of /controller_epoch.", newEpoch)
	s.Tool("kafka-topics.sh", "--bootstrap-server", s.Broker(newCtrl).Addr, "--describe", "--topic", "demo")
	if st := s.partition(tp); st.Leader != after.Leader || st.LeaderEpoch != after.LeaderEpoch {
		s.Failf("the stale request changed demo-0: leader %d epoch %d, was leader %d epoch %d", st.Leader, st.LeaderEpoch, after.Leader, after.LeaderEpoch)
	}

	s.Step("Restart broker %d. It finds /controller taken and stays a plain broker; the controller sends it LeaderAndIsr in epoch %d, it follows broker %d, catches up and is added back to the ISR.", oldCtrl, newEpoch, after.Leader)
	s.Restart(s.Broker(oldCtrl))
	s.WaitFor(30*time.Second, fmt.Sprintf("broker %d back in the ISR of demo-0", oldCtrl), func() bool {
		return slices.Contains(s.partition(tp).ISR, oldCtrl)
	})
	s.Tool("kafka-topics.sh", "--zookeeper", s.ZooKeeperAddr(), "--describe", "--topic", "demo")
	if id, epoch := s.controller(); id != newCtrl || epoch != newEpoch {
		s.Failf("after the restart the controller is %d in epoch %d, want %d in epoch %d", id, epoch, newCtrl, newEpoch)
	}
	s.Say("/controller still names broker %d in epoch %d: a restarted broker does not take the controller back.", newCtrl, newEpoch)

	return fmt.Sprintf("controller %d -> %d, controller epoch %d -> %d, LeaderAndIsr in epoch %d refused with STALE_CONTROLLER_EPOCH, broker %d back in the ISR",
		oldCtrl, newCtrl, oldEpoch, newEpoch, oldEpoch, oldCtrl)
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
