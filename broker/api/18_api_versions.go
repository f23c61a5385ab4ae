package api

// ApiVersions (key 18), versions 0–3 (flexible from 3).
//
// Behaviour:
//   - lists every key this broker serves with the range of versions.go;
//   - v3+: client software name and version must match
//     [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?, else INVALID_REQUEST and no
//     keys (librdkafka then retries with v0);
//   - a version above our max is normally answered by the network layer with
//     the KIP-511 v0 fallback; if such a request still reaches us we answer the
//     same way (v0 body, UNSUPPORTED_VERSION, only our ApiVersions range);
//   - no KIP-584 feature tags: a ZooKeeper-mode broker finalizes no features.

import (
	"context"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var softwareNameRE = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

func (a *Apis) handleApiVersions(_ context.Context, r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if resp.Version > advertised[18].max {
		resp.Version = 0
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey = 18
		k.MinVersion = advertised[18].min
		k.MaxVersion = advertised[18].max
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{k}
		return resp, nil
	}
	if req.Version >= 3 && (!softwareNameRE.MatchString(req.ClientSoftwareName) ||
		!softwareNameRE.MatchString(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	resp.ApiKeys = a.apiKeys()
	return resp, nil
}
