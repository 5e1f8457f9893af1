# Sourced by .ci/run and .ci/beside-cluster (from the repository's root).
source .ci/stage.sh
# wait_for_marker FILE PID WHAT LOG: waits until the background job PID has written FILE; when the
# job ended first without it, it failed: prints LOG and stops.
wait_for_marker() {
  local file=$1 pid=$2 what=$3 log=$4
  stage "waiting for $what"
  while [[ ! -e "$file" ]]; do
    kill -0 "$pid" 2>/dev/null || { [[ -e "$file" ]] && break; cat "$log"; echo "$what failed"; exit 1; }
    sleep 5
  done
  stage "ready: $what"
}
