#!/bin/sh
# Issue 17: gcloud's ssh and scp flags.  --batch-size (= --fanout),
# --output-directory (= --output-dir), --dry-run (per worker, what would
# run and where; nothing sent), --ssh-key-expire-after and
# --ssh-key-expiration (gcloud's expiring ssh-keys line); --plain,
# --ssh-flag, --scp-flag, --force-key-file-overwrite, --compress refused
# with one line saying why.
# shellcheck disable=SC2016 # remote shells expand these
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

U=$TPUCTL_SSH_USER
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
PUB=$(cut -d' ' -f1,2 "$KEY.pub")
expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
base=$(emu_tpu_mutations)

# --dry-run: the key is not in the metadata yet, and the port is closed:
# a line per worker, no PATCH, no connection (it would fail on port 1).
TPUCTL_SSH_PORT=1 expect_rc 0 "$TPUCTL" ssh pod --worker=all --dry-run \
    --ssh-key-file "$KEY" -- 'echo hi'
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "dry-run lines: $(cat "$T/out")"
for w in 0 1 2 3; do
	assert_grep "^\[w$w\] $U@127\.[0-9.]+:1: would run: echo hi\$" "$T/out"
done
[ "$(emu_tpu_mutations)" = "$base" ] || fail "dry-run sent: $(emu_tpu_mutations)"
TPUCTL_SSH_PORT=1 expect_rc 0 "$TPUCTL" ssh pod --dry-run --ssh-key-file "$KEY"
assert_grep "^\[w0\] $U@127\.[0-9.]+:1: would open an interactive shell\$" "$T/out"
echo x >"$T/f"
TPUCTL_SSH_PORT=1 expect_rc 0 "$TPUCTL" scp --dry-run --worker=0,2 \
    --ssh-key-file "$KEY" "$T/f" pod:dst
assert_grep "^\[w2\] $U@127\.[0-9.]+:1: would upload $T/f to dst\$" "$T/out"
TPUCTL_SSH_PORT=1 expect_rc 0 "$TPUCTL" scp --dry-run --worker=all \
    --ssh-key-file "$KEY" pod:src "$T/d"
assert_grep "^\[w3\] $U@127\.[0-9.]+:1: would download src to $T/d/w3\$" "$T/out"
[ ! -e "$T/d" ] || fail "scp --dry-run created $T/d"
[ "$(emu_tpu_mutations)" = "$base" ] || fail "dry-run sent: $(emu_tpu_mutations)"

# --batch-size and --output-directory: gcloud's names
expect_rc 0 "$TPUCTL" ssh pod --worker=all --batch-size 1 \
    --ssh-key-file "$KEY" -- 'echo b$TPU_WORKER_ID'
[ "$(grep -c '^\[w[0-3]\] b' "$T/out")" -eq 4 ] || fail "batch-size: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" ssh pod --worker=all --batch-size all \
    --ssh-key-file "$KEY" -- true
expect_rc 2 "$TPUCTL" ssh pod --batch-size 0 --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: --batch-size '0': .*\(1-4096, or all\)\$" "$T/err"
mkdir "$T/logs"
expect_rc 0 "$TPUCTL" ssh pod --worker=1 --output-directory "$T/logs" \
    --ssh-key-file "$KEY" -- 'echo to-file'
assert_grep '^to-file$' "$T/logs/w1.log"

# --ssh-key-expire-after: gcloud's line, and the key's other line goes
expect_rc 0 "$TPUCTL" describe pod --format json
jq -r '.metadata["ssh-keys"]' "$T/out" >"$T/md"
grep -Fxq "$U:$PUB $U" "$T/md" || fail "no key line: $(cat "$T/md")"
expect_rc 0 "$TPUCTL" ssh pod --ssh-key-expire-after 1h --ssh-key-file "$KEY" \
    -- 'echo exp'
