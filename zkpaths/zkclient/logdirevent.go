package zkclient

import "github.com/klassik/klassik/zkpaths"

// PropagateLogDirEvent announces a failed log directory of brokerID (Kafka's
// KafkaZkClient.propagateLogDirEvent): one persistent sequential
// /log_dir_event_notification/log_dir_event_NNNNNNNNNN holding
// {"version":1,"broker":<id>,"event":1}. It returns the child name.
func (c *Client) PropagateLogDirEvent(brokerID int32) (string, error) {
	p, err := c.CreateRecursive(zkpaths.LogDirEventNotificationSeqPath(), zkpaths.EncodeLogDirEventNotification(brokerID), PersistentSequential)
	if err != nil {
		return "", err
	}
	return baseName(p), nil
}
