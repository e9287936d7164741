#!/bin/sh
# tpuctl recipe body, common to every framework.  tpuctl runs on every
# worker the framework's part (recipes/<framework>.sh: it sets name, and
# hint, a line printed after a fresh install) followed by this text, as
#   sh -c "$(cat <framework>.sh common.sh)" <framework> REQUIREMENT...
# with the pins of config/compat.json passed in by tpuctl:
#   TPUCTL_VERSION      the framework version ("0.6.1")
#   TPUCTL_PACKAGES     "dist=version ..." that must be installed afterwards
#                       (a version matches itself and its .N patches)
#   TPUCTL_PYTHON_MIN   the oldest Python the version supports
#   TPUCTL_PIP_OPTS     --find-links/--no-index options (word-split)
#   TPUCTL_PYTHON       the interpreter (default python3)
# Idempotent: when every package is already at its pin, it says so and
# changes nothing.  pip installs with --user (~/.local): on a TPU VM
# image (Ubuntu 22.04) that works as is; where the interpreter is
# externally managed (PEP 668, Debian 12) --break-system-packages is
# added, which is safe with --user (nothing under /usr is touched).
# Exit status: 0 installed or nothing to do, 3 no Python or too old,
# 4 pip failed, 5 installed versions do not match the pins.
# shellcheck disable=SC2154 # name and hint: set by the framework's part
set -eu
py=${TPUCTL_PYTHON:-python3}
: "${TPUCTL_VERSION:?}" "${TPUCTL_PACKAGES:?}" "${TPUCTL_PYTHON_MIN:?}"

if ! command -v "$py" >/dev/null 2>&1; then
	echo "$name: no $py on this worker"
	exit 3
fi
# shellcheck disable=SC2016 # Python code
check='
import sys
from importlib import metadata
bad = []
have = []
for spec in sys.argv[1:]:
    dist, want = spec.split("=", 1)
    try:
        v = metadata.version(dist)
    except metadata.PackageNotFoundError:
        bad.append("%s missing" % dist)
        continue
    have.append("%s %s" % (dist, v))
    if v != want and not v.startswith(want + "."):
        bad.append("%s %s, want %s" % (dist, v, want))
print(", ".join(bad if bad else have))
sys.exit(1 if bad else 0)
'
if ! "$py" -c '
import sys
want = tuple(int(x) for x in sys.argv[1].split("."))
sys.exit(0 if sys.version_info[:len(want)] >= want else 1)
' "$TPUCTL_PYTHON_MIN"; then
	echo "$name $TPUCTL_VERSION needs Python >= $TPUCTL_PYTHON_MIN; $py is $("$py" -c 'import platform; print(platform.python_version())')"
	exit 3
fi
# shellcheck disable=SC2086 # TPUCTL_PACKAGES is a word list
if state=$("$py" -c "$check" $TPUCTL_PACKAGES); then
	echo "$name $TPUCTL_VERSION already installed ($state): nothing to do"
	exit 0
fi
echo "$name $TPUCTL_VERSION: installing ($state)"
set -- --user "$@"
if "$py" -c '
import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)
'; then
	set -- --break-system-packages "$@"
fi
# shellcheck disable=SC2086 # TPUCTL_PIP_OPTS is a word list
if ! "$py" -m pip install --disable-pip-version-check --no-input \
    --progress-bar off ${TPUCTL_PIP_OPTS:-} "$@"; then
	echo "$name $TPUCTL_VERSION: pip install failed"
	exit 4
fi
# shellcheck disable=SC2086
if ! state=$("$py" -c "$check" $TPUCTL_PACKAGES); then
	echo "$name $TPUCTL_VERSION: installed versions do not match the pins: $state"
	exit 5
fi
echo "$name $TPUCTL_VERSION installed ($state)"
[ -z "${hint:-}" ] || echo "$hint"
