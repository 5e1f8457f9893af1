# Shared by scripts/install-ray.sh and scripts/install-sglang-router.sh, which install pinned PyPI
# requirements into a virtualenv under the repository. Source it after defining log and fail, then
#   pip_venv_install PYTHON VENV REQUIREMENTS
# creates VENV with PYTHON when it has no interpreter, holds VENV.lock (fd 9) for the rest of the
# script, removes the stamp (`.rayshift-stamp`, written by the caller once everything works) and
# installs REQUIREMENTS; and
#   pip_venv_current VENV STAMP PROGRAM
# which is true when PROGRAM is executable and VENV's stamp is STAMP (nothing to install).
# shellcheck shell=bash

pip_venv_current() {
  local venv=$1 stamp=$2 program=$3
  [[ -x "$program" && -f "$venv/.rayshift-stamp" && "$(cat "$venv/.rayshift-stamp")" == "$stamp" ]]
}

pip_venv_install() {
  local python=$1 venv=$2 requirements=$3
  mkdir -p "$venv"
  exec 9>"$venv.lock"
  flock 9
  if [[ ! -x "$venv/bin/python" ]]; then
    log "creating the virtualenv $venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv" || fail "python -m venv failed"
  fi
  rm -f "$venv/.rayshift-stamp"
  log "installing $(grep -v '^#' "$requirements" | xargs) from PyPI"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet -r "$requirements" >&2 \
    || fail "pip install failed (is PyPI reachable?)"
}
