#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# run --max-restarts --checkpoint on a spot node: at the preemption
# notice (instance/preempted TRUE, tpu.preempt_notice_ms before the
# workers stop) the job gets SIGTERM from the watcher beside it, saves
# its step to TPUCTL_CHECKPOINT in the bucket (python3's standard
# library, no tpuctl on the worker), the node is deleted only once the
# job has ended, recreated, and the next attempt resumes from the saved
# step.  Bad --checkpoint values are exit 2 with nothing sent.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

have_tool python3 || skip "python3 is not installed"
emu_start --set fleet.key_delay_ms=200 --set tpu.preempt_notice_ms=4000
fleet_api_setup
expect_rc 0 "$TPUCTL" create t353 --accelerator-type v4-8 --spot \
    --version tpu-ubuntu2204-base

before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" run t353 --checkpoint /tmp/ckpt -- true
assert_grep "^tpuctl: --checkpoint '/tmp/ckpt': must be a gs://BUCKET\[/PREFIX\] URL$" "$T/err"
expect_rc 2 "$TPUCTL" run t353 --checkpoint gs://B_ad/x -- true
assert_grep '^tpuctl: --checkpoint: ' "$T/err"
[ "$(emu_requests | wc -l)" -eq "$before" ] || fail "bad input made requests"

expect_rc 0 "$TPUCTL" data mb gs://ck353
mkdir "$T/wd"
cat >"$T/wd/train.py" <<'PY'
import json, os, signal, sys, time
import urllib.error, urllib.parse, urllib.request

md = os.environ.get("GCE_METADATA_HOST", "metadata.google.internal")
gcs = os.environ["STORAGE_EMULATOR_HOST"].rstrip("/")
bucket, _, prefix = os.environ["TPUCTL_CHECKPOINT"][5:].partition("/")
name = urllib.parse.quote(prefix.rstrip("/") + "/state.json", safe="")
restarts = int(os.environ["TPUCTL_RESTART_COUNT"])


def auth():
    r = urllib.request.Request(
        "http://%s/computeMetadata/v1/instance/service-accounts/default/token"
        % md, headers={"Metadata-Flavor": "Google"})
    return {"Authorization": "Bearer " + json.load(
        urllib.request.urlopen(r))["access_token"]}


step = 0
print("start r%d" % restarts, flush=True)
if restarts > 0:
    try:
        r = urllib.request.Request("%s/storage/v1/b/%s/o/%s?alt=media"
                                   % (gcs, bucket, name), headers=auth())
        step = json.load(urllib.request.urlopen(r))["step"]
        print("resumed at step %d" % step, flush=True)
    except urllib.error.HTTPError as e:
        print("no checkpoint: HTTP %d" % e.code, flush=True)


def save(sig, frame):
    h = auth()
    h["Content-Type"] = "application/json"
    r = urllib.request.Request(
        "%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s"
        % (gcs, bucket, name), data=json.dumps({"step": step}).encode(),
        method="POST", headers=h)
    urllib.request.urlopen(r).read()
    sys.exit(143)


signal.signal(signal.SIGTERM, save)
end = step + 20 if restarts > 0 else 1 << 30
while step < end:
    step += 1
    if step == 5:
        print("step 5", flush=True)
    time.sleep(0.05)
print("done at step %d" % step, flush=True)
PY

"$TPUCTL" run t353 --name cj --max-restarts 1 --checkpoint gs://ck353/run1 \
    --env "STORAGE_EMULATOR_HOST=$STORAGE_EMULATOR_HOST" \
    --workdir "$T/wd" -- python3 train.py >"$T/r.out" 2>"$T/r.err" &
rpid=$!
wait_for_grep "$T/r.out" 'step 5$' "" 120
"$EMULATOR" event --state-dir "$EMU_DIR" preempt --node t353 || fail "preempt failed"
rc=0
wait "$rpid" || rc=$?
[ "$rc" -eq 0 ] || fail "run after a preemption: exit $rc: $(cat "$T/r.out" "$T/r.err")"
assert_grep 'preemption notice \(instance/preempted is TRUE\): SIGTERM to the job$' "$T/r.err"
assert_grep 'job cj: waiting until the job has ended on every worker' "$T/r.err"
assert_grep 'job cj: attempt 1 ended: node t353 is PREEMPTED; restart 1 of 1, recreating the node$' "$T/r.err"
# the checkpoint the first attempt saved on SIGTERM ...
expect_rc 0 "$TPUCTL" data cat gs://ck353/run1/state.json
saved=$(jq -r .step "$T/out")
[ "$saved" -ge 5 ] 2>/dev/null || fail "checkpoint: $(cat "$T/out")"
# ... is where the second one resumed, and went on from
assert_grep '^\[w0\] start r1$' "$T/r.out"
assert_grep "^\\[w0\\] resumed at step $saved\$" "$T/r.out"
assert_grep "^\\[w0\\] done at step $((saved + 20))\$" "$T/r.out"
assert_no_grep 'no checkpoint' "$T/r.out"
expect_rc 0 "$TPUCTL" list --format json
jq -e 'length == 1 and .[0].state == "READY"' "$T/out" >/dev/null ||
	fail "after recovery: $(cat "$T/out")"

# Without --max-restarts or --checkpoint no watcher runs: the command
# is launched as given.
expect_rc 0 "$TPUCTL" run t353 --name pj --command 'cat "$HOME/.tpuctl/jobs/pj/command"'
assert_no_grep 'tpuctl-notice' "$T/out"
# --checkpoint alone: exported, watcher on.
expect_rc 0 "$TPUCTL" run t353 --name qj --checkpoint gs://ck353/q --command \
    'echo "ck=$TPUCTL_CHECKPOINT"; cat "$HOME/.tpuctl/jobs/qj/command"'
assert_grep '^\[w0\] ck=gs://ck353/q$' "$T/out"
assert_grep 'tpuctl-notice' "$T/out"
echo ok
