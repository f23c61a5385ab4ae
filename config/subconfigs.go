package config

import "time"

// Narrow views of Config for components, never the whole struct: each component gets
// only the settings it reads, already converted to Go types and with Kafka's
// fallbacks applied.

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// ZooKeeperConfig is what the ZooKeeper client needs.
type ZooKeeperConfig struct {
	Connect             string        // zookeeper.connect, chroot included
	SessionTimeout      time.Duration // zookeeper.session.timeout.ms
	ConnectionTimeout   time.Duration // zookeeper.connection.timeout.ms (falls back to the session timeout)
	MaxInFlightRequests int           // zookeeper.max.in.flight.requests
}

// ZooKeeper returns the ZooKeeper client settings.
func (c *Config) ZooKeeper() ZooKeeperConfig {
	return ZooKeeperConfig{
		Connect:             c.ZookeeperConnect,
		SessionTimeout:      ms(int64(c.ZookeeperSessionTimeoutMs)),
		ConnectionTimeout:   ms(int64(c.EffectiveZookeeperConnectionTimeoutMs())),
		MaxInFlightRequests: int(c.ZookeeperMaxInFlightRequests),
	}
}

// SocketServerConfig is what the network layer needs.
type SocketServerConfig struct {
	Listeners               []Endpoint    // listeners (bind addresses)
	SendBufferBytes         int           // socket.send.buffer.bytes (-1: OS default)
	ReceiveBufferBytes      int           // socket.receive.buffer.bytes (-1: OS default)
	RequestMaxBytes         int32         // socket.request.max.bytes
	MaxConnectionsPerIP     int           // max.connections.per.ip
	MaxConnections          int           // max.connections
	ConnectionsMaxIdle      time.Duration // connections.max.idle.ms
	QueuedMaxRequests       int           // queued.max.requests
	InterBrokerListenerName string        // effective inter-broker listener
}

// SocketServer returns the network settings.
func (c *Config) SocketServer() SocketServerConfig {
	return SocketServerConfig{
		Listeners:               c.ListenerEndpoints(),
		SendBufferBytes:         int(c.SocketSendBufferBytes),
		ReceiveBufferBytes:      int(c.SocketReceiveBufferBytes),
		RequestMaxBytes:         c.SocketRequestMaxBytes,
		MaxConnectionsPerIP:     int(c.MaxConnectionsPerIP),
		MaxConnections:          int(c.MaxConnections),
		ConnectionsMaxIdle:      ms(c.ConnectionsMaxIdleMs),
		QueuedMaxRequests:       int(c.QueuedMaxRequests),
		InterBrokerListenerName: c.EffectiveInterBrokerListenerName(),
	}
}

// ControllerConfig is what the controller needs.
type ControllerConfig struct {
	BrokerID                           int32
	SocketTimeout                      time.Duration // controller.socket.timeout.ms
	RequestTimeout                     time.Duration // request.timeout.ms
	DeleteTopicEnable                  bool          // delete.topic.enable
	AutoLeaderRebalanceEnable          bool          // auto.leader.rebalance.enable
	LeaderImbalancePerBrokerPercentage int           // leader.imbalance.per.broker.percentage
	LeaderImbalanceCheckInterval       time.Duration // leader.imbalance.check.interval.seconds
	UncleanLeaderElectionEnable        bool          // unclean.leader.election.enable (broker default)
	DefaultReplicationFactor           int           // default.replication.factor
	NumPartitions                      int           // num.partitions
	InterBrokerListenerName            string        // listener used to reach brokers
	InterBrokerProtocolVersion         string        // inter.broker.protocol.version
}

// Controller returns the controller settings.
func (c *Config) Controller() ControllerConfig {
	return ControllerConfig{
		BrokerID:                           c.BrokerID,
		SocketTimeout:                      ms(int64(c.ControllerSocketTimeoutMs)),
		RequestTimeout:                     ms(int64(c.RequestTimeoutMs)),
		DeleteTopicEnable:                  c.DeleteTopicEnable,
		AutoLeaderRebalanceEnable:          c.AutoLeaderRebalanceEnable,
		LeaderImbalancePerBrokerPercentage: int(c.LeaderImbalancePerBrokerPercentage),
		LeaderImbalanceCheckInterval:       time.Duration(c.LeaderImbalanceCheckIntervalSeconds) * time.Second,
		UncleanLeaderElectionEnable:        c.UncleanLeaderElectionEnable,
		DefaultReplicationFactor:           int(c.DefaultReplicationFactor),
		NumPartitions:                      int(c.NumPartitions),
		InterBrokerListenerName:            c.EffectiveInterBrokerListenerName(),
		InterBrokerProtocolVersion:         c.InterBrokerProtocolVersion,
	}
}

