#!/bin/sh
# Issue 17: `tpuctl ssh USER@NODE` and scp's USER@NODE:path, as gcloud
# takes them: log in as USER, with USER's key line in the node's ssh-keys
# metadata.  The emulator's workers accept only the account the emulator
# runs as (TPUCTL_SSH_USER), so another user fails authentication with a
# message naming that user.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

U=$TPUCTL_SSH_USER
[ -n "$U" ] || fail "the emulator's env has no TPUCTL_SSH_USER"
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
# Another user's line already there: no metadata patch (and its retries)
# for it, so the refusal comes at once.
printf 'bob:%s bob\n' "$(cat "$KEY.pub")" >"$T/keys"
expect_rc 0 "$TPUCTL" create n1 --accelerator-type v4-16 \
    --metadata-from-file "ssh-keys=$T/keys"

# ssh/user says someone else: USER@ wins
export TPUCTL_SSH_USER=nobody-here
expect_rc 0 "$TPUCTL" ssh "$U@n1" --worker=all --ssh-key-file "$KEY" -- \
    'id -un'
assert_grep "^\[w0\] $U\$" "$T/out"
assert_grep "^\[w1\] $U\$" "$T/out"
expect_rc 0 "$TPUCTL" describe n1 --format json
jq -r '.metadata["ssh-keys"]' "$T/out" >"$T/md"
grep -Fxq "$U:$(cut -d' ' -f1,2 "$KEY.pub") $U" "$T/md" ||
    fail "no key line for $U: $(cat "$T/md")"
assert_grep "^bob:" "$T/md"
assert_no_grep "^nobody-here:" "$T/md"

# scp USER@NODE:path, both ways
echo payload >"$T/f"
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" "$T/f" "$U@n1:f31"
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" "$U@n1:f31" "$T/back"
[ "$(cat "$T/back")" = payload ] || fail "scp USER@: $(cat "$T/back")"
# with a full resource name
expect_rc 0 "$TPUCTL" scp --ssh-key-file "$KEY" \
    "$U@projects/tpuctl-emu/locations/$CLOUDSDK_COMPUTE_ZONE/nodes/n1:f31" \
    "$T/back2"
cmp -s "$T/f" "$T/back2" || fail "scp USER@full name"

# another user: refused by the worker, the message names the user
expect_rc 9 "$TPUCTL" ssh bob@n1 --ssh-key-file "$KEY" -- true
assert_grep "permission denied \(publickey\) for user 'bob'" "$T/err"
expect_rc 9 "$TPUCTL" scp --ssh-key-file "$KEY" "$T/f" bob@n1:x
assert_grep "for user 'bob'" "$T/err"

# bad users: one line, exit 2, nothing sent
before=$(emu_requests | wc -l)
expect_rc 2 "$TPUCTL" ssh 'x/y@n1' --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: invalid user in 'x/y@n1'" "$T/err"
expect_rc 2 "$TPUCTL" ssh 'b d@n1' --ssh-key-file "$KEY" -- true
assert_grep "^tpuctl: invalid user in 'b d@n1': expected USER@NODE" "$T/err"
expect_rc 2 "$TPUCTL" ssh '@n1' --ssh-key-file "$KEY" -- true
expect_rc 2 "$TPUCTL" scp --ssh-key-file "$KEY" "$T/f" '@n1:x'
assert_grep "empty user before '@'" "$T/err"
after=$(emu_requests | wc -l)
[ "$before" = "$after" ] || fail "a bad user sent requests"
