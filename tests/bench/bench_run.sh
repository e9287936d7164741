#!/bin/sh
# Benchmark of the job runner: `tpuctl run NODE --workdir DIR -- CMD` on
# an emulator node of 64 workers (v4-512; real sshd workers on loopback)
# against the sequence users script today: OpenSSH scp -r of the
# workdir to each worker, then ssh to each, all workers in parallel
# (xargs -P N, one scp + ssh per worker, curve25519 key exchange as the
# fairest OpenSSH row of bench_ssh_cmd.sh).  For each: the time to the
# first output line of an `echo ready` job, and to the end of a `true`
# job; tpuctl cold (the workdir not yet on the workers) and warm (the
# same workdir: not sent again).  The target of issue 13 (tpuctl at
# least 5x faster than the scp + ssh sequence to the end of `true`) is
# printed with PASS or MISS.  Then a 64 MiB workdir staged through the
# bucket (`tpuctl run --stage`: one upload, every worker pulls it with
# curl) against scp -r of it to each worker, to the end of a `true` job
# (target: at least 3x faster), with where its time goes: the client's
# upload, and the workers' fetch, sha256 check and unpack, all at once.
#   RUN_BENCH_SIZES="64"   worker counts
#   RUN_BENCH_STAGE_MIB=64 size of the staged workdir (0: skip)
#   RUN_BENCH_TRUE_RUNS=3  `true` jobs per tpuctl, taken in turns with
#                          BEFORE's (no order favours one); the median
#                          counts
#   RUN_BENCH_BEFORE=DIR   also time the tpuctl in DIR (e.g. a build of
#                          an older commit) in the same run, against the
#                          same emulator and the same peer rows: its rows
#                          and targets are labelled "before"
# Each staged row gets a workdir of its own random bytes (every worker
# pulls it anew), and every big row starts after a sync (no writeback of
# an earlier row's files on its time).
# Nothing leaves loopback.  Numbers only: fails only when it cannot run.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TPUCTL_BIN_DIR:-$top/bin}
BEFORE=${RUN_BENCH_BEFORE:-}
sizes=${RUN_BENCH_SIZES:-64}
mib=${RUN_BENCH_STAGE_MIB:-64}
truns=${RUN_BENCH_TRUE_RUNS:-3}
T=$(mktemp -d /tmp/bench_run.XXXXXX)
emu_pid=
cleanup() {
	[ -z "$emu_pid" ] || kill "$emu_pid" 2>/dev/null || true
	[ -z "$emu_pid" ] || wait "$emu_pid" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" \
    XDG_CACHE_HOME="$T/home/.cache" XDG_STATE_HOME="$T/home/.local/state"
mkdir -p "$HOME/.ssh"
chmod 700 "$HOME" "$HOME/.ssh"
# shellcheck source=tests/bench/lib_emu.sh
. "$top/tests/bench/lib_emu.sh"
bench_emu_start
KEY=$HOME/.ssh/google_compute_engine
"$BIN/tpuctl" data mb gs://bench-stage >/dev/null 2>&1

# A small project as the workdir: 20 files, 200 KiB.
mkdir -p "$T/wd/pkg"
i=0
while [ $i -lt 20 ]; do
	head -c 10240 /dev/urandom >"$T/wd/pkg/m$i.py"
	i=$((i + 1))
done

# shellcheck source=tests/bench/lib_time.sh
. "$top/tests/bench/lib_time.sh"

# workers_ticks: CPU clock ticks of the workers' side: their listener
# sshds and all they reaped (sessions, shells, the job's processes that
# ended before their launcher), and what the emulator (a subreaper)
# reaped: the processes orphaned there (a job's shell outliving its
# launch)
workers_ticks() {
	# shellcheck disable=SC2046 # one pid a word
	echo $(($(bench_ticks $(cat "$T"/emu/fleet/n*/w*/sshd.pid 2>/dev/null)) +
	    $(bench_reaped "$emu_pid")))
}

# timed NAME CMD...: wall time to the first line and to the end, and the
# CPU seconds of the client (CMD and its children) and of the workers'
# side (workers_ticks) meanwhile: on a loaded machine the wall time
# varies with the load, the CPU much less.
timed() {
	name=$1
	shift
	rm -f "$T/first"
	w0=$(workers_ticks)
	t0=$(bench_now)
	if ! bench_time "$T/time" "$@" 2>"$T/err" | {
		if IFS= read -r _l; then bench_now >"$T/first"; fi
		cat >/dev/null
	}; then
		printf '%-22s failed: %s\n' "$name" "$(tail -1 "$T/err")"
		return 0
	fi
	end=$(bench_since "$t0")
	first=-
	[ ! -s "$T/first" ] || first=$(bench_since "$t0" "$(cat "$T/first")")
	# the last sessions reaped by their sshd
	sleep 0.3
	cpu=$(awk '{ printf "%.2f", $2 + $3 }' "$T/time")
	wcpu=$(awk -v a="$w0" -v b="$(workers_ticks)" -v hz="$(getconf CLK_TCK)" \
	    'BEGIN { printf "%.2f", (b - a) / hz }')
	printf '%-22s first line %6s s  end %6s s  cpu: client %5s s, workers %5s s\n' \
	    "$name" "$first" "$end" "$cpu" "$wcpu"
	echo "$end" >"$T/end.$name"
	echo "$wcpu" >"$T/wcpu.$name"
}

# median NAME: the median end (and workers' CPU) of the rows "NAME #K"
# as row NAME.
median() {
	for k in end wcpu; do
		for f in "$T/$k.$1 #"*; do
			[ ! -s "$f" ] || cat "$f"
		done | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }' \
		    >"$T/$k.$1"
	done
	[ ! -s "$T/end.$1" ] ||
	    printf '%-22s median of %s: end %6s s, workers cpu %5s s\n' "$1" "$truns" \
	        "$(cat "$T/end.$1")" "$(cat "$T/wcpu.$1")"
}

