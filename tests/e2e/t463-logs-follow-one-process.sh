#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# `logs --follow` and run's follow use one process per worker (one GNU
# tail over both logs: not two tails and a waiting shell); a job that
# prints tail's own headers (for its files, as tail -v does) shows them
# as its output; stdout and stderr stay apart, to the local logs too;
# the follow ends with the job's exit contract.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_fleet.sh
. "$(dirname "$0")/lib_fleet.sh"

emu_start --set fleet.key_delay_ms=200
fleet_api_setup
fleet_create_node t463 v4-16 90
export XDG_STATE_HOME="$T/state"
m=$$
job='echo "==> stdout <=="; printf "\n==> ./stderr <==\n"
d=$HOME/.tpuctl/jobs/$TPUCTL_JOB
tail -v "$d/command"
echo "to err" >&2
sleep 4630.'"$m"'
echo out-end; printf "err-end" >&2; exit 3'
expect_rc 0 "$TPUCTL" run --format 'value(name)' --detach --name p1 t463 \
    --command "$job"
"$TPUCTL" logs --follow p1 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
# every worker's follow is there: one process each, a tail
k=0
until [ "$(pgrep -fc "^tail -v -F .*stdout")" -ge 2 ]; do
	k=$((k + 1))
	[ $k -lt 400 ] || fail "no follow on the workers: $(cat "$T/f.err")"
	sleep 0.05
done
sleep 0.5
for w in 0 1; do
	p=$(cat "$EMU_DIR/fleet/n0/w$w/home/.tpuctl/jobs/p1/pgid")
	t=$(pgrep -f "^tail .*--pid=$p ")
	[ "$(printf '%s\n' "$t" | wc -l)" -eq 1 ] ||
		fail "worker $w: not one tail: $(ps -o pid,ppid,args -p "$(printf '%s' "$t" | tr '\n' ,)")"
	# its session: sshd's process runs nothing else for the follow
	s=$(ps -o ppid= -p "$t" | tr -d ' ')
	[ "$(pgrep -P "$s" | wc -l)" -eq 1 ] ||
		fail "worker $w: the follow's session has more: $(ps -o pid,args --ppid "$s")"
	pgrep -f "^sh -c n=.1 o1=" >/dev/null &&
		fail "a follow shell is left waiting: $(pgrep -fa '^sh -c n=')"
done
pkill -PIPE -f "^sleep 4630.$m\$" || true
set +e
wait "$fpid"
rc=$?
set -e
[ "$rc" -eq 8 ] || fail "logs --follow: exit $rc, not 8: $(cat "$T/f.err")"
for w in 0 1; do
	grep "^\[w$w\] " "$T/f.out" | sed 's/^\[w.\] //' >"$T/got"
	sed -n 1,3p "$T/got" >"$T/got3"
	printf '%s\n' '==> stdout <==' '' '==> ./stderr <==' >"$T/want3"
	cmp -s "$T/got3" "$T/want3" || fail "worker $w: headers of the job's: $(cat "$T/f.out")"
	assert_grep "^\[w$w\] ==> .*/jobs/p1/command <==\$" "$T/f.out"
	assert_grep "^\[w$w\] out-end\$" "$T/f.out"
	assert_grep "^\[w$w\] to err\$" "$T/f.err"
	assert_grep "^\[w$w\] err-end\$" "$T/f.err"
	grep -q '^\[w.\] \(to err\|err-end\)$' "$T/f.out" && fail "stderr on stdout: $(cat "$T/f.out")"
	grep -q '^\[w.\] out-end$' "$T/f.err" && fail "stdout on stderr: $(cat "$T/f.err")"
	printf 'to err\nerr-end' >"$T/want.err"
	cmp -s "$T/state/tpuctl/jobs/p1/s0-w$w.err" "$T/want.err" ||
		fail "worker $w: local stderr log: $(od -c "$T/state/tpuctl/jobs/p1/s0-w$w.err")"
	cmp -s "$T/state/tpuctl/jobs/p1/s0-w$w.out" \
	    "$EMU_DIR/fleet/n0/w$w/home/.tpuctl/jobs/p1/stdout" ||
		fail "worker $w: local stdout log differs from the worker's"
done
assert_grep '^worker 0: exited 3$' "$T/f.err"

# run's own follow of the job it launched: one tail per worker too
"$TPUCTL" run --name p2 t463 --command "sleep 4631.$m; echo done" \
    >"$T/r.out" 2>"$T/r.err" &
rpid=$!
k=0
until [ "$(pgrep -fc "^sleep 4631.$m\$")" -ge 2 ] &&
    [ "$(pgrep -fc "^tail -v -F .*stdout")" -ge 2 ]; do
	k=$((k + 1))
	[ $k -lt 400 ] || fail "run: no follow on the workers: $(cat "$T/r.err")"
	sleep 0.05
done
for w in 0 1; do
	p=$(cat "$EMU_DIR/fleet/n0/w$w/home/.tpuctl/jobs/p2/pgid")
	[ "$(pgrep -fc "^tail .*--pid=$p ")" -eq 1 ] || fail "run, worker $w: not one tail"
	# the job is no child of its follower (a zombie would keep it alive)
	t=$(pgrep -f "^tail .*--pid=$p ")
	[ "$(ps -o ppid= -p "$p" | tr -d ' ')" != "$t" ] || fail "run, worker $w: the job is the tail's child"
done
pkill -PIPE -f "^sleep 4631.$m\$" || true
set +e
wait "$rpid"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "run: exit $rc: $(cat "$T/r.err")"
[ "$(grep -c '^\[w[01]\] done$' "$T/r.out")" -eq 2 ] || fail "run: $(cat "$T/r.out")"
