#!/usr/bin/env bash
# Installs what Klassik's local cluster and test suite need on a Debian machine,
# skipping whatever is already present:
#   - Apache ZooKeeper and a Java runtime (Debian's zookeeper package),
#   - the client tools the tests drive: kcat, python3-kafka, python3-confluent-kafka,
#   - netcat for ZooKeeper's four-letter words,
#   - iproute2 and iptables for the network partition tests,
#   - openssl, keytool and javac for the TLS tests' key stores and their
#     check of Java's distinguished-name format,
#   - Docker (docker.io, docker-compose) for docker/'s test, and a running
#     dockerd (started here when none answers and this runs as root),
#   - Chromium and ChromeDriver for the web console's headless browser test,
#   - the npm packages of testdata/clients (kafkajs),
#   - the Go modules of go.mod.
# Usage: bin/klassik-install-deps.sh [--no-npm] [--no-dockerd]
#   --no-npm      skip the npm packages
#   --no-dockerd  install Docker but do not start its daemon (the local
#                 cluster does not need it; the test suite does)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

want_npm=1
want_dockerd=1
for arg in "$@"; do
  case $arg in
    --no-npm) want_npm=0 ;;
    --no-dockerd) want_dockerd=0 ;;
    *) echo "usage: $0 [--no-npm] [--no-dockerd]" >&2; exit 2 ;;
  esac
done

missing=()
[ -f /usr/share/java/zookeeper.jar ] || missing+=(zookeeper)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
# keytool (Debian's JRE) and openssl make the keystores of the TLS tests.
command -v keytool >/dev/null 2>&1 || missing+=(default-jre-headless)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
command -v nc >/dev/null 2>&1 || missing+=(netcat-openbsd)
# ip (network namespaces, veths) and iptables: broker/faulttest's network
# partition tests.
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
# javac: the TLS tests compare the DN format with Java's X500Principal.
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
/usr/bin/python3 -c 'import kafka' >/dev/null 2>&1 || missing+=(python3-kafka)
/usr/bin/python3 -c 'import confluent_kafka' >/dev/null 2>&1 || missing+=(python3-confluent-kafka)
# /usr/bin/docker, not any docker on PATH: docker/'s test builds with the
# packaged client's BuildKit (docker-ce's client is there too).
[ -x /usr/bin/docker ] || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)

if [ ${#missing[@]} -gt 0 ]; then
  echo "klassik: installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}" >/dev/null
fi

# docker/'s test needs a Docker daemon. Start one when none answers: through
# systemd where it runs, else dockerd in the background (as in a CI
# container); the test fails with a clear message if there is still none.
if [ "$want_dockerd" = 1 ] && ! /usr/bin/docker info >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "klassik: no Docker daemon answers; start dockerd as root for docker/'s test" >&2
  elif [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    systemctl start docker || true
  else
    echo "klassik: starting dockerd (log: /tmp/klassik-dockerd.log)"
    nohup dockerd >/tmp/klassik-dockerd.log 2>&1 </dev/null &
  fi
  if [ "$(id -u)" -eq 0 ]; then
    for _ in $(seq 1 60); do
      /usr/bin/docker info >/dev/null 2>&1 && break
      sleep 0.5
    done
    /usr/bin/docker info >/dev/null 2>&1 ||
      echo "klassik: dockerd did not answer within 30 s; see /tmp/klassik-dockerd.log" >&2
  fi
fi

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    echo "klassik: Go 1.26 is required (go not found on PATH)" >&2
    exit 1
  fi
fi
(cd "$repo" && go mod download)

if [ "$want_npm" = 1 ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "klassik: npm is required for the kafkajs client tests (apt-get install -y nodejs npm)" >&2
    exit 1
  fi
  if [ ! -d "$repo/testdata/clients/node_modules/kafkajs" ]; then
    echo "klassik: installing npm packages in testdata/clients"
    (cd "$repo/testdata/clients" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
fi
