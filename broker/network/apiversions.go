package network

import (
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// softwareRE is the pattern Kafka requires of ApiVersions v3+ client
// software names and versions: ASCII letters, digits, "-" and ".",
// starting and ending with a letter or digit.
var softwareRE = regexp.MustCompile(`^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$`)

// maxProbeKey bounds the key range we ask the Handler about. kmsg knows
// keys up to kmsg.MaxKey; anything beyond cannot be decoded anyway.
const maxProbeKey = kmsg.MaxKey

// kmsgKeys are the keys up to maxProbeKey that kmsg can decode, found
// once: kmsg.RequestForKey allocates a request each time it is asked,
// and ApiVersions is answered on every new connection.
var kmsgKeys = func() []int16 {
	var keys []int16
	for k := int16(0); k <= maxProbeKey; k++ {
		if kmsg.RequestForKey(k) != nil {
			keys = append(keys, k)
		}
	}
	return keys
}()

// ApiKeys lists every key h serves with its range, ascending by key, in the
// form of the ApiVersions response. The api layer may reuse it.
func ApiKeys(h Handler) []kmsg.ApiVersionsResponseApiKey {
	keys := make([]kmsg.ApiVersionsResponseApiKey, 0, len(kmsgKeys))
	for _, k := range kmsgKeys {
		min, max, ok := h.Versions(k)
		if !ok {
			continue
		}
		e := kmsg.NewApiVersionsResponseApiKey()
		e.ApiKey, e.MinVersion, e.MaxVersion = k, min, max
		keys = append(keys, e)
	}
	return keys
}

// ApiVersionsResponse builds the answer to a parsed ApiVersions request
// whose version is within range: the full key table, or INVALID_REQUEST
// with no keys when v3+ client software strings are malformed.
// Feature tags are left out: a ZooKeeper-mode broker finalizes no features.
func ApiVersionsResponse(h Handler, req *kmsg.ApiVersionsRequest) *kmsg.ApiVersionsResponse {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && (!softwareRE.MatchString(req.ClientSoftwareName) || !softwareRE.MatchString(req.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	resp.ApiKeys = ApiKeys(h)
	return resp
}

// apiVersionsFallback is the KIP-511 answer to an ApiVersions version above
// our maximum: a v0 body with UNSUPPORTED_VERSION and our ApiVersions range
// only, so the client can retry at a version we know.
func apiVersionsFallback(h Handler) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	min, max, _ := h.Versions(int16(kmsg.ApiVersions))
	e := kmsg.NewApiVersionsResponseApiKey()
	e.ApiKey, e.MinVersion, e.MaxVersion = int16(kmsg.ApiVersions), min, max
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{e}
	return resp
}
