#!/bin/sh
# Benchmark of the SSH fan-out engine: run `true` on 16 and 64 targets,
# each its own sshd process on a 127.66.x.y loopback address (same port,
# same user key, same concurrency), with
#   sshpool  a small C driver over src/sshpool (ssh_fanout_driver.c)
#   pdsh     pdsh -R ssh -f N
#   pssh     parallel-ssh -p N
#   xargs    xargs -P N ssh -o KexAlgorithms=curve25519-sha256
# and print wall time, client CPU per host and peak RSS of the client
# (from /usr/bin/time -v; the driver also reports its own getrusage).
#   SSH_BENCH_SIZES="16 64"   target counts
#   B=build/default           the build directory of libtpuctl.a
# Nothing leaves loopback.  Numbers only: it fails only when it cannot run.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
sizes=${SSH_BENCH_SIZES:-16 64}
max=0
for n in $sizes; do
	[ "$n" -gt "$max" ] && max=$n
done

B=${B:-build/default}
make -s B="$B" "$B/libtpuctl.a"
T=$(mktemp -d /tmp/bench_ssh_fanout.XXXXXX)
pids=
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null || true
	done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

# shellcheck disable=SC2046 # pkg-config output is a list of flags
cc -O2 -D_GNU_SOURCE -std=c11 -Isrc -o "$T/driver" \
	tests/bench/ssh_fanout_driver.c "$B/libtpuctl.a" \
	$(pkg-config --libs libcurl libcjson libssh2 libcrypto inih yaml-0.1) \
	-lpthread

ssh-keygen -q -t ed25519 -N '' -C bench -f "$T/id"
ssh-keygen -q -t ed25519 -N '' -C host -f "$T/hostkey"
cp "$T/id.pub" "$T/authorized_keys"
mkdir -p "$T/home"
user=$(id -un)
hostkey=$(cut -d' ' -f1,2 "$T/hostkey.pub")
net=$(( $$ % 200 + 20 ))
port=$("$T/driver" -p "127.66.$net.1")

# one sshd per target, all on the same port
: >"$T/hosts.all"
: >"$T/known_hosts"
i=1
while [ "$i" -le "$max" ]; do
	a=127.66.$net.$i
	cat >"$T/sshd_config.$i" <<EOC
ListenAddress $a:$port
HostKey $T/hostkey
PidFile $T/sshd.$i.pid
AuthorizedKeysFile $T/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
MaxStartups 1024:30:2048
LogLevel ERROR
UseDNS no
PrintMotd no
SetEnv HOME=$T/home
EOC
	/usr/sbin/sshd -D -r -f "$T/sshd_config.$i" -E "$T/sshd.$i.log" &
	pids="$pids $!"
	echo "$a $port $hostkey" >>"$T/hosts.all"
	echo "[$a]:$port $hostkey" >>"$T/known_hosts"
	i=$((i + 1))
done
# wait until every sshd accepts connections
"$T/driver" -w "$T/hosts.all"

sshopts="-F /dev/null -i $T/id -o IdentitiesOnly=yes -o BatchMode=yes \
-o UserKnownHostsFile=$T/known_hosts -o StrictHostKeyChecking=yes \
-o PasswordAuthentication=no -o LogLevel=ERROR -p $port"

# measure NAME N COMMAND...: wall, cpu/host, max rss of the client tree
measure() {
	name=$1
	n=$2
	shift 2
	if /usr/bin/time -v -o "$T/time" "$@" >"$T/out" 2>"$T/err"; then
		st=ok
	else
		st="FAILED ($(head -c 200 "$T/err" | tr '\n' ' '))"
	fi
	awk -v name="$name" -v n="$n" -v st="$st" -F': ' '
		/Elapsed \(wall clock\)/ { w = $2 }
		/User time/ { u = $2 }
		/System time/ { s = $2 }
		/Maximum resident/ { r = $2 }
		END {
			k = split(w, p, ":"); secs = 0
			for (j = 1; j <= k; j++) secs = secs * 60 + p[j]
			printf "%-8s %4d hosts: wall %7.3f s, client cpu %7.2f ms/host, max rss %6.1f MB  %s\n",
			    name, n, secs, (u + s) * 1000 / n, r / 1024, st
		}' "$T/time"
}

echo "ssh fan-out bench on $(nproc) cores, $(/usr/sbin/sshd -V 2>&1 | head -1)"
for n in $sizes; do
	head -n "$n" "$T/hosts.all" >"$T/hosts"
	list=$(cut -d' ' -f1 "$T/hosts" | paste -sd, -)
	measure sshpool "$n" "$T/driver" -k "$T/id" -u "$user" -f "$n" \
		-c true "$T/hosts"
	sed -n 's/^/         driver: /p' "$T/out"
	if command -v pdsh >/dev/null; then
		PDSH_SSH_ARGS_APPEND="$sshopts" measure pdsh "$n" \
			pdsh -R ssh -f "$n" -l "$user" -w "$list" true
	fi
	if command -v parallel-ssh >/dev/null; then
		# shellcheck disable=SC2086 # sshopts is split on purpose
		measure pssh "$n" parallel-ssh -p "$n" -l "$user" \
			-H "$(echo "$list" | tr , ' ')" -x "$sshopts" true
	fi
	# shellcheck disable=SC2086 # sshopts is split on purpose
	cut -d' ' -f1 "$T/hosts" >"$T/addrs"
	measure xargs "$n" sh -c "xargs -P $n -I{} ssh $sshopts \
-o KexAlgorithms=curve25519-sha256 -l $user {} true <$T/addrs"
done
