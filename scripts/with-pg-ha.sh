#!/usr/bin/env bash
# Usage: scripts/with-pg-ha.sh CMD [ARGS...]
#
# Like scripts/with-pg.sh, but the database is a pg_auto_failover formation
# on loopback in a fresh temporary directory: a monitor, a primary and a
# synchronous secondary (`pg_autoctl create ... --auth trust --no-ssl`, as the
# postgres user, with a temporary XDG_CONFIG_HOME/XDG_DATA_HOME). Runs CMD
# with
#   MG_DATABASE_URL   postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/movegate
#                     ?target_session_attrs=read-write   (whichever is primary)
#   MG_PG_HA_MONITOR_URI  the monitor (user autoctl_node, database pg_auto_failover)
#   MG_PG_HA_CTL      a command that runs `pg_autoctl` as the formation's owner
#                     with its environment, e.g. `$MG_PG_HA_CTL perform failover`
#   MG_PG_HA_MONITOR_PSQL  a command that runs psql as the monitor's superuser,
#                     e.g. to tune its pgautofailover.* settings
#   MG_PG_HA_PORTS    "P1 P2", MG_PG_HA_DATA "D1 D2" (node data directories,
#                     in the same order), MG_PG_HA_KEEPERS "G1 G2" (each node
#                     keeper's process group: `kill -KILL -- -G1` kills every
#                     pg_autoctl process of node1 and the postmaster they
#                     started, whose pid is also in D1/postmaster.pid),
#   MG_PG_BIN
# exported, then stops every keeper and server and deletes the directory --
# also when CMD fails, the formation never forms, or the script gets INT/TERM.
# Exits with CMD's exit code. Progress goes to stderr.
#
# Ports: the first free ones from 56432 up (3 are needed). The formation
# takes about 25 s to form (the secondary is a pg_basebackup of the primary).
# shellcheck disable=SC2317 # the wait_for conditions and trap handlers are called indirectly
set -euo pipefail

log() { echo "[with-pg-ha] $(date -u +%H:%M:%S) $*" >&2; }

