#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# Detached jobs: run --detach returns at once and the job goes on;
# a `logs --follow` killed with -9, and an attached run killed with -9,
# leave the job running, and a later `logs --follow` shows every line
# exactly once and ends with the job's exit contract; `cancel` leaves no
# process of the job on any worker; `jobs` shows the final states; a
# workdir with spaces, non-ASCII names, a newline, modes and symlinks
# arrives byte for byte and is not sent again unchanged; the logs stay
# readable once the node is gone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t302 v4-16 90

count='i=0; while [ $i -lt 30 ]; do echo "line $i"; i=$((i + 1)); sleep 0.1; done; echo done >&2'

# every worker has lines 0..29 exactly once, in order, and "done"
check_once() {
	for w in 0 1; do
		grep "^\[w$w\] line " "$1" | sed 's/^\[w.\] line //' >"$T/got"
		seq 0 29 >"$T/want"
		cmp -s "$T/got" "$T/want" || {
			cat "$1" >&2
			fail "worker $w: lines not exactly once in order ($1)"
		}
		[ "$(grep -c "^\[w$w\] done\$" "$2")" -eq 1 ] ||
			fail "worker $w: 'done' not once in $2: $(cat "$2")"
	done
}

# Detached: returns at once with the name; the job runs on.
expect_rc 0 "$TPUCTL" run --format 'value(name)' --detach --name d1 t302 \
    --command "$count"
[ "$(cat "$T/out")" = d1 ] || fail "detach printed: $(cat "$T/out")"
assert_grep 'tpuctl logs --follow d1' "$T/err"
# a follower killed with -9 midway
"$TPUCTL" logs --follow d1 >"$T/f1.out" 2>"$T/f1.err" &
fpid=$!
sleep 1
kill -9 "$fpid"
wait "$fpid" || true
grep -q '^\[w[01]\] line ' "$T/f1.out" || fail "first follower saw nothing"
# Ctrl-C stops the following only: 130, the job goes on
"$TPUCTL" logs --follow d1 >"$T/f2.out" 2>"$T/f2.err" &
fpid=$!
sleep 0.5
kill -INT "$fpid"
set +e
wait "$fpid"
rc=$?
set -e
[ "$rc" -eq 130 ] || fail "logs --follow after SIGINT: exit $rc: $(cat "$T/f2.err")"
assert_grep 'stopped following job d1 \(it goes on running\)' "$T/f2.err"
expect_rc 0 "$TPUCTL" logs --follow d1
check_once "$T/out" "$T/err"
assert_grep '^worker 1: exited 0$' "$T/err"
# once more, ended: the whole log again, from the local copy and the rest
expect_rc 0 "$TPUCTL" logs d1
check_once "$T/out" "$T/err"
expect_rc 0 "$TPUCTL" logs --output raw --worker 1 --since 28 d1
[ "$(cat "$T/out")" = "line 28
line 29" ] || fail "raw --since: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" logs --output jsonl --worker 0 d1
assert_grep '^\{"job":"d1","node":"t302","worker":0,"stream":"stdout","line":"line 0"\}$' "$T/out"

# An attached run killed with -9: the job finishes anyway.
"$TPUCTL" run --name k9 t302 --command "$count" >"$T/k.out" 2>"$T/k.err" &
kpid=$!
sleep 1.2
kill -9 "$kpid"
wait "$kpid" || true
expect_rc 0 "$TPUCTL" logs --follow k9
check_once "$T/out" "$T/err"

# cancel: nothing of the job is left on any worker.
mark="417.$$"
expect_rc 0 "$TPUCTL" run --detach --name c1 t302 -- \
    sh -c "echo started; sleep $mark; echo never"
i=0
until "$TPUCTL" logs c1 2>/dev/null | grep -q '^\[w1\] started'; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "c1 never started"
	sleep 0.1
done
pgrep -f "^sleep $mark\$" >/dev/null || fail "the job is not running"
expect_rc 0 "$TPUCTL" cancel --grace 5 c1
assert_grep '^worker 0: killed by TERM$' "$T/err"
assert_grep '^worker 1: killed by TERM$' "$T/err"
if pgrep -f "^sleep $mark\$" >/dev/null; then
	fail "processes left after cancel: $(pgrep -af "sleep $mark")"
fi
expect_rc 8 "$TPUCTL" logs c1
assert_no_grep never "$T/out"

# jobs: the final states.
expect_rc 0 "$TPUCTL" jobs --format json
[ "$(jq -r '.[] | select(.name == "d1") | .state' "$T/out")" = "2 exited 0" ] ||
	fail "jobs d1: $(cat "$T/out")"
[ "$(jq -r '.[] | select(.name == "c1") | .state' "$T/out")" = "2 killed by TERM" ] ||
	fail "jobs c1: $(cat "$T/out")"
[ "$(jq -r '.[] | select(.name == "c1") | .workers[1].state' "$T/out")" = "killed by TERM" ] ||
	fail "jobs c1 workers: $(cat "$T/out")"
expect_rc 0 "$TPUCTL" jobs t302 --format 'value(name,slice)'
assert_grep '^k9	t302$' "$T/out"
expect_rc 0 "$TPUCTL" jobs nothing-here --format 'value(name)'
[ ! -s "$T/out" ] || fail "jobs of another slice: $(cat "$T/out")"

# A workdir with awkward names arrives byte for byte.
wd="$T/wd"
mkdir -p "$wd/a b/sub dir" "$wd/日本"
printf 'hello\n' >"$wd/a b/c d.txt"
printf 'caf\303\251\n' >"$wd/né.txt"
printf '#!/bin/sh\necho x\n' >"$wd/日本/run me.sh"
chmod 755 "$wd/日本/run me.sh"
chmod 600 "$wd/né.txt"
printf 'nl' >"$wd/new
line"
head -c 100000 /dev/urandom >"$wd/a b/sub dir/blob"
ln -s "a b/c d.txt" "$wd/link to c"
ln -s "../does not exist" "$wd/日本/dangling"
cat >"$T/tree.py" <<'PY'
import hashlib, os, stat, sys
h = hashlib.sha256()
top = sys.argv[1].encode()
for d, dirs, files in os.walk(top):
    dirs.sort()
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        st = os.lstat(p)
        h.update(os.path.relpath(p, top) + b"\0")
        if stat.S_ISLNK(st.st_mode):
            h.update(b"L" + os.readlink(p) + b"\0")
        elif stat.S_ISDIR(st.st_mode):
            h.update(b"D%o\0" % (st.st_mode & 0o7777))
        else:
            h.update(b"F%o\0" % (st.st_mode & 0o7777))
            h.update(open(p, "rb").read())
print(h.hexdigest())
PY
tree=$(/usr/bin/python3 "$T/tree.py" "$wd")
expect_rc 0 "$TPUCTL" -v run --name wd1 --workdir "$wd" t302 -- \
    /usr/bin/python3 -c "$(cat "$T/tree.py")" .
assert_grep "^\[w0\] $tree\$" "$T/out"
assert_grep "^\[w1\] $tree\$" "$T/out"
assert_grep 'workdir sent to 2 of 2 workers' "$T/err"
# unchanged: not sent again
expect_rc 0 "$TPUCTL" -v run --name wd2 --workdir "$wd" t302 -- ls
assert_no_grep 'workdir sent' "$T/err"
assert_grep '^\[w1\] link to c$' "$T/out"

# The node gone: the logs kept locally are still there.
expect_rc 0 "$TPUCTL" delete -q t302
expect_rc 0 "$TPUCTL" logs d1
check_once "$T/out" "$T/err"
assert_grep 'showing the logs kept locally' "$T/err"
