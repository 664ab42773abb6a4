#!/usr/bin/env bash
# `make test-stress`: the whole suite on a busy host, as CI machines are. Two runs of this
# checkout's suite at once (each in parallel, as `make test` runs it), while a CPU burner
# per core keeps every core busy the whole time. It passes only if both runs pass: a test
# that asserts on elapsed time, shares a fixed name or port, or races, fails here.
#
# usage: tools/test-stress.sh PYTEST [pytest args...]
set -uo pipefail
pytest=$1
shift
cores=$(nproc)
logs=$(mktemp -d /tmp/initd-test-stress.XXXXXX)
burners=()
stop_burners() {
  [ ${#burners[@]} -eq 0 ] || kill "${burners[@]}" 2>/dev/null
  wait "${burners[@]}" 2>/dev/null
  burners=()
}
trap 'stop_burners; kill $first $second 2>/dev/null' EXIT
for _ in $(seq "$cores"); do
  # a busy loop in the shell itself: no tool to install, never sleeps
  bash -c 'while :; do :; done' &
  burners+=($!)
done
echo "test-stress: $cores CPU burners, and two runs of the suite at once (logs in $logs)" >&2
# the second run keeps no cache: both share this checkout's .pytest_cache otherwise
"$pytest" "$@" >"$logs/first.log" 2>&1 &
first=$!
"$pytest" -p no:cacheprovider "$@" >"$logs/second.log" 2>&1 &
second=$!
wait $first
first_code=$?
wait $second
second_code=$?
stop_burners
for run in first second; do
  echo "== the $run run: $(tail -n 1 "$logs/$run.log")" >&2
done
if [ $first_code -ne 0 ] || [ $second_code -ne 0 ]; then
  for run in first second; do
    echo "== the $run run's failures:" >&2
    sed -n '/= FAILURES =\|= ERRORS =/,$p' "$logs/$run.log" | tail -n 200 >&2
  done
  echo "test-stress: FAILED (exit codes $first_code and $second_code; logs in $logs)" >&2
  exit 1
fi
echo "test-stress: both runs passed beside $cores CPU burners (logs in $logs)" >&2
