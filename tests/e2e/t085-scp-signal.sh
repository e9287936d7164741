#!/bin/sh
# SIGTERM and SIGINT in the middle of one big file (issue 19 defect 2:
# scp used to ignore both until the file ended): `tpuctl scp --worker all
# BIG pod:up` exits 143 / 130 within two seconds; no worker is left with
# a partial "up" nor its temp file "up.tpuctl-tmp", and an "up" that was
# there before keeps its old content (uploads go to a temp name renamed
# when complete).  The same for a download: 130, no partial local file.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
head -c 268435456 /dev/zero >"$T/big"
echo old >"$T/old"

# the key is in the metadata, host keys pinned: what follows is transfer
expect_rc 0 "$TPUCTL" scp --worker all --ssh-key-file "$KEY" "$T/old" pod:up
expect_rc 0 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" -- pwd
homes=$(sed 's/^\[w[0-9]*\] //' "$T/out")
[ "$(echo "$homes" | wc -l)" -eq 4 ] || fail "no worker homes: $(cat "$T/out")"
for h in $homes; do
	[ "$(cat "$h/up")" = old ] || fail "$h/up: not uploaded"
done

# some worker has a temp file: the transfer is under way
any_tmp() {
	for h in $homes; do
		[ ! -s "$h/up.tpuctl-tmp" ] || return 0
	done
	return 1
}

# $1: signal, $2: the exit status it must give
interrupt_upload() {
	"$TPUCTL" scp --worker all --ssh-key-file "$KEY" "$T/big" pod:up \
	    >"$T/out" 2>"$T/err" &
	pid=$!
	n=0
	until any_tmp; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "$1: no transfer started: $(cat "$T/err")"
		kill -0 $pid 2>/dev/null || fail "$1: scp ended: $(cat "$T/err")"
		sleep 0.1
	done
	sleep 1
	kill -0 $pid 2>/dev/null || fail "$1: the upload ended before the signal"
	kill "-$1" $pid
	start=$(date +%s%N)
	rc=0
	wait $pid || rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	[ $rc -eq "$2" ] || fail "$1: exit $rc, want $2: $(cat "$T/err")"
	[ $ms -lt 2000 ] || fail "$1: took $ms ms to stop"
	for h in $homes; do
		[ "$(cat "$h/up")" = old ] || fail "$1: $h/up was replaced"
		[ ! -e "$h/up.tpuctl-tmp" ] || fail "$1: $h/up.tpuctl-tmp left"
	done
}
interrupt_upload TERM 143
interrupt_upload INT 130

# a download interrupted inside the file: nothing at the destination
expect_rc 0 "$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" "$T/big" pod:big
"$TPUCTL" scp --worker 0 --ssh-key-file "$KEY" pod:big "$T/dl" \
    >"$T/out" 2>"$T/err" &
pid=$!
n=0
until [ -s "$T/dl.tpuctl-tmp" ]; do
	n=$((n + 1))
	[ $n -lt 200 ] || fail "download: no transfer started: $(cat "$T/err")"
	kill -0 $pid 2>/dev/null || fail "download: scp ended: $(cat "$T/err")"
	sleep 0.05
done
kill -INT $pid
rc=0
wait $pid || rc=$?
[ $rc -eq 130 ] || fail "download: exit $rc, want 130: $(cat "$T/err")"
[ ! -e "$T/dl" ] || fail "download: a partial file was left"
[ ! -e "$T/dl.tpuctl-tmp" ] || fail "download: the temp file was left"
