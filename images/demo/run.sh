#!/usr/bin/env bash
# `make demo`: initd as PID 1 of a fresh PID namespace, over the bundled demo agent.
set -uo pipefail
python=${1:-python3}
here=$(cd "$(dirname "$0")" && pwd)
ns=(unshare --pid --fork --mount-proc --kill-child)
[ "$(id -u)" -eq 0 ] || ns=(unshare --user --map-root-user --pid --fork --mount-proc --kill-child)

echo "== initd demo: ${ns[*]} initd -v -- images/demo/agent.sh"
echo "== initd becomes PID 1 of a new PID namespace; its supervisor starts the agent."
echo
"${ns[@]}" "$python" -m initd -v --log-format console -- "$here/agent.sh"
code=$?
echo
echo "== initd exited with $code, the agent's own exit code. On the way out PID 1 swept"
echo "== the daemon the agent left behind (SIGTERM, which it ignored, then SIGKILL), so"
echo "== the namespace ended empty instead of being killed by the kernel."
[ "$code" -eq 3 ]
