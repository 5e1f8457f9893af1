# Shared by the scripts that run Go commands which may fetch modules from the Go module proxy.
# shellcheck shell=bash

# Runs "$@" (a go command), and runs it again, up to three tries 15 s and 45 s apart, when it failed
# on a transient network error from the module proxy: a cold run of 2 December lost its Pulumi
# toolchain, and with it the whole CI run, to one "TLS handshake timeout" from proxy.golang.org.
# Any other failure (a compile error, a refused version) ends at once; the module cache keeps what
# an earlier try downloaded, so a retry fetches only the rest. The output is shown after each try.
proxy_retry() {
  local try err rc delay
  err="$(mktemp)"
  for try in 1 2 3; do
    rc=0
    "$@" 2>"$err" || rc=$?
    cat "$err" >&2
    if ((rc == 0)); then rm -f "$err"; return 0; fi
    if ((try == 3)) || ! grep -Eq 'TLS handshake timeout|i/o timeout|connection reset by peer|connection refused|unexpected EOF|no such host|network is unreachable|stream error|(502 Bad Gateway|503 Service Unavailable|504 Gateway Timeout)' "$err"; then
      rm -f "$err"
      return "$rc"
    fi
    delay=$((try == 1 ? 15 : 45))
    printf '[go] a transient network error from the Go module proxy (try %d of 3); trying again in %d s\n' \
      "$try" "$delay" >&2
    sleep "$delay"
  done
}
