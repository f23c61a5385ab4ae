package zkpaths

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"time"
)

// RandomUUID returns a new random (version 4) UUID in Kafka's text form:
// the 16 big-endian bytes in base64url without padding (22 characters).
// Like org.apache.kafka.common.Uuid.randomUuid it never returns the reserved
// ids (all zero, and 0/1 "metadata topic") nor one starting with '-', which
// command-line tools would take for a flag.
func RandomUUID() string {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic("zkpaths: crypto/rand failed: " + err.Error())
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		s := base64.RawURLEncoding.EncodeToString(b[:])
		if s[0] == '-' || s == "AAAAAAAAAAAAAAAAAAAAAA" || s == "AAAAAAAAAAAAAAAAAAAAAQ" {
			continue
		}
		return s
	}
}

// ValidUUID reports whether s looks like a Kafka UUID string (22 chars of
// base64url decoding to 16 bytes).
func ValidUUID(s string) bool {
	if len(s) != 22 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 16
}

// EncodeClusterID is the data of /cluster/id (ClusterIdZNode.toJson):
// {"version":"1","id":"..."}; note the version is a string.
func EncodeClusterID(id string) []byte {
	return newObj().str("version", "1").str("id", id).bytes()
}

// DecodeClusterID reads /cluster/id.
func DecodeClusterID(data []byte) (string, error) {
	var v struct {
		ID *string `json:"id"`
	}
	if err := unmarshal("cluster id", data, &v); err != nil {
		return "", err
	}
	if v.ID == nil || *v.ID == "" {
		return "", fmt.Errorf("zkpaths: cluster id: missing id")
	}
	return *v.ID, nil
}

// ControllerInfo is the content of /controller (ControllerZNode).
type ControllerInfo struct {
	Version   int
	BrokerID  int32
	Timestamp int64
	// KRaftControllerEpoch is -1 for a ZooKeeper-mode controller; >= 0 when a
	// KRaft controller holds /controller during a migration. Version 1 nodes
	// carry no such field and decode as -1.
	KRaftControllerEpoch int32
}

// ControllerVersion is the /controller version we write (Kafka 3.4+).
const ControllerVersion = 2

// EncodeController writes a version 2 /controller node for a ZooKeeper-mode
// controller: {"version":2,"brokerid":1,"timestamp":"...","kraftControllerEpoch":-1}.
func EncodeController(brokerID int32, timestamp time.Time) []byte {
	return ControllerInfo{Version: ControllerVersion, BrokerID: brokerID, Timestamp: timestamp.UnixMilli(), KRaftControllerEpoch: -1}.Encode()
}

// Encode writes the node in the given Version (1 omits kraftControllerEpoch).
func (c ControllerInfo) Encode() []byte {
	o := newObj().int("version", int64(c.Version)).int("brokerid", int64(c.BrokerID)).
		str("timestamp", strconv.FormatInt(c.Timestamp, 10))
	if c.Version >= 2 {
		o.int("kraftControllerEpoch", int64(c.KRaftControllerEpoch))
	}
	return o.bytes()
}

// DecodeController reads /controller; only brokerid is required.
func DecodeController(data []byte) (ControllerInfo, error) {
	var v struct {
		Version   int       `json:"version"`
		BrokerID  *int32    `json:"brokerid"`
		Timestamp flexInt64 `json:"timestamp"`
		KRaft     *int32    `json:"kraftControllerEpoch"`
	}
	if err := unmarshal("controller", data, &v); err != nil {
		return ControllerInfo{}, err
	}
	if v.BrokerID == nil {
		return ControllerInfo{}, fmt.Errorf("zkpaths: controller: missing brokerid")
	}
	c := ControllerInfo{Version: v.Version, BrokerID: *v.BrokerID, Timestamp: v.Timestamp.V, KRaftControllerEpoch: -1}
	if v.KRaft != nil {
		c.KRaftControllerEpoch = *v.KRaft
	}
	return c, nil
}

// EncodeControllerEpoch is the data of /controller_epoch: a bare decimal.
func EncodeControllerEpoch(epoch int32) []byte { return strconv.AppendInt(nil, int64(epoch), 10) }

// DecodeControllerEpoch reads /controller_epoch.
func DecodeControllerEpoch(data []byte) (int32, error) {
	n, err := strconv.ParseInt(string(data), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("zkpaths: controller epoch %q: %w", data, err)
	}
	return int32(n), nil
}
