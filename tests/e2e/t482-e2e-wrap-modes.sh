#!/bin/sh
# shellcheck disable=SC2016 # the fake tests expand their own variables
# The e2e runner's wrapper modes (run.sh E2E_WRAP=valgrind|fiu, make
# check-deep: RELIABILITY.md G2, G5, S12) on fake tests whose tpuctl is a
# planted stand-in that misbehaves on request: under valgrind a definite
# leak, an invalid read and an abort are each reported as a bad
# invocation (with the command line), an exit 42 is not, the run fails
# and closes "G5: N invocations, M bad"; a run whose invocations are
# clean passes even when its test fails.  Under fiu an abort, an exit
# status outside the contract (42; the same from ssh is the remote's and
# passes), a hang past E2E_WRAP_BOUND and a temp file an invocation left
# (not one the test made) are reported, with the seed; the failure spec really reaches the
# binary (a forced open failure makes the stand-in abort); exit status,
# output and SIGTERM pass through the wrapper, and the stand-in dies with
# it.  Plain build only (valgrind, LD_PRELOAD).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
have_tool valgrind valgrind "G5 wrapper" || exit 77
have_tool fiu-run fiu-utils "G2 wrapper" || exit 77
have_tool cc gcc "the stand-in" || exit 77

S="$T/suite"
B="$T/planted"
mkdir -p "$S" "$B" "$T/reliability" "$T/logs"
cp "$E2E_DIR/run.sh" "$E2E_DIR/lib.sh" "$S/"
cp "$SRCDIR/tests/reliability/wrap.c" "$SRCDIR/tests/reliability/valgrind.supp" \
    "$T/reliability/"
cat >"$T/planted.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	if (strcmp(c, "leak") == 0) {
		char *volatile p = malloc(64);
		memset(p, 1, 64);
		p = NULL;
		return 0;
	}
	if (strcmp(c, "badread") == 0) {
		char *volatile p = malloc(8);
		int x = p[9];
		free(p);
		return x == 77;
	}
	if (strcmp(c, "crash") == 0)
		abort();
	if ((strcmp(c, "exit") == 0 || strcmp(c, "ssh") == 0) && argc > 2)
		return atoi(argv[2]);
	if (strcmp(c, "ok") == 0)
		return puts("hello") < 0;
	if (strcmp(c, "sleep") == 0 && argc > 2)
		return sleep((unsigned)atoi(argv[2])) != 0;
	if (strcmp(c, "tmp") == 0 && argc > 2) {
		int fd = open(argv[2], O_WRONLY | O_CREAT, 0600);
		return fd < 0 || write(fd, "part", 4) != 4;
	}
	if (strcmp(c, "open") == 0 && argc > 2) {
		if (open(argv[2], O_RDONLY) < 0)
			abort(); /* a crash on an I/O failure */
		return 0;
	}
	return 2;
}
EOF
cc -O0 -g -o "$B/tpuctl" "$T/planted.c" || fail "cannot build the stand-in"

hdr='. "$(dirname "$0")/lib.sh"'
printf '%s\n' "$hdr" 'set +e' '"$TPUCTL" leak' '"$TPUCTL" badread' \
    '"$TPUCTL" crash' '"$TPUCTL" exit 42' '"$TPUCTL" ok' 'exit 0' \
    >"$S/t001-vgbad.sh"
printf '%s\n' "$hdr" '"$TPUCTL" ok >/dev/null' 'fail "slow"' \
    >"$S/t002-clean.sh"
printf '%s\n' "$hdr" 'set +e' '"$TPUCTL" crash' '"$TPUCTL" exit 42' \
    '"$TPUCTL" ssh 42' '"$TPUCTL" sleep 30' \
    '"$TPUCTL" tmp "$T/d.tpuctl-tmp"' ': >"$T/p.tpuctl-tmp"' \
    '"$TPUCTL" exit 0' 'exit 0' >"$S/t003-fiubad.sh"
printf '%s\n' "$hdr" 'set +e' \
    '[ "$("$TPUCTL" ok)" = hello ] || fail "output lost"' \
    '"$TPUCTL" exit 7; [ $? = 7 ] || fail "exit status lost"' \
    '"$TPUCTL" sleep 31 & p=$!' 'sleep 0.5' 'kill -TERM $p' 'wait $p' \
    'rc=$?; [ $rc = 143 ] || fail "SIGTERM: exit $rc"' 'sleep 0.5' \
    '! pgrep -f "$BIN_DIR/tpuctl sleep 31" || fail "stand-in left running"' \
    'exit 0' >"$S/t004-pass.sh"