// ControlledShutdownConfig is what the broker's shutdown sequence needs.
type ControlledShutdownConfig struct {
	Enable       bool          // controlled.shutdown.enable
	MaxRetries   int           // controlled.shutdown.max.retries
	RetryBackoff time.Duration // controlled.shutdown.retry.backoff.ms
}

// ControlledShutdown returns the controlled-shutdown settings.
func (c *Config) ControlledShutdown() ControlledShutdownConfig {
	return ControlledShutdownConfig{
		Enable:       c.ControlledShutdownEnable,
		MaxRetries:   int(c.ControlledShutdownMaxRetries),
		RetryBackoff: ms(c.ControlledShutdownRetryBackoffMs),
	}
}

// ReplicaConfig is what the replica manager and fetchers need.
type ReplicaConfig struct {
	BrokerID                         int32
	LagTimeMax                       time.Duration // replica.lag.time.max.ms
	SocketTimeout                    time.Duration // replica.socket.timeout.ms
	SocketReceiveBufferBytes         int           // replica.socket.receive.buffer.bytes
	FetchMaxBytes                    int32         // replica.fetch.max.bytes
	FetchWaitMax                     time.Duration // replica.fetch.wait.max.ms
	FetchMinBytes                    int32         // replica.fetch.min.bytes
	FetchResponseMaxBytes            int32         // replica.fetch.response.max.bytes
	FetchBackoff                     time.Duration // replica.fetch.backoff.ms
	NumFetchers                      int           // num.replica.fetchers
	HighWatermarkCheckpointInterval  time.Duration // replica.high.watermark.checkpoint.interval.ms
	MinInsyncReplicas                int           // min.insync.replicas (broker default)
	UncleanLeaderElectionEnable      bool          // unclean.leader.election.enable (broker default)
	FetchPurgatoryPurgeInterval      int           // fetch.purgatory.purge.interval.requests
	ProducerPurgatoryPurgeInterval   int           // producer.purgatory.purge.interval.requests
	DeleteRecordsPurgatoryPurgeInter int           // delete.records.purgatory.purge.interval.requests
	InterBrokerListenerName          string
	RequestTimeout                   time.Duration // request.timeout.ms
	// OffsetForLeaderEpoch: inter.broker.protocol.version is 0.11.0-IV2 or
	// later, so a new follower truncates by leader epoch; false makes it
	// truncate to its own high watermark, as Kafka did before 0.11.
	OffsetForLeaderEpoch bool
	// LastFetchedEpoch: inter.broker.protocol.version is 2.7-IV1 or later,
	// so follower fetches carry the epoch of their last batch.
	LastFetchedEpoch bool
}

// Replica returns the replication settings.
func (c *Config) Replica() ReplicaConfig {
	return ReplicaConfig{
		BrokerID:                         c.BrokerID,
		LagTimeMax:                       ms(c.ReplicaLagTimeMaxMs),
		SocketTimeout:                    ms(int64(c.ReplicaSocketTimeoutMs)),
		SocketReceiveBufferBytes:         int(c.ReplicaSocketReceiveBufferBytes),
		FetchMaxBytes:                    c.ReplicaFetchMaxBytes,
		FetchWaitMax:                     ms(int64(c.ReplicaFetchWaitMaxMs)),
		FetchMinBytes:                    c.ReplicaFetchMinBytes,
		FetchResponseMaxBytes:            c.ReplicaFetchResponseMaxBytes,
		FetchBackoff:                     ms(int64(c.ReplicaFetchBackoffMs)),
		NumFetchers:                      int(c.NumReplicaFetchers),
		HighWatermarkCheckpointInterval:  ms(c.ReplicaHighWatermarkCheckpointIntervalMs),
		MinInsyncReplicas:                int(c.MinInsyncReplicas),
		UncleanLeaderElectionEnable:      c.UncleanLeaderElectionEnable,
		FetchPurgatoryPurgeInterval:      int(c.FetchPurgatoryPurgeIntervalRequests),
		ProducerPurgatoryPurgeInterval:   int(c.ProducerPurgatoryPurgeIntervalRequests),
		DeleteRecordsPurgatoryPurgeInter: int(c.DeleteRecordsPurgatoryPurgeIntervalRequests),
		InterBrokerListenerName:          c.EffectiveInterBrokerListenerName(),
		RequestTimeout:                   ms(int64(c.RequestTimeoutMs)),
		OffsetForLeaderEpoch:             c.InterBrokerProtocol().AtLeast(IBPOffsetForLeaderEpoch),
		LastFetchedEpoch:                 c.InterBrokerProtocol().AtLeast(IBPTruncationOnFetch),
	}
}

