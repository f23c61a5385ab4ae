// Package docker holds Klassik's container files and their test; it has no
// Go API.
//
//	Dockerfile            the broker image: a build stage compiling the static
//	                      binaries, a runtime stage with the broker, the tools
//	                      and the bin/*.sh scripts, user 10001, KAFKA_*
//	                      environment configuration (BINARIES=host takes
//	                      binaries built outside Docker from docker/dist/)
//	klassik-entrypoint/   the image's entrypoint: KAFKA_* variables to
//	                      server.properties (cp-kafka's naming), checked with
//	                      the broker's own loader, then exec kafka-server
//	kafka-run-class.sh    the image's bin/kafka-run-class.sh: exec a prebuilt tool
//	docker-compose.yml    a three-node ZooKeeper ensemble and three brokers on
//	                      racks a, b, c, console ports published
//
// docker_test.go validates the compose file with docker-compose and builds
// the image from host-built binaries on a scratch base (no image registry
// needed), then runs three broker containers with host networking against a
// ZooKeeper on the host and does a produce/consume round trip.
package docker
