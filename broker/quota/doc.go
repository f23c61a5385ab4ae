// Package quota is Klassik's client quota enforcement (Kafka's
// ClientQuotaManager family): producer_byte_rate, consumer_byte_rate,
// request_percentage and controller_mutation_rate of the users and client
// ids in /config/users and /config/clients.
//
// Kafka classes → files:
//
//	ClientQuotaManager (+ DefaultQuotaCallback)  manager.go (Manager: overrides, the eight-level
//	                                             precedence, one sensor per entity)
//	ClientRequestQuotaManager                    manager.go (Kind Request: throttle bounded by a window)
//	ControllerMutationQuotaManager,              manager.go (mutate), managers.go (Mutation)
//	  Strict/PermissiveControllerMutationQuota
//	QuotaFactory.QuotaManagers                   managers.go (Managers, Config)
//	QuotaConfigHandler.updateQuotaConfig         managers.go (UpdateEntity, ParseValue)
//	KafkaQuotaEntity, ClientQuotaEntity          entity.go (Entity, Part, EntityFromZK, UserOf)
//	metrics.stats.Rate / SampledStat, TokenBucket  rate.go
//	QuotaUtils.throttleTime                      rate.go (throttleMs)
//
// A request is recorded under the entity whose quota applies to it: with
// a user quota every client of the user shares one sensor; with a
// <user, client-id> quota each pair has its own. Kafka's
// ThrottledChannel/ThrottledChannelReaper are not needed: the connection
// goroutine (broker/network) itself waits out the throttle before it reads
// the next request (KIP-219 muting), and the api layer sets the
// throttle_time_ms of the response.
//
// Goroutines: none. Each Manager has one mutex guarding its overrides and
// sensors; no I/O happens under it (a new sensor registers its metrics
// under it, taking only the registry's lock; the gauges read atomics and
// never wait for the mutex). Time is passed in (tests advance it).
//
// Metrics (Config.Metrics): kafka.server.<Produce|Fetch|Request|
// ControllerMutation>.<byte-rate|request-time|tokens>.user=<u>.client-id=<c>
// and ...throttle-time..., per entity; the rate is the one measured at the
// entity's last request.
package quota
