#!/usr/bin/env bash
# A private PostgreSQL server for the test suite, from Debian's binaries (`make postgres`
# installs them): `start` makes a data directory of its own in a new temporary folder, starts it on
# a free loopback port with its dynamic shared memory in files (not /dev/shm, which a container
# may keep small and a browser may fill) and prints its test database's URL; `stop` ends every
# server it started. The suite starts one when it first needs it (Support/TestPostgres.swift), so
# nothing done to the system's own clusters, or in the minutes before, can touch it.
set -euo pipefail
case "${1:-start}" in
stop)
  for folder in /tmp/id3meter-postgres.*; do
    [ -d "$folder/data" ] || continue
    bin=$(cat "$folder/bin")
    su postgres -s /bin/sh -c "'$bin/pg_ctl' -D '$folder/data' -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "$folder"
  done
  exit 0 ;;
start) ;;
*) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac
# The server outlives this script: it must not keep open what the caller gave us beyond stdin,
# stdout and stderr (Foundation's Process learns of a child's end when every holder of a socket it
# passed has closed it: a server holding it would leave the suite waiting for ever).
for descriptor in /proc/$$/fd/*; do
  number=${descriptor##*/}
  [ "$number" -gt 2 ] && eval "exec $number>&-" 2>/dev/null || true
done
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/postgres" ] || { echo "no PostgreSQL server under /usr/lib/postgresql: make postgres installs Debian's" >&2; exit 1; }
folder=$(mktemp -d /tmp/id3meter-postgres.XXXXXX)
echo "$bin" > "$folder/bin"
echo id3meter > "$folder/password"
chown -R postgres: "$folder"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if ! su postgres -s /bin/sh -c "'$bin/initdb' -D '$folder/data' -U id3meter --pwfile='$folder/password' -A scram-sha-256 -E UTF8 --locale=C" \
    > "$folder/initdb.log" 2>&1; then
  echo "initdb failed:" >&2; cat "$folder/initdb.log" >&2; exit 1
fi
options="-p $port -k $folder -c listen_addresses=127.0.0.1 -c dynamic_shared_memory_type=mmap"
if ! su postgres -s /bin/sh -c "'$bin/pg_ctl' -D '$folder/data' -l '$folder/server.log' -w -t 60 -o '$options' start" > /dev/null 2>&1; then
  echo "PostgreSQL did not start on port $port:" >&2; cat "$folder/server.log" >&2; exit 1
fi
PGPASSWORD=id3meter "$bin/psql" "postgresql://id3meter@127.0.0.1:$port/postgres" -qc "CREATE DATABASE id3meter_test" >/dev/null
echo "postgres://id3meter:id3meter@127.0.0.1:$port/id3meter_test"
