#!/bin/sh
# t235: a "tpuctl data cp" upload killed while writing its tracker leaves
# uploads/<hash>.json.tmp-XXXXXXXXXXXX (0600, live session URLs): the next
# resumable upload sweeps such temps once they are stale (older than five
# minutes), and keeps a fresh one (a live writer's) and every tracker
# (issue 19 defect 9).

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
mkbucket e2e-sw
U="$XDG_CACHE_HOME/tpuctl/uploads"
mkdir -p "$U"
chmod 700 "$U"
stale="$U/0123456789abcdef.json.tmp-0a1b2c3d4e5f"
fresh="$U/fedcba9876543210.json.tmp-abcdefabcdef"
tracker="$U/00112233445566778899.json"
for f in "$stale" "$fresh" "$tracker"; do
	printf '{"session":"http://127.0.0.1:9/upload?upload_id=canary"}\n' >"$f"
	chmod 600 "$f"
done
touch -d '-1 hour' "$stale" "$tracker"

# a resumable upload (over 8 MiB) looks at the tracker directory
mkfile "$T/f" 9000000
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-sw/f
[ ! -e "$stale" ] || fail "the stale tracker temp was not swept"
[ -e "$fresh" ] || fail "a fresh temp (a live writer's) was removed"
[ -e "$tracker" ] || fail "a tracker was removed"

# a second upload: still nothing swept that is not stale
expect_rc 0 "$TPUCTL" data cp "$T/f" gs://e2e-sw/g
for f in "$U"/*; do
	case $f in
	"$fresh" | "$tracker") ;;
	*) fail "left in the tracker directory: $f" ;;
	esac
done
# the planted live writer's temp is this test's own, not a leak
rm -f "$fresh"
exit 0
