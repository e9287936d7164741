#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# A submitted job starts from its queued resource's startup-script, which
# runs as root with no HOME as on a TPU VM (the emulator's runner does so
# as root: the worker's /etc/passwd holds the login account's home).  The
# job still runs as the SSH user tpuctl's commands log in as, in that
# user's home, so `logs`, `jobs` and `cancel` find it there.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200 --set tpu.qr_provision_ms=1000
fleet_api_setup
cat >"$T/job.yaml" <<'END'
name: sub361
slice:
  accelerator-type: v4-8
command: 'echo "user=$(id -un) USER=$USER LOGNAME=$LOGNAME home=$HOME pwd=$(pwd)"'
END
expect_rc 0 "$TPUCTL" submit "$T/job.yaml"
expect_rc 0 "$TPUCTL" logs --follow sub361
line=$(sed -n 's/^\[w0\] //p' "$T/out")
expect_rc 0 "$TPUCTL" ssh sub361 -- 'echo "$(id -un) $HOME"'
read -r _ u h <"$T/out"
[ "$u" = "$SSH_USER" ] || fail "ssh logs in as $u, not $SSH_USER"
[ "$line" = "user=$u USER=$u LOGNAME=$u home=$h pwd=$h" ] ||
    fail "the job ran as: $line (the SSH user: $u $h)"
# where the job commands look: the SSH user's home
expect_rc 0 "$TPUCTL" ssh sub361 -- 'cat .tpuctl/jobs/sub361/status'
[ "$(cat "$T/out")" = "[w0] exit 0" ] || fail "status: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs --format json
jq -e '.[] | select(.name == "sub361") | .workers[0].state == "exited 0"' "$T/out" \
    >/dev/null || fail "jobs: $(cat "$T/out")"