if (($# == 0)); then
  echo "usage: $0 CMD [ARGS...]" >&2
  exit 2
fi

pg_bin=${MG_PG_BIN:-/usr/lib/postgresql/15/bin}
autoctl=$(command -v pg_autoctl || true)
if [[ ! -x $pg_bin/pg_ctl || -z $autoctl ]]; then
  log "needs PostgreSQL 15 and pg_autoctl (postgresql-15-auto-failover, pg-auto-failover-cli;" \
    "run scripts/install-deps.sh)"
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
child=""
keepers=()
node_dirs=()
monitor_dir=""

# Runs a command as the formation's owner with its environment, from a
# directory it can read.
as_pg() {
  local env_vars=(XDG_CONFIG_HOME="$tmp_dir/config" XDG_DATA_HOME="$tmp_dir/share"
    XDG_RUNTIME_DIR="$tmp_dir/run" PG_CONFIG="$pg_bin/pg_config" PATH="$pg_bin:$PATH")
  if ((as_root)); then
    (cd "$tmp_dir" && runuser -u postgres -- env "${env_vars[@]}" "$@")
  else
    (cd "$tmp_dir" && env "${env_vars[@]}" "$@")
  fi
}

# shellcheck disable=SC2317 # invoked from traps
kill_postmaster() {
  local dir=$1 pid
  [[ -f $dir/postmaster.pid ]] || return 0
  pid=$(head -n 1 "$dir/postmaster.pid" 2>/dev/null || true)
  if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
}

# shellcheck disable=SC2317 # invoked from traps
cleanup() {
  local rc=$?
  trap - EXIT
  trap '' INT TERM # finish cleaning up even if signalled again
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
  fi
  if [[ -n $tmp_dir ]]; then
    log "removing the formation"
    local dir pid
    # Nodes first (they report to the monitor), both at once, then the monitor.
    stop_keeper() {
      [[ -n $1 && -d $1 ]] || return 0
      timeout 30 bash -c "$(declare -f as_pg); tmp_dir='$tmp_dir' pg_bin='$pg_bin' \
        as_root=$as_root as_pg pg_autoctl stop --pgdata '$1' --fast" >/dev/null 2>&1 || true
    }
    local stoppers=()
    for dir in "${node_dirs[@]}"; do
      stop_keeper "$dir" &
      stoppers+=($!)
    done
    for pid in "${stoppers[@]}"; do
      wait "$pid" || true
    done
    stop_keeper "$monitor_dir"
    # `pg_autoctl stop` fails on a keeper still in `create` (no pid file
    # yet, or a pg_basebackup running): its whole process group goes.
    local group
    for group in "${keepers[@]}"; do
      kill -TERM -- "-$group" 2>/dev/null || true
    done
    for group in "${keepers[@]}"; do
      for _ in $(seq 50); do
        kill -0 -- "-$group" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL -- "-$group" 2>/dev/null || true
    done
    for dir in "${node_dirs[@]}" "$monitor_dir"; do
      [[ -n $dir ]] && kill_postmaster "$dir"
    done
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

tmp_dir=$(mktemp -d /tmp/mg-pgha.XXXXXXXX)
chmod 755 "$tmp_dir" # the postgres user reaches its files through it
if ((as_root)); then
  chown postgres:postgres "$tmp_dir"
fi
as_pg mkdir -m 700 "$tmp_dir/config" "$tmp_dir/share" "$tmp_dir/run"

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Three free ports; a race with another formation shows up as a failed start.
ports=()
for candidate in $(seq 56432 56731); do
  port_in_use "$candidate" || ports+=("$candidate")
  ((${#ports[@]} == 3)) && break
done
if ((${#ports[@]} < 3)); then
  log "no 3 free ports in 56432..56731"
  exit 1
fi
monitor_port=${ports[0]}

# Starts `pg_autoctl create ... --run` in the background (the keeper then
# stays up and supervises its postgres) in a session of its own: a pid of
# the keeper is not enough to stop it (runuser and pg_autoctl fork), its
# process group id goes to `keepers`.
start_keeper() {
  local name=$1 group_file=$tmp_dir/$1.pgid owner=()
  shift
  owner=(env XDG_CONFIG_HOME="$tmp_dir/config" XDG_DATA_HOME="$tmp_dir/share"
    XDG_RUNTIME_DIR="$tmp_dir/run" PG_CONFIG="$pg_bin/pg_config" PATH="$pg_bin:$PATH")
  if ((as_root)); then
    owner=(runuser -u postgres -- "${owner[@]}")
  fi
  # shellcheck disable=SC2016 # $$ and $1 belong to the inner shell: the session leader
  (cd "$tmp_dir" && exec setsid bash -c 'echo $$ >"$1" && shift && exec "$@"' keeper \
    "$group_file" "${owner[@]}" "$autoctl" create "$@" --run) >"$tmp_dir/$name.log" 2>&1 &
  for _ in $(seq 50); do
    [[ -s $group_file ]] && break
    sleep 0.1
  done
  keepers+=("$(cat "$group_file")")
}

# Waits up to $2 s for the function `$1` to succeed; shows the log $3
# and exits on timeout or when keeper $4 (a process group) has died.
wait_for() {
  local cond=$1 secs=$2 logf=$3 keeper=$4
  for _ in $(seq $((secs * 2))); do
    if "$cond"; then
      return 0
    fi
    if ! kill -0 -- "-$keeper" 2>/dev/null; then
      log "keeper $keeper exited; its log:"
      tail -n 40 "$logf" >&2 || true
      exit 1
    fi
    sleep 0.5
  done
  log "timed out after ${secs}s; log:"
  tail -n 40 "$logf" >&2 || true
  exit 1
}

monitor_dir=$tmp_dir/monitor
log "creating the monitor on 127.0.0.1:$monitor_port"
start_keeper monitor monitor --pgdata "$monitor_dir" --pgport "$monitor_port" \
  --hostname 127.0.0.1 --auth trust --no-ssl --pgctl "$pg_bin/pg_ctl"
monitor_uri="postgres://autoctl_node@127.0.0.1:$monitor_port/pg_auto_failover?sslmode=disable"

monitor_sql() {
  as_pg "$pg_bin/psql" -X -A -t -q -d "$monitor_uri" -c "$1" 2>/dev/null
}
monitor_up() { [[ $(monitor_sql "select 1") == 1 ]]; }
wait_for monitor_up 60 "$tmp_dir/monitor.log" "${keepers[0]}"

# Nodes in reportedstate $1 (e.g. primary, secondary).
nodes_in() {
  monitor_sql "select count(*) from pgautofailover.node
                where reportedstate = '$1' and goalstate = '$1'"
}

node1_up() { [[ $(nodes_in primary) == 1 || $(nodes_in single) == 1 ]]; }
for i in 1 2; do
  port=${ports[$i]}
  dir=$tmp_dir/node$i
  node_dirs+=("$dir")
  log "creating node$i on 127.0.0.1:$port"
  start_keeper "node$i" postgres --pgdata "$dir" --pgport "$port" --hostname 127.0.0.1 \
    --name "node$i" --dbname movegate --username postgres --auth trust --no-ssl \
    --monitor "$monitor_uri" --pgctl "$pg_bin/pg_ctl"
  if ((i == 1)); then
    wait_for node1_up 90 \
      "$tmp_dir/node1.log" "${keepers[1]}"
    log "node1 is up"
  fi
done
# pg_basebackup asks for a spread checkpoint, which takes minutes on an idle
# server; a CHECKPOINT on the primary finishes it at once.
checkpoint_node1() {
  # bounded: a signal waits for the foreground command to end
  as_pg timeout 10 "$pg_bin/psql" -X -q -h 127.0.0.1 -p "${ports[1]}" -U postgres -d movegate \
    -c checkpoint >/dev/null 2>&1 || true
}
formed() {
  checkpoint_node1
  [[ $(nodes_in primary) == 1 && $(nodes_in secondary) == 1 ]]
}
wait_for formed 120 \
  "$tmp_dir/node2.log" "${keepers[2]}"

log "formation up: primary and synchronous secondary on ${ports[1]}, ${ports[2]}"

ctl=$tmp_dir/pg_autoctl-as-owner
{
  echo '#!/usr/bin/env bash'
  declare -p tmp_dir pg_bin as_root
  declare -f as_pg
  echo "as_pg '$autoctl' \"\$@\" --pgdata '${node_dirs[0]}'"
} >"$ctl"
chmod 755 "$ctl"
monitor_psql=$tmp_dir/psql-monitor
{
  echo '#!/usr/bin/env bash'
  declare -p tmp_dir pg_bin as_root
  declare -f as_pg
  echo "as_pg '$pg_bin/psql' -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p '$monitor_port' -U postgres -d pg_auto_failover \"\$@\""
} >"$monitor_psql"
chmod 755 "$monitor_psql"

export MG_DATABASE_URL="postgresql://postgres@127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}/movegate?target_session_attrs=read-write"
export MG_PG_HA_MONITOR_URI=$monitor_uri
export MG_PG_HA_CTL=$ctl
export MG_PG_HA_MONITOR_PSQL=$monitor_psql
export MG_PG_HA_PORTS="${ports[1]} ${ports[2]}"
export MG_PG_HA_DATA="${node_dirs[0]} ${node_dirs[1]}"
export MG_PG_HA_KEEPERS="${keepers[1]} ${keepers[2]}"
export MG_PG_BIN=$pg_bin

"$@" <&0 &
child=$!
rc=0
wait "$child" || rc=$?
child=""
exit "$rc"
