package main

// scenario is one replay: its name on the command line, a one-line
// description for list, and the steps. run returns what held, printed in
// the final OK line.
type scenario struct {
	name string
	desc string
	run  func(s *Stage) string
}

// scenarios is the table list prints, in teaching order.
var scenarios = []scenario{
	{"controller-failover", "kill -9 the controller: /controller and /controller_epoch move, the old epoch is fenced", controllerFailover},
	{"hw-truncation", "two replicas lose power, the follower's tail is gone: truncating to the high watermark (IBP 0.10.2) diverges, leader epochs do not", hwTruncation},
	{"unclean-election", "the only ISR member dies: an out-of-sync replica leads with unclean.leader.election.enable=true and acknowledged records are gone; with false the partition stays offline", uncleanElection},
	{"isr-shrink-expand", "SIGSTOP a follower: it leaves the ISR after replica.lag.time.max.ms, the high watermark waits meanwhile; SIGCONT: it rejoins", isrShrinkExpand},
	{"acks", "acks=0, 1 and all with min.insync.replicas=2: a lost follower makes acks=all refuse (NOT_ENOUGH_REPLICAS); a lost leader loses acks=1 and acks=0 records", acks},
	{"idempotence", "an idempotent batch retried after its answer was lost is stored once; sequence numbers shown by kafka-dump-log", idempotence},
	{"segment-lookup", "find an offset: pick the segment by base offset, binary-search the sparse .index, scan the .log from there", segmentLookup},
	{"rebalance", "a group walks through all five states as members join, leave and time out; range, round-robin and sticky assignment", rebalance},
	{"legacy-consumer", "the --zookeeper consumer: /consumers/<g>/ids, owners and offsets in ZooKeeper, rebalanced by the members", legacyConsumer},
}

func lookup(name string) (scenario, bool) {
	for _, sc := range scenarios {
		if sc.name == name {
			return sc, true
		}
	}
	return scenario{}, false
}
