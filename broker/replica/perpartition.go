package replica

import "github.com/twmb/franz-go/pkg/kmsg"

// topicOf is the shape every request and response topic of a
// per-partition API shares in kmsg (DeleteRecords, ListOffsets,
// OffsetForLeaderEpoch): a topic name, its partitions, tagged fields.
type topicOf[P any] struct {
	Topic       string
	Partitions  []P
	UnknownTags kmsg.Tags
}

// topicShape admits exactly the kmsg topic types shaped like topicOf[P].
type topicShape[P any] interface {
	~struct {
		Topic       string
		Partitions  []P
		UnknownTags kmsg.Tags
	}
}

// answerPerPartition appends to *resp, in request order, one response
// topic per requested topic holding answer's result for each of its
// partitions. Errors stay per partition: one bad partition never fails
// the others.
func answerPerPartition[ReqTopic topicShape[ReqPart], RespTopic topicShape[RespPart], ReqPart, RespPart any](
	req []ReqTopic, resp *[]RespTopic, answer func(topic string, p *ReqPart) RespPart,
) {
	for _, t := range req {
		rt := topicOf[ReqPart](t)
		st := topicOf[RespPart]{Topic: rt.Topic}
		for i := range rt.Partitions {
			st.Partitions = append(st.Partitions, answer(rt.Topic, &rt.Partitions[i]))
		}
		*resp = append(*resp, RespTopic(st))
	}
}