[ "$(cat "$T/out")" = "[w0] exp" ] || fail "expire-after: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" describe pod --format json
jq -r '.metadata["ssh-keys"]' "$T/out" >"$T/md"
[ "$(grep -c "^$U:" "$T/md")" -eq 1 ] || fail "key lines: $(cat "$T/md")"
line=$(grep "^$U:" "$T/md")
when=$(printf '%s' "$line" | sed -n 's/.*"expireOn":"\([^"]*\)".*/\1/p')
[ "$line" = "$U:$PUB google-ssh {\"userName\":\"$U\",\"expireOn\":\"$when\"}" ] ||
    fail "expiring line: $line"
exp=$(date -u -d "$(printf '%s' "$when" | sed 's/+0000$/Z/')" +%s)
now=$(date -u +%s)
if [ $((exp - now)) -le 3500 ] || [ $((exp - now)) -gt 3600 ]; then
	fail "expireOn $when is not an hour from now"
fi
expect_rc 0 "$TPUCTL" scp --ssh-key-expiration 2099-01-02T03:04:05Z \
    --ssh-key-file "$KEY" "$T/f" pod:f32
expect_rc 0 "$TPUCTL" describe pod --format json
jq -r '.metadata["ssh-keys"]' "$T/out" >"$T/md"
grep -Fxq "$U:$PUB google-ssh {\"userName\":\"$U\",\"expireOn\":\"2099-01-02T03:04:05+0000\"}" \
    "$T/md" || fail "expiration line: $(cat "$T/md")"
[ "$(grep -c "^$U:" "$T/md")" -eq 1 ] || fail "key lines: $(cat "$T/md")"

# bad values and refused flags: one line, exit 2, nothing sent
before=$(emu_tpu_mutations)
expect_rc 2 "$TPUCTL" ssh pod --ssh-key-expiration 2001-01-01T00:00:00Z -- true
assert_grep "^tpuctl: invalid --ssh-key-expiration '2001-01-01T00:00:00Z': the time is past\$" "$T/err"
expect_rc 2 "$TPUCTL" ssh pod --ssh-key-expiration tomorrow -- true
assert_grep "expected an RFC 3339 time" "$T/err"
expect_rc 2 "$TPUCTL" ssh pod --ssh-key-expire-after 1h \
    --ssh-key-expiration 2099-01-01T00:00:00Z -- true
assert_grep "not both" "$T/err"
expect_rc 2 "$TPUCTL" ssh pod --ssh-key-expire-after soon -- true
expect_rc 2 "$TPUCTL" ssh pod --ssh-flag=-L8080:localhost:8080
assert_grep "^tpuctl: --ssh-flag=-L8080:localhost:8080: for port forwarding use 'tpuctl forward NODE PORT'" "$T/err"
expect_rc 2 "$TPUCTL" ssh pod -- -L 6006:localhost:6006
assert_grep "^tpuctl: '-L' after the node: .*use 'tpuctl forward NODE PORT'" "$T/err"
expect_rc 2 "$TPUCTL" ssh pod -- -D1080
assert_grep "^tpuctl: '-D1080' after the node" "$T/err"
expect_rc 2 "$TPUCTL" ssh pod --ssh-flag=-vvv -- true
assert_grep "^tpuctl: --ssh-flag=-vvv: tpuctl runs no ssh\(1\)" "$T/err"
expect_rc 2 "$TPUCTL" scp --scp-flag=-C "$T/f" pod:x
assert_grep "^tpuctl: --scp-flag=-C: " "$T/err"
expect_rc 2 "$TPUCTL" ssh pod --plain -- true
assert_grep "^tpuctl: --plain: tpuctl speaks SSH itself" "$T/err"
expect_rc 2 "$TPUCTL" ssh pod --force-key-file-overwrite -- true
assert_grep "^tpuctl: --force-key-file-overwrite: tpuctl never overwrites" "$T/err"
expect_rc 2 "$TPUCTL" scp --compress "$T/f" pod:x
assert_grep "^tpuctl: --compress: " "$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
[ "$(emu_tpu_mutations)" = "$before" ] || fail "a refused flag sent requests"
