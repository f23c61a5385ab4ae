#!/usr/bin/env bash
# ZooKeeper command-line shell, as Kafka's zookeeper-shell.sh:
#   bin/zookeeper-shell.sh host:port[/chroot] [command...]
# Without a command it opens Debian's interactive zkCli.sh. With a command
# (ls, get, stat, ...) it runs it and prints only the command's output: the
# connection banner, log lines and WATCHER notices are dropped.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/klassik-lib.sh"
require_args "$0 zookeeper_host:port[/path] [args...]" "$@"
server=$1
shift

zkcli=/usr/share/zookeeper/bin/zkCli.sh
if [ ! -x "$zkcli" ]; then
  echo "$0: $zkcli not found." >&2
  echo "Install it with:  apt-get update && apt-get install -y zookeeper default-jre-headless" >&2
  exit 1
fi

# Keep the client's log4j output on the console at ERROR and away from
# /var/log/zookeeper, which an unprivileged user cannot write.
export ZOO_LOG_DIR=${ZOO_LOG_DIR:-${TMPDIR:-/tmp}}
export ZOO_LOG4J_PROP=${ZOO_LOG4J_PROP:-ERROR,CONSOLE}
export CLIENT_JVMFLAGS="${CLIENT_JVMFLAGS:-} -Dzookeeper.root.logger=ERROR,CONSOLE -Xmx128m -XX:+UseSerialGC"

if [ $# -eq 0 ]; then
  exec "$zkcli" -server "$server"
fi

# zkCli prints "Connecting to ...", a blank line, "WATCHER::", a blank line and
# "WatchedEvent state:SyncConnected ..." before the command's output; log
# lines start with a timestamp, and Debian's client classpath has no slf4j
# binding, so SLF4J prints a notice. Drop those, keep everything else
# verbatim.
set +e
"$zkcli" -server "$server" "$@" 2>&1 | awk '
  BEGIN { started = 0 }
  /^Connecting to / && !started { next }
  /^WATCHER::$/ { next }
  /^WatchedEvent state:/ { next }
  /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][ T][0-9:,.]+ (\[|-|[A-Z])/ { next }
  /^log4j:/ { next }
  /^SLF4J: / { next }
  /^$/ && !started { next }
  { started = 1; print }
'
status=${PIPESTATUS[0]}
exit "$status"
