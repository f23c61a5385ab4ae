package api

// AlterUserScramCredentials (key 51), version 0 (flexible).
//
// Behaviour (Kafka 2.8's KafkaApis + ZkAdminManager): only the active
// controller serves it (elsewhere every user gets NOT_CONTROLLER, and the
// client retries at the controller); ALTER on the Cluster is required
// (else CLUSTER_AUTHORIZATION_FAILED for every user). The client sends the
// salt and the salted password, never the password; the broker derives
// StoredKey and ServerKey from them and writes /config/users/<user>
// (other keys, such as quotas, untouched) with a change notification,
// which every broker's credential cache applies.
//
// Validation, per user (one result per user, whatever it asked):
//   - an empty name: UNACCEPTABLE_CREDENTIAL "Username must not be empty";
//   - an unknown mechanism: UNSUPPORTED_SASL_MECHANISM;
//   - iterations outside 4096..16384: UNACCEPTABLE_CREDENTIAL "Too few
//     iterations" / "Too many iterations";
//   - the same (user, mechanism) twice: DUPLICATE_RESOURCE;
//   - deleting a credential the user does not have: RESOURCE_NOT_FOUND;
//
// a user failing any check changes nothing; the others are written.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/zkpaths"
)

const (
	msgUnknownScramMechanism = "Unknown SCRAM mechanism"
	msgTooFewIterations      = "Too few iterations"
	msgTooManyIterations     = "Too many iterations"
	msgAlteredTwice          = "A user credential cannot be altered twice in the same request"
	msgDeleteMissing         = "Attempt to delete a user credential that does not exist"
)

// scramAlteration is one deletion (upsert nil) or upsertion of the request.
type scramAlteration struct {
	user   string
	mech   security.ScramMechanismType
	upsert *kmsg.AlterUserSCRAMCredentialsRequestUpsertion
}

func (a *Apis) handleAlterUserScramCredentials(ctx context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)

	// Deletions first, then upsertions: the order of Kafka's checks.
	var alts []scramAlteration
	for _, d := range req.Deletions {
		alts = append(alts, scramAlteration{user: d.Name, mech: security.ScramMechanismType(d.Mechanism)})
	}
	for i := range req.Upsertions {
		u := &req.Upsertions[i]
		alts = append(alts, scramAlteration{user: u.Name, mech: security.ScramMechanismType(u.Mechanism), upsert: u})
	}
	var users []string // each user once, in order of first appearance
	for _, alt := range alts {
		if !slices.Contains(users, alt.user) {
			users = append(users, alt.user)
		}
	}
	result := func(user string, code int16, msg *string) {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User, res.ErrorCode, res.ErrorMessage = user, code, msg
		resp.Results = append(resp.Results, res)
	}
	failAll := func(code int16, msg string) (kmsg.Response, error) {
		sorted := slices.Clone(users)
		slices.Sort(sorted)
		for _, u := range sorted {
			result(u, code, scramMsg(msg))
		}
		return resp, nil
	}
	if a.controller == nil || !a.controller.IsActive() {
		return failAll(kerr.NotController.Code, "This is not the correct controller for this cluster.")
	}
	if !a.authorize(ctx, r, kmsg.ACLOperationAlter, kmsg.ACLResourceTypeCluster, clusterResource) {
		return failAll(kerr.ClusterAuthorizationFailed.Code, msgClusterAuthFailed)
	}

	// Requests that are illegal on their face; the last verdict for a user
	// wins, upsertions after deletions, as in Kafka.
	illegal := map[string]string{}
	for _, alt := range alts {
		switch {
		case alt.user == "":
			illegal[alt.user] = msgUsernameEmpty
		case alt.mech != security.ScramSHA256 && alt.mech != security.ScramSHA512:
			illegal[alt.user] = msgUnknownScramMechanism
		case alt.upsert != nil && alt.upsert.Iterations < security.ScramMinIterations:
			illegal[alt.user] = msgTooFewIterations
		case alt.upsert != nil && alt.upsert.Iterations > security.ScramMaxIterations:
			illegal[alt.user] = msgTooManyIterations
		}
	}
	failed := map[string]bool{}
	for _, u := range users {
		msg, bad := illegal[u]
		if !bad {
			continue
		}
		code := kerr.UnacceptableCredential.Code
		if msg == msgUnknownScramMechanism {
			code = kerr.UnsupportedSaslMechanism.Code
		}
		result(u, code, scramMsg(msg))
		failed[u] = true
	}

	// The same credential altered twice.
	type pair struct {
		user string
		mech security.ScramMechanismType
	}
	seen := map[pair]int{}
	for _, alt := range alts {
		if !failed[alt.user] {
			seen[pair{alt.user, alt.mech}]++
		}
	}
	twice := map[string]bool{}
	for p, n := range seen {
		if n > 1 {
			twice[p.user] = true
		}
	}
	for _, u := range users {
		if twice[u] && !failed[u] {
			result(u, kerr.DuplicateResource.Code, scramMsg(msgAlteredTwice))
			failed[u] = true
		}
	}

	// Read the remaining users' configs, refuse deletions of missing
	// credentials, then apply and write.
	configs := map[string]zkpaths.UserConfig{}
	for _, u := range users {
		if failed[u] {
			continue
		}
		cfg, err := a.users.GetUserConfig(u)
		if err != nil {
			a.logger.Error("reading a user's SCRAM credentials failed", "user", u, "err", err)
			result(u, kerr.UnknownServerError.Code, scramMsg(msgUnknownServerError))
			failed[u] = true
			continue
		}
		configs[u] = cfg
	}
	for _, u := range users {
		if failed[u] {
			continue
		}
		for _, alt := range alts {
			if alt.user != u || alt.upsert != nil {
				continue
			}
			if _, ok := configs[u].Scram[security.ScramMechanismName(alt.mech)]; !ok {
				result(u, kerr.ResourceNotFound.Code, scramMsg(msgDeleteMissing))
				failed[u] = true
				break
			}
		}
	}
	var succeeded []string
	for _, u := range users {
		if failed[u] {
			continue
		}
		cfg := configs[u]
		ok := true
		for _, alt := range alts {
			if alt.user != u {
				continue
			}
			mech := security.ScramMechanismName(alt.mech)
			if alt.upsert == nil {
				delete(cfg.Scram, mech)
				continue
			}
			// An empty HMAC key is refused by Java's SecretKeySpec, which
			// Kafka reports as an unexpected error.
			if len(alt.upsert.SaltedPassword) == 0 {
				ok = false
				break
			}
			f, err := security.NewScramFormatter(mech)
			if err != nil {
				ok = false
				break
			}
			cfg.Scram[mech] = f.CredentialFromSaltedPassword(alt.upsert.Salt, alt.upsert.SaltedPassword, int(alt.upsert.Iterations)).String()
		}
		if !ok {
			result(u, kerr.UnknownServerError.Code, scramMsg(msgUnknownServerError))
			continue
		}
		if err := a.users.ChangeUserConfig(u, cfg); err != nil {
			a.logger.Error("writing a user's SCRAM credentials failed", "user", u, "err", err)
			result(u, kerr.UnknownServerError.Code, scramMsg(msgUnknownServerError))
			continue
		}
		succeeded = append(succeeded, u)
	}
	for _, u := range succeeded {
		result(u, 0, nil)
	}
	return resp, nil
}
