#!/bin/sh
# Install every Debian package that tpuctl's build, its emulator and its
# tests need.  Idempotent: packages already present are left alone.  Run as
# root on Debian 12; as another user it prints the commands it would run.
set -eu

PKGS="build-essential pkg-config
libcurl4-openssl-dev libcjson-dev libssh2-1-dev libssl-dev
libinih-dev libyaml-dev
check
libmicrohttpd-dev openssh-server openssh-client
mandoc shellcheck clang clang-format libclang-rt-14-dev valgrind
nodejs npm
hyperfine pdsh pssh zsh
tinyproxy faketime fiu-utils socat stunnel4 tmux
iproute2 procps psmisc time bsdutils util-linux binutils curl ca-certificates openssl jq python3 python3-yaml
python3-torch python3-notebook python3-pip python3-wheel"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

# nodejs from other sources may ship npm itself: do not fight over it.
if command -v npm >/dev/null 2>&1; then
	# shellcheck disable=SC2086 # split the package list on purpose
	missing=$(printf '%s\n' $missing | grep -vx npm | tr '\n' ' ' || true)
fi

if [ -z "$(printf '%s' "$missing" | tr -d ' ')" ]; then
	echo "install-deps: all packages present"
	exit 0
fi

run() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "would run: $*"
	else
		echo "+ $*"
		"$@"
	fi
}

export DEBIAN_FRONTEND=noninteractive
run apt-get update -q
# shellcheck disable=SC2086
run apt-get install -y -q --no-install-recommends $missing
