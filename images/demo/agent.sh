#!/bin/sh
# The demo agent: a stand-in for an agent API that shows what initd did for it.
echo "[agent] I am $(id -un) (uid $(id -u)), pid $$; PID 1 is initd:"
echo "        $(tr '\0' ' ' < /proc/1/cmdline | cut -c1-100)"
echo "[agent] the session hooks ran before me; the background one may still be going"
echo "[agent] starting a daemon that ignores SIGTERM: initd must sweep it when I exit"
setsid sh -c 'trap "" TERM; exec sleep 1000' </dev/null >/dev/null 2>&1 &
echo "[agent] orphaning 20 short-lived grandchildren: PID 1 must reap every one"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do (sleep 0.1 &); done
sleep 2.5
echo "[agent] the process table now (STAT Z would be a zombie):"
ps -A -o pid,ppid,pgid,stat,user,args | sed 's/^/        /'
echo "[agent] zombies: $(ps -A -o stat= | grep -c '^Z')"
echo "[agent] my signal state: $(grep -E '^Sig(Blk|Ign)' /proc/self/status | tr '\n\t' '  ')"
echo "[agent] committing a file that still says TODO (initd's pre-commit chain runs):"
echo "TODO: write the notes" > notes.txt
git add notes.txt
git commit -q -m "Add notes" 2>&1 | sed 's/^/        /'
echo "[agent] fixing it and committing again:"
echo "The notes." > notes.txt
git add notes.txt
git commit -q -m "Add notes" 2>&1 | sed 's/^/        /' && git log --oneline | sed 's/^/        /'
echo "[agent] exiting with code 3"
exit 3
