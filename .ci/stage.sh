# Sourced by .ci/run, .ci/beside-cluster and .ci/wait-for-marker.sh.
# stage TEXT: prints "== [M:SS] TEXT", M:SS the time since .ci/run started (CI_START, exported by
# .ci/run; else since this shell sourced the file), so that a run's log is its own timeline: which
# stage waited for which build, and for how long (docs/e2e.md, In CI).
CI_START=${CI_START:-$(date +%s)}
stage() {
  local t=$(( $(date +%s) - CI_START ))
  printf '== [%d:%02d] %s\n' $(( t / 60 )) $(( t % 60 )) "$*"
}
