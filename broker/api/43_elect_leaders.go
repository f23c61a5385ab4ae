package api

// ElectLeaders (key 43), versions 0–2 (flexible from 2; v1 adds
// election_type and a top-level error).
//
// Behaviour (protocol.md §9.32, controller.md §12.1): only the active
// controller serves it — elsewhere every partition (v0) or the top level
// (v1+) answers NOT_CONTROLLER. election_type 0 = preferred (v0 is always
// preferred), 1 = unclean; topic_partitions null = every partition. Each
// partition gets the controller's outcome: NONE when the election moved
// leadership, ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION.

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaderElector is the controller's admin election entry point.
type LeaderElector interface {
	// ElectLeaders runs an election of kind (0 preferred, 1 unclean) for
	// partitions (nil = all) and returns each partition's outcome (nil =
	// elected).
	ElectLeaders(ctx context.Context, kind int8, partitions map[string][]int32) (map[string]map[int32]error, error)
}

func (a *Apis) handleElectLeaders(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ElectLeadersRequest)
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	kind := int8(0)
	if req.Version >= 1 {
		kind = req.ElectionType
	}
	var parts map[string][]int32
	if req.Topics != nil {
		parts = map[string][]int32{}
		for _, t := range req.Topics {
			parts[t.Topic] = append(parts[t.Topic], t.Partitions...)
		}
	}
	var outcomes map[string]map[int32]error
	var err error
	elector, ok := a.controller.(LeaderElector)
	switch {
	case a.controller == nil || !a.controller.IsActive() || !ok:
		err = fmt.Errorf("%w: this is not the correct controller for this cluster", kerr.NotController)
	case kind != 0 && kind != 1:
		err = fmt.Errorf("%w: unknown election type %d", kerr.InvalidRequest, kind)
	default:
		outcomes, err = elector.ElectLeaders(ctx, kind, parts)
	}
	if err != nil {
		code := a.errorCode(err, "leader election failed")
		if req.Version >= 1 {
			resp.ErrorCode = code
			return resp, nil
		}
		// v0 has no top-level error: every requested partition carries it.
		outcomes = map[string]map[int32]error{}
		for t, ps := range parts {
			outcomes[t] = map[int32]error{}
			for _, p := range ps {
				outcomes[t][p] = err
			}
		}
	}
	topics := make([]string, 0, len(outcomes))
	for t := range outcomes {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t
		ps := make([]int32, 0, len(outcomes[t]))
		for p := range outcomes[t] {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition = p
			if perr := outcomes[t][p]; perr != nil {
				var ke *kerr.Error
				if !errors.As(perr, &ke) {
					perr = fmt.Errorf("%w: %v", kerr.UnknownServerError, perr)
				}
				rp.ErrorCode, rp.ErrorMessage = a.codeMessage(perr, "leader election failed", "topic", t, "partition", p)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
