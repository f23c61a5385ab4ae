package api

// DescribeUserScramCredentials (key 50), version 0 (flexible).
//
// Behaviour (Kafka 2.8's KafkaApis + ZkAdminManager): any broker answers,
// reading /config/users/<user> from ZooKeeper; DESCRIBE on the Cluster is
// required (else the top-level CLUSTER_AUTHORIZATION_FAILED). No users (null
// or empty) describes every user that has a SCRAM credential, sorted by
// name. Named users are answered once each, in request order: an empty
// name is RESOURCE_NOT_FOUND "Username must not be empty", a name asked
// twice DUPLICATE_RESOURCE, a user without credentials RESOURCE_NOT_FOUND.
// Each credential is described by mechanism and iterations only, in
// mechanism order (SCRAM-SHA-256, SCRAM-SHA-512); the salt and keys never
// leave the broker.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// UserCredentialStore is the ZooKeeper side of the SCRAM credential APIs:
// /config/users/<user>, as *zkclient.Client reads and changes it.
type UserCredentialStore interface {
	// GetUserConfig reads user's node (empty when absent).
	GetUserConfig(user string) (zkpaths.UserConfig, error)
	// GetAllUserConfigs reads every user node by user name; nodes that do
	// not decode are returned in bad instead.
	GetAllUserConfigs() (users map[string]zkpaths.UserConfig, bad map[string]error, err error)
	// ChangeUserConfig writes user's whole config and a change
	// notification for it.
	ChangeUserConfig(user string, u zkpaths.UserConfig) error
}

var _ UserCredentialStore = (*zkclient.Client)(nil)

// Kafka's texts for these outcomes.
const (
	msgUsernameEmpty        = "Username must not be empty"
	msgDescribeProcessing   = "Error processing describe user SCRAM credential configs request"
	msgDescribeMissingUser  = "Attempt to describe a user credential that does not exist"
	msgClusterAuthFailed    = "Cluster authorization failed."
	msgUnknownServerError   = "The server experienced an unexpected error when processing the request."
	msgDescribeDuplicateFmt = "Cannot describe SCRAM credentials for the same user twice in a single request: "
)

func (a *Apis) handleDescribeUserScramCredentials(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !a.authorize(ctx, r, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeCluster, clusterResource) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		resp.ErrorMessage = scramMsg(msgClusterAuthFailed)
		return resp, nil
	}
	if len(req.Users) == 0 {
		users, bad, err := a.users.GetAllUserConfigs()
		if err != nil {
			a.logger.Error(msgDescribeProcessing, "err", err)
			resp.ErrorCode, resp.ErrorMessage = kerr.UnknownServerError.Code, scramMsg(msgUnknownServerError)
			return resp, nil
		}
		for name, err := range bad {
			a.logger.Warn("describing SCRAM credentials: skipping an unreadable user config", "entity", name, "err", err)
		}
		names := make([]string, 0, len(users))
		for u := range users {
			names = append(names, u)
		}
		sort.Strings(names)
		for _, u := range names {
			if res, ok := describeUserCredentials(u, users[u]); ok {
				resp.Results = append(resp.Results, res)
			}
		}
		return resp, nil
	}

	count := map[string]int{}
	for _, u := range req.Users {
		count[u.Name]++
	}
	done := map[string]bool{}
	for _, ru := range req.Users {
		u := ru.Name
		if done[u] {
			continue
		}
		done[u] = true
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = u
		switch {
		case u == "":
			res.ErrorCode, res.ErrorMessage = kerr.ResourceNotFound.Code, scramMsg(msgUsernameEmpty)
		case count[u] > 1:
			res.ErrorCode, res.ErrorMessage = kerr.DuplicateResource.Code, scramMsg(msgDescribeDuplicateFmt+u)
		default:
			cfg, err := a.users.GetUserConfig(u)
			if err != nil {
				a.logger.Error(msgDescribeProcessing, "user", u, "err", err)
				res.ErrorCode, res.ErrorMessage = kerr.UnknownServerError.Code, scramMsg(msgUnknownServerError)
				break
			}
			described, ok := describeUserCredentials(u, cfg)
			if !ok {
				res.ErrorCode, res.ErrorMessage = kerr.ResourceNotFound.Code, scramMsg(msgDescribeMissingUser+": "+u)
				break
			}
			res = described
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}

// describeUserCredentials describes user's credentials; ok is false when
// the user has none. A credential string that does not parse fails the
// user with UNKNOWN_SERVER_ERROR, as Kafka's parse exception does.
func describeUserCredentials(user string, cfg zkpaths.UserConfig) (kmsg.DescribeUserSCRAMCredentialsResponseResult, bool) {
	res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
	res.User = user
	if len(cfg.Scram) == 0 {
		return res, false
	}
	for _, mech := range security.ScramMechanisms {
		s, ok := cfg.Scram[mech]
		if !ok {
			continue
		}
		cred, err := security.ParseScramCredential(s)
		if err != nil {
			res.CredentialInfos = nil
			res.ErrorCode, res.ErrorMessage = kerr.UnknownServerError.Code, scramMsg(msgUnknownServerError)
			return res, true
		}
		ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
		ci.Mechanism = int8(security.ScramMechanismTypeOf(mech))
		ci.Iterations = int32(cred.Iterations)
		res.CredentialInfos = append(res.CredentialInfos, ci)
	}
	return res, true
}

// scramMsg is an error message field of the SCRAM credential responses.
func scramMsg(s string) *string { return &s }
