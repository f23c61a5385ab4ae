package faulttest

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/storage/record"
)

// ProduceDirect sends one Produce v7 request (acks=-1, one record holding
// value) straight to the broker at addr, bypassing any client metadata, and
// returns the partition's error code and base offset. It is how a test
// talks to a broker that may wrongly believe it still leads (a zombie).
func ProduceDirect(addr, topic string, partition int32, value []byte, timeout time.Duration) (int16, int64, error) {
	return ProduceDirectNotify(addr, topic, partition, value, timeout, nil)
}

// ProduceDirectNotify is ProduceDirect calling written (if not nil) once
// the request has been written to the connection, before it waits for the
// answer: a test that pauses the broker can then continue it knowing the
// request is already in the broker's socket buffer.
func ProduceDirectNotify(addr, topic string, partition int32, value []byte, timeout time.Duration, written func()) (int16, int64, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout + 10*time.Second)); err != nil {
		return 0, 0, err
	}
	opts := record.DefaultBuildOptions()
	opts.BaseTimestamp = time.Now().UnixMilli()
	batch := record.Build(opts, []record.Record{{Value: value}})

	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = -1
	req.TimeoutMillis = int32(timeout / time.Millisecond)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	const correlationID = 7
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("faulttest-zombie-probe")).AppendRequest(nil, req, correlationID)
	if _, err := conn.Write(frame); err != nil {
		return 0, 0, err
	}
	if written != nil {
		written()
	}
	body, err := readResponseFrame(conn, correlationID)
	if err != nil {
		return 0, 0, err
	}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.Version = req.Version
	if err := resp.ReadFrom(body); err != nil {
		return 0, 0, fmt.Errorf("decoding produce response: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, 0, fmt.Errorf("produce response for %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset, nil
}

// readResponseFrame reads one size-prefixed response with a v0 header (a
// non-flexible request) and returns the body after the correlation id.
func readResponseFrame(r io.Reader, correlationID int32) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	body, err := decodeResponseFrame(hdr, r)
	if err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != correlationID {
		return nil, fmt.Errorf("response correlation id %d, want %d", got, correlationID)
	}
	return body[4:], nil
}

// decodeResponseFrame reads the frame whose 4-byte size is hdr. Invariants
// (FuzzDecodeResponseFrame): no panic, no allocation beyond the 64 MiB cap,
// and the returned body holds at least the correlation id.
func decodeResponseFrame(hdr [4]byte, r io.Reader) ([]byte, error) {
	n := int32(binary.BigEndian.Uint32(hdr[:]))
	if n < 4 || n > 64<<20 {
		return nil, fmt.Errorf("response frame size %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}