# target ROW PEER X WHAT: PASS when ROW ended at least X times sooner
# than PEER (both timed in this run).
target() {
	[ -s "$T/end.$1" ] && [ -s "$T/end.$2" ] || return 0
	t=$(cat "$T/end.$1")
	o=$(cat "$T/end.$2")
	x=$(awk -v t="$t" -v o="$o" 'BEGIN { printf "%.1f", (t > 0) ? o / t : 0 }')
	if awk -v t="$t" -v o="$o" -v k="$3" 'BEGIN { exit !(t * k <= o) }'; then
		v=PASS
	else
		v=MISS
		misses=$((misses + 1))
	fi
	printf '  target: %s (%s s vs %s s: %sx): %s\n' "$4" "$t" "$o" "$x" "$v"
}

# stage_parts NODE JOB FANOUT: where the time of a staged run goes.
# The client's part: one upload of the archive (data cp, as run does).
# The workers' part, all at once over ssh --worker=all as run does it:
# each fetches the token and the object with curl, checks the sha256
# (python3's hashlib from 8 MiB on, else sha256sum) and unpacks, as the
# launcher (src/jobs.c); the averages and the slowest fetch.
stage_parts() {
	url=$(jq -r .stageUrl "$XDG_STATE_HOME/tpuctl/jobs/$2/job.json")
	hash=$(jq -r .workdirHash "$XDG_STATE_HOME/tpuctl/jobs/$2/job.json")
	tar=$XDG_CACHE_HOME/tpuctl/workdirs/$hash.tar
	if [ -f "$tar" ]; then
		t0=$(bench_now)
		"$BIN/tpuctl" data cp "$tar" gs://bench-stage/parts.tar >/dev/null 2>&1
		up=$(bench_since "$t0")
		printf '  client upload of the archive: %s s\n' "$up"
	fi
	# the URL is percent-encoded: no quote in it
	# shellcheck disable=SC2016 # the worker's shell expands these
	pull='m=${GCE_METADATA_HOST:-metadata.google.internal} a=/tmp/bench-pull.$$
n() { date +%s.%N; }
s=$(n)
t=$(curl -sSf -H "Metadata-Flavor: Google" "http://$m/computeMetadata/v1/instance/service-accounts/default/token")
t=${t#*\"access_token\"}; t=${t#*\"}; t=${t%%\"*}
z=$(curl -sSf -w "%{size_download}" -H "Authorization: Bearer $t" -o "$a" "$u") || exit 1
t1=$(n)
x=
[ "$z" -lt 8388608 ] || x=$(python3 -S -I -c "import hashlib,sys;h=hashlib.sha256();[h.update(b) for b in iter(lambda f=open(sys.argv[1],'"'rb'"'):f.read(1<<20),b'"''"')];print(h.hexdigest())" "$a")
[ -n "$x" ] || sha256sum "$a" >/dev/null
t2=$(n)
mkdir "$a.d" && tar -x -m -p -b 256 -f "$a" -C "$a.d"
t3=$(n)
rm -rf "$a" "$a.d"
echo "parts $s $t1 $t2 $t3"'
	t0=$(bench_now)
	"$BIN/tpuctl" ssh "$1" --worker=all --fanout "$3" \
	    --command "u='$url'
$pull" >"$T/parts" 2>"$T/parts.err" || true
	all=$(bench_since "$t0")
	awk -v all="$all" '$2 == "parts" { n++; g = $4 - $3; h = $5 - $4; x = $6 - $5
	    sg += g; sh += h; sx += x; if (g > mg) mg = g }
	    END { if (n == 0) { print "  workers pull: failed"; exit }
	    printf "  workers pull (%d at once, %s s): fetch avg %.2f s (slowest %.2f), sha256 avg %.2f s, unpack avg %.2f s\n", n, all, sg / n, mg, sh / n, sx / n }' "$T/parts"
}

