#!/usr/bin/env bash
# Usage: scripts/with-pg.sh CMD [ARGS...]
#
# Starts a throwaway PostgreSQL 15 in a fresh temporary directory, creates the
# database `movegate`, runs CMD with
#   MG_DATABASE_URL=postgresql://postgres@127.0.0.1:$PORT/movegate
#   MG_PG_PORT, MG_PG_BIN, MG_PG_DATA
# exported, then stops the server and deletes the directory -- also when CMD
# fails or the script gets INT/TERM. Exits with CMD's exit code.
#
# The server listens on 127.0.0.1 only, on the first free port from 55432 up
# (or exactly $MG_PG_PORT when the caller sets it); its unix socket lives in
# the temporary directory. Durability stays on (fsync, synchronous_commit).
# As root, the server runs as the `postgres` user. MG_PG_EXTRA_CONF, when
# set, is appended to postgresql.conf (for profiling, say:
# "shared_preload_libraries = 'pg_stat_statements'").
set -euo pipefail

log() { echo "[with-pg] $*" >&2; }

if (($# == 0)); then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi

pg_bin=${MG_PG_BIN:-/usr/lib/postgresql/15/bin}
if [[ ! -x $pg_bin/initdb || ! -x $pg_bin/pg_ctl ]]; then
  log "no PostgreSQL 15 binaries in $pg_bin (run scripts/install-deps.sh)"
  exit 1
fi

as_root=0
if [[ $(id -u) -eq 0 ]]; then
  as_root=1
  if ! id postgres >/dev/null 2>&1; then
    log "running as root but there is no 'postgres' user (run scripts/install-deps.sh)"
    exit 1
  fi
fi

tmp_dir=""
data_dir=""
child=""

# Runs a PostgreSQL tool as the server's owner, from a directory it can read.
as_pg() {
  if ((as_root)); then
    (cd "$tmp_dir" && runuser -u postgres -- "$@")
  else
    (cd "$tmp_dir" && "$@")
  fi
}

# shellcheck disable=SC2317 # invoked from traps
server_running() {
  [[ -n $data_dir && -f $data_dir/postmaster.pid ]]
}

# shellcheck disable=SC2317 # invoked from traps
cleanup() {
  local rc=$?
  trap - EXIT
  trap '' INT TERM # finish cleaning up even if signalled again
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
  fi
  if server_running; then
    as_pg "$pg_bin/pg_ctl" -D "$data_dir" -m fast -w -t 60 -s stop >/dev/null 2>&1 ||
      as_pg "$pg_bin/pg_ctl" -D "$data_dir" -m immediate -w -t 30 -s stop >/dev/null 2>&1 || true
    if server_running; then
      # pg_ctl could not stop it: kill the postmaster named in its pid file.
      local pid
      pid=$(head -n 1 "$data_dir/postmaster.pid" 2>/dev/null || true)
      if [[ $pid =~ ^[0-9]+$ ]]; then
        kill -KILL "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
          kill -0 "$pid" 2>/dev/null || break
          sleep 0.1
        done
      fi
    fi
  fi
  if [[ -n $tmp_dir ]]; then
    rm -rf -- "$tmp_dir"
  fi
  exit "$rc"
}

# shellcheck disable=SC2317 # invoked from traps
on_signal() {
  local name=$1 code=$2
  trap '' INT TERM
  log "caught SIG$name, shutting down"
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    # Give CMD up to 10 s to exit on its own, then force it.
    for _ in $(seq 100); do
      kill -0 "$child" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$child" 2>/dev/null || true
  fi
  exit "$code"
}

trap cleanup EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM

tmp_dir=$(mktemp -d /tmp/mg-pg.XXXXXXXX)
chmod 700 "$tmp_dir"
if ((as_root)); then
  chown postgres:postgres "$tmp_dir"
fi
sock_dir=$tmp_dir/socket
as_pg mkdir -m 700 "$sock_dir"

if ! as_pg "$pg_bin/initdb" -D "$tmp_dir/data" -U postgres -A trust -E UTF8 \
  --locale=C.UTF-8 >"$tmp_dir/initdb.log" 2>&1; then
  log "initdb failed:"
  cat "$tmp_dir/initdb.log" >&2
  exit 1
fi
data_dir=$tmp_dir/data

# Test-box tuning; durability stays on.
cat >>"$data_dir/postgresql.conf" <<CONF

# --- scripts/with-pg.sh ---
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sock_dir'
max_connections = 200
shared_buffers = 256MB
wal_level = minimal
max_wal_senders = 0
fsync = on
synchronous_commit = on
full_page_writes = on
${MG_PG_EXTRA_CONF:-}
CONF

port_in_use() {
  # A successful connect means something already listens there.
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Starts the server on port $1. Returns 0 when up, 1 when the port is taken,
# and exits when the server fails for any other reason.
try_start() {
  local port=$1 pg_log=$tmp_dir/postgres-$1.log
  if port_in_use "$port"; then
    return 1
  fi
  if as_pg "$pg_bin/pg_ctl" -D "$data_dir" -l "$pg_log" -o "-p $port" -w -t 60 -s start \
    >/dev/null 2>&1; then
    return 0
  fi
  if grep -q "Address already in use" "$pg_log" 2>/dev/null; then
    return 1 # lost a race with another process for this port
  fi
  log "PostgreSQL failed to start on port $port:"
  cat "$pg_log" >&2 2>/dev/null || true
  exit 1
}

port=""
if [[ -n ${MG_PG_PORT:-} ]]; then
  if ! [[ $MG_PG_PORT =~ ^[0-9]+$ ]] || ((MG_PG_PORT < 1 || MG_PG_PORT > 65535)); then
    log "MG_PG_PORT must be a port number (got '$MG_PG_PORT')"
    exit 1
  fi
  if ! try_start "$MG_PG_PORT"; then
    log "port $MG_PG_PORT (MG_PG_PORT) is already in use"
    exit 1
  fi
  port=$MG_PG_PORT
else
  for candidate in $(seq 55432 55731); do
    if try_start "$candidate"; then
      port=$candidate
      break
    fi
  done
  if [[ -z $port ]]; then
    log "no free port in 55432..55731"
    exit 1
  fi
fi

if ! as_pg "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U postgres movegate \
  >"$tmp_dir/createdb.log" 2>&1; then
  log "createdb failed:"
  cat "$tmp_dir/createdb.log" >&2
  exit 1
fi

export MG_DATABASE_URL="postgresql://postgres@127.0.0.1:$port/movegate"
export MG_PG_PORT=$port
export MG_PG_BIN=$pg_bin
export MG_PG_DATA=$data_dir

log "PostgreSQL 15 up on 127.0.0.1:$port (data $data_dir)"

# CMD runs in the background so a signal to this script is handled at once;
# stdin is passed on explicitly (background jobs would otherwise get /dev/null).
"$@" <&0 &
child=$!
rc=0
wait "$child" || rc=$?
child=""
exit "$rc"