printf '%s\n' "$hdr" 'set +e' '"$TPUCTL" open /etc/hostname' 'exit 0' \
    >"$S/t005-fiuopen.sh"

# runs NAME [ENV=V...]: the fake suite, output in $T/NAME.out, rc in $rc
runs() {
	_n=$1
	shift
	mkdir -p "$T/logs"
	set +e
	env -u E2E_WRAP_BIN -u E2E_WRAP_MODE E2E_LOG_DIR="$T/logs" \
	    TPUCTL_BIN_DIR="$B" E2E_JOBS=1 "$@" sh "$S/run.sh" >"$T/$_n.out" 2>&1
	rc=$?
	set -e
}

runs vg E2E_WRAP=valgrind TESTS="t001 t002"
[ $rc = 1 ] || fail "valgrind, planted errors: exit $rc: $(cat "$T/vg.out")"
assert_grep '^G5: 6 invocations, 3 bad$' "$T/vg.out"
assert_grep '^    t001-vgbad 1 seed=- memcheck: [0-9]+ errors .*: leak$' "$T/vg.out"
assert_grep '^    t001-vgbad 2 seed=- memcheck: [0-9]+ errors .*: badread$' "$T/vg.out"
assert_grep '^    t001-vgbad 3 seed=- crash: signal 6 .*: crash$' "$T/vg.out"
assert_no_grep ': (exit 42|ok)$' "$T/vg.out"
assert_grep 'definitely lost' "$(ls "$T"/logs/wrap/vg.t001-vgbad.1.*)"
assert_grep 'Invalid read' "$(ls "$T"/logs/wrap/vg.t001-vgbad.2.*)"

rm -rf "$T/logs"
runs vgclean E2E_WRAP=valgrind TESTS=t002
[ $rc = 0 ] || fail "valgrind, clean invocations: exit $rc: $(cat "$T/vgclean.out")"
assert_grep '^G5: 1 invocations, 0 bad$' "$T/vgclean.out"
assert_grep '^\(under valgrind, failed tests are not counted for G5: t002-clean\)$' \
    "$T/vgclean.out"

runs fiu E2E_WRAP=fiu E2E_WRAP_SEED=482 E2E_WRAP_BOUND=3 \
    E2E_WRAP_FIU='enable name=posix/proc/fork' TESTS="t003 t004"
[ $rc = 1 ] || fail "fiu, planted faults: exit $rc: $(cat "$T/fiu.out")"
assert_grep '^G2: every tpuctl invocation under fiu, seed 482$' "$T/fiu.out"
assert_grep '^G2: 9 invocations, 4 bad$' "$T/fiu.out"
assert_grep '^    t003-fiubad 1 seed=[0-9]+ crash: signal 6 .*: crash$' "$T/fiu.out"
assert_grep '^    t003-fiubad 2 seed=[0-9]+ exit 42: not in the contract: exit 42$' \
    "$T/fiu.out"
assert_grep '^    t003-fiubad 4 seed=[0-9]+ hang: killed after 3 s: sleep 30$' \
    "$T/fiu.out"
assert_grep "^    t003-fiubad 5 seed=[0-9]+ temp file left: .*/d.tpuctl-tmp: tmp " \
    "$T/fiu.out"
assert_no_grep 'fiubad [36] |p.tpuctl-tmp' "$T/fiu.out"
assert_grep '^ok   t004-pass ' "$T/fiu.out"

rm -rf "$T/logs"
runs fiuopen E2E_WRAP=fiu E2E_WRAP_FIU='enable name=posix/io/oc/open' \
    TESTS=t005
[ $rc = 1 ] || fail "fiu, forced open failure: exit $rc: $(cat "$T/fiuopen.out")"
assert_grep '^G2: 1 invocations, 1 bad$' "$T/fiuopen.out"
assert_grep 't005-fiuopen 1 seed=[0-9]+ crash: signal 6 .*: open /etc/hostname$' \
    "$T/fiuopen.out"

rm -rf "$T/logs"
runs nowrap TESTS=t005
[ $rc = 0 ] || fail "no wrapper: exit $rc: $(cat "$T/nowrap.out")"
assert_no_grep '^G[25]:' "$T/nowrap.out"

runs typo E2E_WRAP=valgrnd TESTS=t005
[ $rc = 2 ] || fail "E2E_WRAP=valgrnd: exit $rc"
assert_grep "E2E_WRAP='valgrnd' is not valgrind or fiu" "$T/typo.out"
echo "ok: $TEST_NAME"
