#!/bin/sh
# shellcheck disable=SC2034 # the variables are for the tests that source this file
# Shared helpers for end-to-end tests.  A test sources this file, runs the
# real binaries and exits non-zero at the first failed check.
#   TPUCTL_BIN_DIR   where tpuctl and tpuctl-emulator are (default ../../bin)
# Every test gets its own scratch dir ($T), its own HOME and XDG dirs, and
# GCE_METADATA_HOST pointing at a closed loopback port, so nothing ever
# probes the real metadata server.

set -eu

E2E_DIR=$(cd "$(dirname "$0")" && pwd)
SRCDIR=$(cd "$E2E_DIR/../.." && pwd)
BIN_DIR=${TPUCTL_BIN_DIR:-$SRCDIR/bin}
TPUCTL="$BIN_DIR/tpuctl"
EMULATOR="$BIN_DIR/tpuctl-emulator"
TEST_NAME=$(basename "$0" .sh)

T=$(mktemp -d "${TMPDIR:-/tmp}/tpuctl-e2e.XXXXXX")
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" \
    XDG_CACHE_HOME="$T/home/.cache"
mkdir -p "$HOME"
chmod 700 "$HOME"
# run.sh's wrapper modes (E2E_WRAP=valgrind|fiu): every "$TPUCTL" runs
# the real binary through tests/reliability/wrap.c, which judges it.
if [ -n "${E2E_WRAP_BIN:-}" ]; then
	E2E_WRAP_REAL=$TPUCTL E2E_WRAP_TEST=$TEST_NAME
	E2E_WRAP_SCRATCH=$T TPUCTL=$E2E_WRAP_BIN
	export E2E_WRAP_REAL E2E_WRAP_TEST E2E_WRAP_SCRATCH
fi
# Port 9 (discard) on loopback: closed, so a metadata probe fails at once.
export GCE_METADATA_HOST=127.0.0.1:9
unset GOOGLE_APPLICATION_CREDENTIALS CLOUDSDK_CORE_PROJECT \
    CLOUDSDK_COMPUTE_ZONE CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU \
    STORAGE_EMULATOR_HOST TPUCTL_PROFILE CLOUDSDK_CONFIG 2>/dev/null || true

EMU_PID=
EMU_DIR=