// GroupCoordinatorConfig is what the group coordinator and offset manager
// need.
type GroupCoordinatorConfig struct {
	MinSessionTimeout        time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout        time.Duration // group.max.session.timeout.ms
	InitialRebalanceDelay    time.Duration // group.initial.rebalance.delay.ms
	MaxSize                  int           // group.max.size
	OffsetMetadataMaxBytes   int           // offset.metadata.max.bytes
	OffsetsLoadBufferSize    int           // offsets.load.buffer.size
	OffsetsTopicReplication  int16         // offsets.topic.replication.factor
	OffsetsTopicPartitions   int32         // offsets.topic.num.partitions
	OffsetsTopicSegmentBytes int32         // offsets.topic.segment.bytes
	OffsetsTopicCompression  int8          // offsets.topic.compression.codec
	OffsetsRetention         time.Duration // offsets.retention.minutes
	OffsetsRetentionCheck    time.Duration // offsets.retention.check.interval.ms
	OffsetCommitTimeout      time.Duration // offsets.commit.timeout.ms
	OffsetCommitRequiredAcks int16         // offsets.commit.required.acks
}

// GroupCoordinator returns the group coordinator settings.
func (c *Config) GroupCoordinator() GroupCoordinatorConfig {
	return GroupCoordinatorConfig{
		MinSessionTimeout:        ms(int64(c.GroupMinSessionTimeoutMs)),
		MaxSessionTimeout:        ms(int64(c.GroupMaxSessionTimeoutMs)),
		InitialRebalanceDelay:    ms(int64(c.GroupInitialRebalanceDelayMs)),
		MaxSize:                  int(c.GroupMaxSize),
		OffsetMetadataMaxBytes:   int(c.OffsetMetadataMaxBytes),
		OffsetsLoadBufferSize:    int(c.OffsetsLoadBufferSize),
		OffsetsTopicReplication:  c.OffsetsTopicReplicationFactor,
		OffsetsTopicPartitions:   c.OffsetsTopicNumPartitions,
		OffsetsTopicSegmentBytes: c.OffsetsTopicSegmentBytes,
		OffsetsTopicCompression:  int8(c.OffsetsTopicCompressionCodec),
		OffsetsRetention:         time.Duration(c.OffsetsRetentionMinutes) * time.Minute,
		OffsetsRetentionCheck:    ms(c.OffsetsRetentionCheckIntervalMs),
		OffsetCommitTimeout:      ms(int64(c.OffsetsCommitTimeoutMs)),
		OffsetCommitRequiredAcks: c.OffsetsCommitRequiredAcks,
	}
}

// TransactionConfig is what the transaction coordinator needs.
type TransactionConfig struct {
	TransactionalIDExpiration time.Duration // transactional.id.expiration.ms
	MaxTimeout                time.Duration // transaction.max.timeout.ms
	StateLogMinISR            int           // transaction.state.log.min.isr
	StateLogLoadBufferSize    int           // transaction.state.log.load.buffer.size
	StateLogReplication       int16         // transaction.state.log.replication.factor
	StateLogPartitions        int32         // transaction.state.log.num.partitions
	StateLogSegmentBytes      int32         // transaction.state.log.segment.bytes
	AbortTimedOutInterval     time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms
	RemoveExpiredInterval     time.Duration // transaction.remove.expired.transaction.cleanup.interval.ms
	ProducerIDExpiration      time.Duration // producer.id.expiration.ms
}

// Transactions returns the transaction coordinator settings.
func (c *Config) Transactions() TransactionConfig {
	return TransactionConfig{
		TransactionalIDExpiration: ms(int64(c.TransactionalIDExpirationMs)),
		MaxTimeout:                ms(int64(c.TransactionMaxTimeoutMs)),
		StateLogMinISR:            int(c.TransactionStateLogMinISR),
		StateLogLoadBufferSize:    int(c.TransactionStateLogLoadBufferSize),
		StateLogReplication:       c.TransactionStateLogReplicationFactor,
		StateLogPartitions:        c.TransactionStateLogNumPartitions,
		StateLogSegmentBytes:      c.TransactionStateLogSegmentBytes,
		AbortTimedOutInterval:     ms(int64(c.TransactionAbortTimedOutTransactionCleanupIntervalMs)),
		RemoveExpiredInterval:     ms(int64(c.TransactionRemoveExpiredTransactionCleanupIntervalMs)),
		ProducerIDExpiration:      ms(int64(c.ProducerIDExpirationMs)),
	}
}
