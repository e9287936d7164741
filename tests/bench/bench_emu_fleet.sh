#!/bin/sh
# Benchmark of tpuctl-emulator's sshd worker fleet: for nodes of 16, 64
# and 256 workers, the time from fleet_node_create() to every worker's
# sshd accepting connections, the summed PSS of the sshd processes, and
# the time to delete the node (kill, reap, remove files), as root with
# and without the workers' namespaces (fleet.namespaces=0).  Drives
# emulator/fleet.c directly through the bench case of the unit test.
#   FLEET_SIZES="16 64 256"   node sizes to measure
# The target on 2 cores: 256 workers ready within 60 s.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
make -s build/default/tests/check_emu_fleet
echo "fleet bench on $(nproc) cores, $(uname -r), $(/usr/sbin/sshd -V 2>&1 | head -1)"
TPUCTL_FLEET_BENCH="${FLEET_SIZES:-16 64 256}" CK_RUN_CASE=bench \
    CK_DEFAULT_TIMEOUT=900 build/default/tests/check_emu_fleet
# As root the workers get namespaces: measure the fallback too.
if [ "$(id -u)" -eq 0 ]; then
	TPUCTL_FLEET_BENCH="${FLEET_SIZES:-16 64 256}" CK_RUN_CASE=bench \
	    TPUCTL_FLEET_NS=0 CK_DEFAULT_TIMEOUT=900 \
	    build/default/tests/check_emu_fleet
fi
