package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/storage/record"
)

// idempotence: an idempotent producer numbers its batches per partition
// (producer id, epoch, sequence). The leader keeps the last five batches'
// sequences of every producer, so a batch sent again after its answer was
// lost is recognised and answered with the original offsets instead of
// being appended twice; a gap in the numbers is refused.
func idempotence(s *Stage) string {
	s.Step("Start a throwaway ZooKeeper and one broker, and create topic idem with one partition.")
	b := s.StartBrokers(1, nil)[0]
	s.Tool("kafka-topics.sh", "--bootstrap-server", b.Addr, "--create", "--topic", "idem", "--partitions", "1", "--replication-factor", "1")
	tp := common.TopicPartition{Topic: "idem", Partition: 0}
	s.waitPartition(tp, "broker %d leading idem-0", func(st partState) bool { return st.Leader == 1 }, 1)

	s.Step("Become an idempotent producer: InitProducerId hands out a producer id (from the block this broker reserved under /latest_producer_id_block) and epoch 0.")
	ipReq := kmsg.NewPtrInitProducerIDRequest()
	ipReq.TransactionTimeoutMillis = 60000
	resp := s.request(b, ipReq)
	if resp == nil {
		s.Failf("InitProducerId was not answered")
	}
	ip := resp.(*kmsg.InitProducerIDResponse)
	if ip.ErrorCode != 0 {
		s.Failf("InitProducerId: %s", errName(ip.ErrorCode))
	}
	pid, epoch := ip.ProducerID, ip.ProducerEpoch
	s.Say("producerId %d, producerEpoch %d.", pid, epoch)
	s.ZkGet("/latest_producer_id_block")

	batch := func(seq int32, values ...string) []byte {
		opts := record.DefaultBuildOptions()
		opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = pid, epoch, seq
		opts.BaseTimestamp = time.Now().UnixMilli()
		var recs []record.Record
		for i, v := range values {
			recs = append(recs, record.Record{OffsetDelta: int32(i), Value: []byte(v)})
		}
		return record.Build(opts, recs)
	}
	first := batch(0, "a", "b", "c")

	s.Step("Send a batch of three records a, b, c (sequences 0 to 2) with acks=all, and lose the answer: the connection is closed right after the request is written, as if the network dropped the response.")
	s.rawProduce(b, tp, first, false)
	s.WaitFor(10*time.Second, "the batch appended", func() bool { return s.logEndOffset(b, tp) == 3 })
	s.Say("The broker did append it (its log now ends at offset 3), but the producer never heard so.")

	s.Step("The producer retries: it sends exactly the same batch, same producer id, epoch and sequence 0, on a new connection.")
	code, base := s.rawProduce(b, tp, first, true)
	s.Say("Answer: error %s, base offset %d.", errName(code), base)
	if code != 0 || base != 0 {
		s.Failf("the retried batch was answered with %s at offset %d, want NONE at the original offset 0", errName(code), base)
	}
	leo := s.logEndOffset(b, tp)
	s.Say("The broker found sequences 0-2 of producer %d among the last batches it appended for it and answered with their original offsets without appending anything (Kafka 2.8 answers a duplicate this way, with no error; older versions said DUPLICATE_SEQUENCE_NUMBER).", pid)
	s.Say("The log still ends at %d.", leo)
	if leo != 3 {
		s.Failf("after the retry the log ends at %d: the batch was written twice", leo)
	}

	s.Step("The next batch carries record d with sequence 3, the one the broker expects next: appended at offset 3.")
	code, base = s.rawProduce(b, tp, batch(3, "d"), true)
	s.Say("Answer: error %s, base offset %d.", errName(code), base)
	if code != 0 || base != 3 {
		s.Failf("sequence 3 answered with %s at offset %d, want NONE at offset 3", errName(code), base)
	}

	s.Step("A batch with sequence 7 would mean batches 4 to 6 were lost on the way: the broker refuses it rather than leave a hole.")
	code, _ = s.rawProduce(b, tp, batch(7, "h"), true)
	s.Say("Answer: error %s.", errName(code))
	if code != kerr.OutOfOrderSequenceNumber.Code {
		s.Failf("sequence 7 after 3 answered with %s, want OUT_OF_ORDER_SEQUENCE_NUMBER", errName(code))
	}

	s.Step("The log holds each record once: two batches of producer %d, sequences 0-2 at offsets 0-2 and sequence 3 at offset 3.", pid)
	dump := s.Tool("kafka-dump-log.sh", "--files", s.segment(b, tp, 0), "--print-data-log")
	want := fmt.Sprintf("baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: %d producerEpoch: %d", pid, epoch)
	if !strings.Contains(dump, want) || strings.Count(dump, "| offset: ") != 4 {
		s.Failf("kafka-dump-log does not show the four records once each with their sequences")
	}
	return fmt.Sprintf("the retried batch of producer %d, sequences 0-2, kept its offset 0 and was stored once; 4 records in the log, a sequence gap refused", pid)
}

// rawProduce sends one Produce v7 (acks=all) of batch to broker b on a
// connection of its own. With wait it reads the answer and returns the
// partition's error code and base offset; without, it closes the
// connection as soon as the request is written, so the answer is lost.
func (s *Stage) rawProduce(b *Broker, tp common.TopicPartition, batch []byte, wait bool) (int16, int64) {
	conn, err := net.DialTimeout("tcp", b.Addr, 5*time.Second)
	if err != nil {
		s.Failf("connecting to broker %d: %v", b.ID, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = tp.Topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = tp.Partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	const correlationID = 1
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("klassik-scenario")).AppendRequest(nil, req, correlationID)
	if _, err := conn.Write(frame); err != nil {
		s.Failf("writing a produce request to broker %d: %v", b.ID, err)
	}
	if !wait {
		return 0, -1
	}
	// A v7 response has the v0 header: size, correlation id, body.
	var hdr [8]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		s.Failf("reading the produce response of broker %d: %v", b.ID, err)
	}
	size := int(binary.BigEndian.Uint32(hdr[:4]))
	if size < 4 || int32(binary.BigEndian.Uint32(hdr[4:])) != correlationID {
		s.Failf("a malformed produce response from broker %d", b.ID)
	}
	body := make([]byte, size-4)
	if _, err := io.ReadFull(conn, body); err != nil {
		s.Failf("reading the produce response of broker %d: %v", b.ID, err)
	}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.Version = req.Version
	if err := resp.ReadFrom(body); err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		s.Failf("decoding the produce response of broker %d: %v", b.ID, err)
	}
	p := resp.Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset
}