misses=0
for hosts in $sizes; do
	chips=$((hosts * 8))
	node=r$hosts
	"$BIN/tpuctl" create "$node" --accelerator-type "v4-$chips" \
	    --version tpu-ubuntu2204-base --quiet >"$T/create.out" 2>&1 || {
		echo "create v4-$chips failed: $(tail -2 "$T/create.out")" >&2
		exit 1
	}
	"$BIN/tpuctl" ssh "$node" --worker=all -- true >/dev/null 2>"$T/err" || {
		echo "warm-up failed: $(tail -2 "$T/err")" >&2
		exit 1
	}
	"$BIN/tpuctl" describe "$node" --format json >"$T/node.json"
	jq -r '.networkEndpoints[].ipAddress' "$T/node.json" >"$T/hosts"
	fan=$hosts
	[ "$fan" -le 64 ] || fan=64
	opts="-F /dev/null -i $KEY -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o KexAlgorithms=curve25519-sha256 -P $TPUCTL_SSH_PORT"
	sopts=$(echo "$opts" | sed 's/-P /-p /')
	u=$TPUCTL_SSH_USER
	echo "-- $hosts workers, $fan in flight, workdir 20 files / 200 KiB"
	rm -f "$T"/end.* "$T"/wcpu.*
	# the rows of each tpuctl: "" (this one) and "before: " (BEFORE)
	for lb in "" ${BEFORE:+"before: "}; do
		tb=$BIN
		[ -z "$lb" ] || tb=$BEFORE
		# the workers' cache of the small workdir: cold for each
		"$BIN/tpuctl" ssh "$node" --worker=all -- rm -rf .tpuctl/wd \
		    >/dev/null 2>&1 || true
		rm -rf "$XDG_CACHE_HOME/tpuctl/workdirs"
		timed "${lb}tpuctl run echo cold" "$tb/tpuctl" run "$node" \
		    --fanout "$fan" --workdir "$T/wd" -- echo ready
		timed "${lb}tpuctl run echo warm" "$tb/tpuctl" run "$node" \
		    --fanout "$fan" --workdir "$T/wd" -- echo ready
	done
	# the true jobs, in turns
	k=1
	while [ "$k" -le "$truns" ]; do
		for lb in "" ${BEFORE:+"before: "}; do
			tb=$BIN
			[ -z "$lb" ] || tb=$BEFORE
			timed "${lb}tpuctl run true warm #$k" "$tb/tpuctl" run \
			    "$node" --fanout "$fan" --workdir "$T/wd" -- true
		done
		k=$((k + 1))
	done
	for lb in "" ${BEFORE:+"before: "}; do
		median "${lb}tpuctl run true warm"
	done
	# shellcheck disable=SC2016 # $1 is the host, expanded by the inner sh
	timed "scp+ssh echo" sh -c "xargs -P $fan -I{} sh -c 'scp -q -r $opts \"$T/wd\" $u@\$1:wd && ssh $sopts $u@\$1 \"cd wd && echo ready\"' sh {} <'$T/hosts'"
	# as many peer runs as tpuctl's, the median counts
	k=1
	while [ "$k" -le "$truns" ]; do
		# shellcheck disable=SC2016
		timed "scp+ssh true #$k" sh -c "xargs -P $fan -I{} sh -c 'scp -q -r $opts \"$T/wd\" $u@\$1:wd && ssh $sopts $u@\$1 \"cd wd && true\"' sh {} <'$T/hosts'"
		k=$((k + 1))
	done
	median "scp+ssh true"
	for lb in "" ${BEFORE:+"before: "}; do
		target "${lb}tpuctl run true warm" "scp+ssh true" 5 \
		    "${lb}tpuctl run >= 5x faster than scp + ssh"
	done
	if [ "$mib" -gt 0 ]; then
		for lb in "" ${BEFORE:+"before: "}; do
			tb=$BIN j=stage$hosts
			[ -z "$lb" ] || { tb=$BEFORE; j=bstage$hosts; }
			rm -rf "$T/big"
			mkdir -p "$T/big"
			head -c $((mib * 1048576)) /dev/urandom >"$T/big/data.bin"
			sync
			timed "${lb}tpuctl run --stage" "$tb/tpuctl" run "$node" \
			    --fanout "$fan" --stage gs://bench-stage/wd \
			    --workdir "$T/big" --name "$j" -- true
			[ -n "$lb" ] || stage_parts "$node" "$j" "$fan"
			"$BIN/tpuctl" ssh "$node" --worker=all -- rm -rf \
			    .tpuctl/wd .tpuctl/jobs >/dev/null 2>&1 || true
		done
		sync
		# shellcheck disable=SC2016
		timed "scp -r big" sh -c "xargs -P $fan -I{} sh -c 'scp -q -r $opts \"$T/big\" $u@\$1:big' sh {} <'$T/hosts'"
		for lb in "" ${BEFORE:+"before: "}; do
			target "${lb}tpuctl run --stage" "scp -r big" 3 \
			    "${lb}$mib MiB staged >= 3x faster than scp to each"
		done
	fi
	"$BIN/tpuctl" delete "$node" --quiet >/dev/null 2>&1 || true
done
echo "targets missed: $misses"
