#!/usr/bin/env bash
# `make demo`: initd as PID 1 of a fresh PID namespace, over the bundled demo workspace
# (session, file and pre-commit hooks) and demo agent, as a demo agent user: session
# hooks, the hook service, a turn re-prompted then passing, reaping, a commit rejected
# then accepted. INITD_DEMO_USER and INITD_DEMO_SESSION name the user and the session
# (initd-demo, demo): the suite gives each run its own, so two suites on one host never
# share the demo's state.
set -uo pipefail
python=${1:-python3}
case "$python" in */*) [ "${python#/}" != "$python" ] || python="$PWD/$python" ;; esac
here=$(cd "$(dirname "$0")" && pwd)
user=${INITD_DEMO_USER:-initd-demo}
session=${INITD_DEMO_SESSION:-demo}
if [ "$(id -u)" -ne 0 ]; then
  echo "make demo needs root: it creates the demo user '$user' and a PID namespace" >&2
  exit 1
fi
id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
# A checkout under /root is unreadable to the agent user: run from a copy in /tmp.
demo=$(mktemp -d /tmp/initd-demo.XXXXXX)
cp -a "$here/workspace" "$here/agent.sh" "$here/web.py" "$here/worker.sh" "$demo/"
# The workspace is a git repository created by root, as an image build would make it;
# the agent user commits in it (initd trusts this one path for that user).
git -C "$demo/workspace" init -q
git -C "$demo/workspace" config user.name "Demo Agent"
git -C "$demo/workspace" config user.email "agent@demo.invalid"
chmod -R a+rwX "$demo"
# The image's services (initd.yaml, its paths made the copy's): a file of root's that only
# root may write, as initd reads services from no other; their logs in a directory of root's.
etc=$(mktemp -d /tmp/initd-demo-etc.XXXXXX)
chmod 755 "$etc"
sed -e "s#/opt/demo/#$demo/#" -e "s#directory: /workspace#directory: $demo/workspace#" \
  -e "s#/tmp/demo-web.port#$demo/web.port#" \
  "$here/initd.yaml" > "$etc/initd.yaml"
chmod 644 "$etc/initd.yaml"
home=$(getent passwd "$user" | cut -d: -f6)
rm -rf "$home/.discobot/$session"
# On the way out: the trust initd gave the demo user for this one path, then the copy.
trap 'cd /; git config --file "$home/.gitconfig" --unset-all safe.directory \
  "^$demo/workspace\$" 2>/dev/null; rm -rf "$demo" "$etc"' EXIT

step() { printf '\n== %s\n' "$*"; }
step "the hooks initd finds in the demo workspace (initd hooks list):"
"$python" -m initd hooks list --workspace "$demo/workspace" --hooks-dir /nonexistent
step "unshare --pid --fork --mount-proc initd -v --user $user -- agent.sh"
step "initd becomes PID 1; its supervisor runs the session hooks, installs the pre-commit"
echo "== chain, starts the hook service (as $user) and then the agent."
echo
cd "$demo/workspace" || exit 1
# The demo's own socket (not /run/initd, which a real initd may be serving), and initd's
# verbs on the agent's PATH.
PATH="$(dirname "$python"):$PATH" DISCOBOT_SECRET=demo-secret \
  INITD_CONFIG="$etc/initd.yaml" INITD_SERVICES_LOG_DIR="$etc/logs" \
  unshare --pid --fork --mount-proc --kill-child \
  "$python" -m initd -v --log-format console --user "$user" --session-id "$session" \
  --workspace "$demo/workspace" --hooks-dir /nonexistent --socket "$demo/run/initd.sock" \
  -- "$demo/agent.sh"
code=$?
step "initd exited with $code, the agent's own exit code. On the way out PID 1 swept the"
echo "== daemon the agent left behind (SIGTERM, which it ignored, then SIGKILL)."
step "what the hooks left for the agent user in $home/.discobot/$session/hooks:"
"$python" - "$home/.discobot/$session/hooks/status.json" <<'PY'
import json, sys
for hook in json.load(open(sys.argv[1]))["hooks"].values():
    print("   {hookId:<20} {lastResult:<8} exit {lastExitCode}".format(**hook))
PY
ls -l "$home/.discobot/$session/hooks/output" | sed 's/^/   /'
[ "$code" -eq 3 ]
