#!/usr/bin/env bash
# Starts Debian's PostgreSQL (installed by `make postgres`) and makes the test role and database
# when missing; prints the database's URL, which `make test` hands the suite as
# ID3METER_TEST_POSTGRES (CollectTests keep their records there, as a fleet's collector would).
set -euo pipefail
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
if ! pg_lsclusters -h | grep -q "^$version main "; then
  pg_createcluster "$version" main >/dev/null
fi
port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
pg_ctlcluster "$version" main status >/dev/null 2>&1 || pg_ctlcluster "$version" main start
for _ in $(seq 1 100); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 0.1
done
pg_isready -q -h 127.0.0.1 -p "$port" || { echo "PostgreSQL $version did not start on port $port" >&2; exit 1; }
as_postgres() { su postgres -c "psql -p $port -tAqc \"$1\""; }
[ "$(as_postgres "SELECT 1 FROM pg_roles WHERE rolname = 'id3meter'")" = 1 ] ||
  as_postgres "CREATE ROLE id3meter LOGIN PASSWORD 'id3meter'"
[ "$(as_postgres "SELECT 1 FROM pg_database WHERE datname = 'id3meter_test'")" = 1 ] ||
  su postgres -c "createdb -p $port -O id3meter id3meter_test"
echo "postgres://id3meter:id3meter@127.0.0.1:$port/id3meter_test"
