#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the test suite.
#   scripts/test-postgres.sh start <dir>   initdb in <dir>/data, start it on a free loopback
#                                          port (and a unix socket in <dir>), print its admin URL
#   scripts/test-postgres.sh stop <dir>    stop it and remove <dir>
# <dir> is handed to the cluster's user, so its parent must be enterable by that user (e.g. /tmp).
# initdb refuses to run as root: as root the cluster runs as the `postgres` user the Debian
# package creates (else `nobody`). Password auth (scram); the password is random per cluster.
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?directory}

bindir=${PG_BIN:-}
if [ -z "$bindir" ]; then
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
    [ -x "$d/initdb" ] && { bindir=$d; break; }
  done
fi
if [ -z "$bindir" ] && command -v initdb >/dev/null; then bindir=$(dirname "$(command -v initdb)"); fi
[ -n "$bindir" ] || { echo "no PostgreSQL server binaries (initdb); run scripts/install-system-deps.sh" >&2; exit 1; }

as=()
if [ "$(id -u)" = 0 ]; then
  user=postgres; id -u postgres >/dev/null 2>&1 || user=nobody
  as=(runuser -u "$user" --)
fi

case "$cmd" in
start)
  mkdir -p "$dir"; chmod 755 "$dir"
  password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  (umask 077; printf '%s\n' "$password" >"$dir/pw")
  if [ ${#as[@]} -gt 0 ]; then chown "$user" "$dir" "$dir/pw"; fi
  "${as[@]}" "$bindir/initdb" -D "$dir/data" -U clibroker --pwfile="$dir/pw" --auth=scram-sha-256 -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  rm -f "$dir/pw"
  port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=500" start >/dev/null \
    || { cat "$dir/log" >&2; exit 1; }
  echo "postgres://clibroker:$password@127.0.0.1:$port/postgres"
  ;;
stop)
  [ -d "$dir/data" ] && "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -w -m fast stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*) echo "usage: $0 start|stop <dir>" >&2; exit 2 ;;
esac
