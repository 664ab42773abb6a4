#!/bin/sh
# The demo agent: a stand-in for an agent API that shows what initd does for it.
say() { echo "[agent] $*"; }
quote() { sed 's/^/        | /'; }
say "I am $(id -un) (uid $(id -u)), pid $$; PID 1 is initd:"
echo "        $(tr '\0' ' ' < /proc/1/cmdline | cut -c1-100)"
say "the session hooks ran before me; the background one may still be going"
say "my signal state: $(grep -E '^Sig(Blk|Ign)' /proc/self/status | tr '\n\t' '  ')"
say "initd's hook service answers on INITD_SOCKET=$INITD_SOCKET; am I ready?"
initd ready | python3 -c 'import json, sys; a = json.load(sys.stdin); print(
    "        |", a["reason"], "- agent", a["agent"]["state"], "pid", a["agent"]["pid"])'

field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]] or "")' "$1"; }

say "--- lifecycle events: one engine for iteratr's, nyzhi's, AutoAgent's, pipelines' hooks"
say "pre_iteration (.iteratr.hooks.yml): the context for the model's next prompt is"
initd emit pre_iteration --data '{"iteration": 1, "session": "demo"}' | field context | quote
say "pre_tool (a discobot script): the model wants to run 'rm -rf build /'"
err=$(mktemp)
initd emit pre_tool --data '{"tool_name": "bash", "command": "rm -rf build /"}' \
  >/dev/null 2>"$err"
say "initd emit exited $? (2: blocked); the tool call does not happen:"
quote < "$err"
rm -f "$err"
say "pre_tool: 'ls -l' instead"
initd emit pre_tool --data '{"tool_name": "bash", "command": "ls -l"}' >/dev/null &&
  say "initd emit exited 0: allowed"

say "--- a turn: the model writes hello.py, with a syntax error"
printf 'print("hello"\n' > hello.py
trigger=user
for round in 1 2 3 4; do
  answer=$(initd turn --trigger "$trigger")
  code=$?
  if [ "$code" -eq 0 ]; then
    say "turn over: initd ran the file hooks and every one passed"
    break
  elif [ "$code" -ne 2 ]; then
    say "initd turn failed with $code"; break
  fi
  say "turn over: a file hook failed, and initd asks for a re-prompt. The model reads:"
  printf '%s\n' "$answer" | python3 -c 'import json, sys; print(json.load(sys.stdin)["message"])' | quote
  say "--- the hook-triggered turn: the model fixes hello.py"
  printf 'print("hello")\n' > hello.py
  trigger=hook
done
say "what the index file hook said (file hooks run as me, the agent: root runs the workspace's code only before I start):"
initd hooks output 70-index | quote
say "after_turn (.nyzhi/config.toml):"
initd emit after_turn | python3 -c 'import json, sys; print(json.load(sys.stdin)["results"][0]["stdout"], end="")' | quote

say "--- reaping: a daemon that ignores SIGTERM, and 20 orphaned grandchildren"
setsid sh -c 'trap "" TERM; exec sleep 1000' </dev/null >/dev/null 2>&1 &
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do (sleep 0.1 &); done
sleep 1
say "zombies now: $(ps -A -o stat= | grep -c '^Z') (PID 1 reaped every orphan)"

say "--- git: committing a file that still says TODO (initd's pre-commit chain runs)"
echo "TODO: write the notes" > notes.txt
git add notes.txt hello.py
git commit -q -m "Add notes" 2>&1 | quote
say "fixing it and committing again:"
echo "The notes." > notes.txt
git add notes.txt
git commit -q -m "Add notes" 2>&1 | quote && git log --oneline | quote
say "--- the image's services (initd.yaml): web says READY=1 when warm, worker starts after it"
for i in $(seq 1 120); do
  initd services --json | python3 -c 'import json, sys
sys.exit(json.load(sys.stdin)["services"]["worker"]["state"] != "running")' && break
  sleep 0.5
done
initd services | quote
say "restarting web, a service of mine (one of root's would be refused):"
initd services restart web | quote
say "exiting with code 3 (initd will exit with it)"
exit 3