# left_behind: what the test leaves, as one word "nodes=N,...,procs=N"
# for run.sh's results file (E2E_LEFT; tests/reliability/README.md, "Left
# at the end").  Read from the emulator's state files once it stopped,
# and the processes that outlived it (every process of the test's network
# namespace but this shell when run.sh gave it one (E2E_NETNS=1), else
# those naming $T and this shell's descendants), which it then kills.
left_behind() {
	_l="0 0 0"
	if [ -n "$EMU_DIR" ] && [ -f "$EMU_DIR/tpu/state.json" ]; then
		_l=$(jq -r '[(.nodes // {} | length),
		    (.queuedResources // {} | length),
		    ([.operations // {} | .[] | select(.done != true)] |
		    length)] | @tsv' "$EMU_DIR/tpu/state.json" 2>/dev/null) ||
		    _l="0 0 0"
	fi
	_g="$EMU_DIR/gcs"
	_b=0 _o=0 _p=0 _u=0
	if [ -n "$EMU_DIR" ] && [ -d "$_g/buckets" ]; then
		_b=$(find "$_g/buckets" -mindepth 1 -maxdepth 1 | wc -l)
		_o=$(find "$_g/buckets" -path '*/objects/*.json' | wc -l)
		_p=$(find "$_g/buckets" -path '*/objects/*.json' \
		    -exec grep -l '\.tpuctl-part-' {} + | wc -l)
		# sessions still open ("active"): a finished one stays
		# readable ("done"), as GCS keeps a completed session's URI
		_u=$(find "$_g/uploads" -name '*.json' -exec cat {} + \
		    2>/dev/null | jq -s '[.[] | select(.state == "active")] |
		    length' 2>/dev/null) || _u=0
	fi
	_t=$(find "$T" \( -name '*.tpuctl-tmp' -o -name '*.tmp-????????????' \) \
	    ! -path "$T/emu/gcs/*" 2>/dev/null | wc -l)
	if [ "${E2E_NETNS:-0}" = 1 ]; then
		_ns=$(readlink /proc/$$/ns/net) # net:[INODE]
		_ns=${_ns#net:?}
		find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/net' \
		    -lname "net:?${_ns%?}?" 2>/dev/null |
		    cut -d/ -f3 >"$T/.procs" || true
	else
		pgrep -f "$T/" >"$T/.procs" || true
		# and this shell's descendants
		ps -e -o pid=,ppid= >"$T/.ps" 2>/dev/null || true
		awk -v top=$$ '{ kid[$2] = kid[$2] " " $1 }
		    END { q = top; while (q != "") { split(q, a, " "); q = ""
		    for (i in a) { k = kid[a[i]]; if (k != "") {
		    print substr(k, 2); q = q k } } } }' "$T/.ps" |
		    tr ' ' '\n' >>"$T/.procs"
	fi
	_k=""
	while read -r _pid; do
		if [ "$_pid" != $$ ] && [ -d "/proc/$_pid" ]; then
			_k="$_k $_pid"
		fi
	done <"$T/.procs"
	if [ -n "$_k" ]; then
		sleep 0.5 # one that was ending
		_n=0
		for _pid in $_k; do
			[ -d "/proc/$_pid" ] || continue
			echo "left running: $(tr '\0' ' ' <"/proc/$_pid/cmdline" \
			    2>/dev/null)" >&2
			kill -KILL "$_pid" 2>/dev/null || true
			_n=$((_n + 1))
		done
	else
		_n=0
	fi
	# shellcheck disable=SC2086 # three numbers
	set -- $_l
	echo "nodes=$1,qrs=$2,ops=$3,buckets=$_b,objects=$_o,uploads=$_u,parts=$_p,tmpfiles=$_t,procs=$_n" \
	    >"$E2E_LEFT"
}

cleanup() {
	rc=$?
	if [ -n "$EMU_PID" ]; then
		kill -TERM "$EMU_PID" 2>/dev/null || true
		i=0
		while kill -0 "$EMU_PID" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$EMU_PID" 2>/dev/null || true
	fi
	[ -z "${E2E_LEFT:-}" ] || left_behind || true
	if [ $rc -ne 0 ] && [ -n "$EMU_DIR" ] && [ -f "$EMU_DIR/emulator.log" ]; then
		echo "--- emulator log (last 30 lines)" >&2
		tail -30 "$EMU_DIR/emulator.log" >&2 || true
	fi
	rm -rf "$T"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "FAIL: $TEST_NAME: $*" >&2
	exit 1
}

# expect_rc N cmd...: run cmd, capture stdout/stderr in $T/out, $T/err.
expect_rc() {
	want=$1
	shift
	set +e
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	set -e
	if [ "$got" -ne "$want" ]; then
		echo "--- stdout" >&2
		cat "$T/out" >&2
		echo "--- stderr" >&2
		cat "$T/err" >&2
		fail "'$*' exited $got, want $want"
	fi
}

# assert_grep PATTERN FILE: FILE has a line matching the ERE.
assert_grep() {
	grep -Eq -- "$1" "$2" || {
		echo "--- $2" >&2
		cat "$2" >&2
		fail "no line matching '$1' in $2"
	}
}

assert_no_grep() {
	if grep -Eq -- "$1" "$2"; then
		echo "--- $2" >&2
		cat "$2" >&2
		fail "unexpected line matching '$1' in $2"
	fi
}

# emu_start [flags...]: start tpuctl-emulator on a free port with its own
# state dir, wait until it wrote DIR/env, and load that environment.
emu_start() {
	EMU_DIR="$T/emu"
	mkdir -p "$EMU_DIR"
	"$EMULATOR" serve --state-dir "$EMU_DIR" "$@" \
	    >"$EMU_DIR/emulator.log" 2>&1 &
	EMU_PID=$!
	i=0
	while [ ! -s "$EMU_DIR/env" ]; do
		kill -0 "$EMU_PID" 2>/dev/null ||
		    fail "tpuctl-emulator exited early: $(tail -5 "$EMU_DIR/emulator.log")"
		i=$((i + 1))
		[ $i -lt 300 ] || fail "tpuctl-emulator did not start in 30 s"
		sleep 0.1
	done
	# shellcheck disable=SC1091
	. "$EMU_DIR/env"
}

# emu_requests: the emulator's JSONL request log.  A line is written when
# the emulator has finished with a request, which can be just after the
# client got its reply: wait until the log stops growing for 20 ms.
emu_requests() {
	_f="$EMU_DIR/requests.jsonl"
	_a=$(wc -c <"$_f" 2>/dev/null || echo 0)
	_n=0
	while :; do
		sleep 0.02
		_b=$(wc -c <"$_f" 2>/dev/null || echo 0)
		if [ "$_a" = "$_b" ] || [ $_n -ge 50 ]; then
			break
		fi
		_a=$_b
		_n=$((_n + 1))
	done
	cat "$_f" 2>/dev/null || true
}

# emu_inject [--method M] [--path P] [--count N] SPEC
emu_inject() {
	"$EMULATOR" inject --state-dir "$EMU_DIR" "$@" >/dev/null ||
	    fail "inject $* failed"
}

# skip REASON: the whole test (or the rest of it) cannot run here: say why
# and exit 77, which run.sh counts as skipped (a failure under
# E2E_NO_SKIP=1 unless the reason is in skip-allow.txt).
skip() {
	echo "SKIP: $TEST_NAME: $*"
	exit 77
}

# have_tool TOOL PACKAGE WHAT: TOOL is on PATH; if not, print a SKIP line
# for the part WHAT (run.sh then counts the test as skipped) and fail.
have_tool() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "SKIP: $TEST_NAME: $3 needs $1 (Debian package $2)"
	return 1
}

# emu_tpu_mutations: the Cloud TPU API requests other than GET so far, as
# one compact JSON list of [method, path, query] ("[]" when none).
emu_tpu_mutations() {
	emu_requests | jq -c -s '[.[] | select(.path | startswith("/v2/")) |
	    select(.method != "GET") | [.method, .path, .query]]'
}

# assert_no_slice NAME: no queued resource and no node named NAME is left.
assert_no_slice() {
	expect_rc 0 "$TPUCTL" queued-resources list --format 'value(name)'
	assert_no_grep "$1" "$T/out"
	expect_rc 0 "$TPUCTL" list --format 'value(name)'
	assert_no_grep "$1" "$T/out"
}

# offline_wheel_index: the offline wheel index of tests/frameworks/
# build_index.sh in $IDX (outside /tmp: as root each worker has its own
# /tmp, not the test's; removed at exit), and tpuctl's matrix pointed at
# it (TPUCTL_CONFIG_DIR=$T/cfg, exported).
offline_wheel_index() {
	IDX=$(mktemp -d /var/tmp/tpuctl-e2e-idx.XXXXXX)
	trap 'rc=$?; rm -rf "$IDX"; (exit $rc); cleanup' EXIT
	"$SRCDIR/tests/frameworks/build_index.sh" "$IDX" >/dev/null
	mkdir "$T/cfg"
	cp -r "$SRCDIR/config/recipes" "$T/cfg/"
	jq --arg idx "$IDX" '.frameworks[][].find_links = [$idx]' \
	    "$SRCDIR/config/compat.json" >"$T/cfg/compat.json"
	TPUCTL_CONFIG_DIR="$T/cfg"
	export TPUCTL_CONFIG_DIR
}

# A loopback TCP port free at the time of asking.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Wait (30 s at most) until a background `tpuctl forward` (pid $1, its
# stderr in $2) says it is forwarding; fail if it exits first.
forward_wait() {
	wait_for_grep "$2" 'forwarding 127\.0\.0\.1' "$1" 30
}

# wait_for_grep [-c N] FILE PATTERN [PID [SECONDS]]: until FILE has a
# line (with -c, N lines) matching the ERE PATTERN, looking every 0.1 s;
# fail after SECONDS (default 60), or once process PID (unless empty)
# ended without it.  A failure shows FILE and, for X.out, X.err.
wait_for_grep() {
	_wc=1
	if [ "$1" = -c ]; then
		_wc=$2
		shift 2
	fi
	_wn=0
	while :; do
		# PID first: what it wrote before it ended is read below
		_wd=0
		[ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || _wd=1
		_wg=$(grep -Ec -- "$2" "$1" 2>/dev/null) || true
		[ "${_wg:-0}" -lt "$_wc" ] || return 0
		if [ $_wd = 1 ]; then
			_ww="process $3 ended"
			break
		fi
		_wn=$((_wn + 1))
		if [ $_wn -ge $((${4:-60} * 10)) ]; then
			_ww="not within ${4:-60} s"
			break
		fi
		sleep 0.1
	done
	echo "--- $1" >&2
	cat "$1" >&2 2>/dev/null || true
	case $1 in
	*.out)
		if [ -f "${1%.out}.err" ]; then
			echo "--- ${1%.out}.err" >&2
			cat "${1%.out}.err" >&2
		fi
		;;
	esac
	fail "no $_wc line(s) matching '$2' in $1: $_ww"
}

# wait_rc PID SECONDS WHAT ERRFILE: wait until the background process PID
# ends, at most SECONDS (then it is killed and the test fails, naming
# WHAT and showing ERRFILE); its exit status in $rc.
wait_rc() {
	_rn=0
	while kill -0 "$1" 2>/dev/null; do
		_rn=$((_rn + 1))
		if [ $_rn -ge $(($2 * 5)) ]; then
			kill "$1" 2>/dev/null || true
			fail "$3 still running after $2 s: $(cat "$4")"
		fi
		sleep 0.2
	done
	rc=0
	wait "$1" || rc=$?
}
