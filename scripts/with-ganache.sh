#!/usr/bin/env bash
# Usage: scripts/with-ganache.sh CMD [ARGS...]
#
# Starts a throwaway local EVM chain (npm ganache from tests/js, installed by
# scripts/install-deps.sh) on 127.0.0.1 and a free port, chain id 1337, with
# its deterministic wallet, then runs CMD with
#   MG_EVM_RPC_URLS=1337=http://127.0.0.1:$PORT
#   MG_EVM_SIGNER_KEY_FILE=<a temp file with wallet account 0's key>
# exported, and stops the chain afterwards -- also when CMD fails or the
# script gets INT/TERM. The key is ganache's published test key: never fund it
# on a real chain.
set -euo pipefail

log() { echo "[with-ganache] $*" >&2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ganache=$root/tests/js/node_modules/.bin/ganache
if [[ ! -x $ganache ]]; then
  log "ganache is not installed (run scripts/install-deps.sh)"
  exit 1
fi

tmp_dir=$(mktemp -d)
pid=""
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$ganache" --server.host 127.0.0.1 --server.port "$port" --wallet.deterministic \
  --chain.chainId 1337 --logging.quiet >"$tmp_dir/ganache.log" 2>&1 &
pid=$!
rpc() {
  curl -s -m 2 -H 'content-type: application/json' \
    -d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' "http://127.0.0.1:$port"
}
for _ in $(seq 1 150); do
  if rpc | grep -q '"0x539"'; then break; fi
  sleep 0.2
done
if ! rpc | grep -q '"0x539"'; then
  log "ganache did not answer; its log:"
  cat "$tmp_dir/ganache.log" >&2
  exit 1
fi
log "local chain 1337 on 127.0.0.1:$port"
echo 0x4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d >"$tmp_dir/evm.key"
chmod 600 "$tmp_dir/evm.key"
export MG_EVM_RPC_URLS="1337=http://127.0.0.1:$port"
export MG_EVM_SIGNER_KEY_FILE="$tmp_dir/evm.key"
set +e
"$@"
code=$?
set -e
exit "$code"
