#!/bin/sh
# tpuctl's Jupyter helper, run on one worker by "tpuctl notebook NODE":
#   sh -c "$(cat notebook.sh)" notebook start PORT
#   sh -c "$(cat notebook.sh)" notebook stop PORT
# start installs the notebook package with pip if the interpreter lacks
# it (--user, plus --break-system-packages where PEP 668 applies, as the
# framework recipes do), starts "python3 -m notebook" detached, bound to
# 127.0.0.1:PORT (reached only through tpuctl's SSH forward) with the
# token tpuctl chose (JUPYTER_TOKEN), and returns once it listens.  stop
# ends it (SIGTERM, then SIGKILL after 5 s).  TPUCTL_PYTHON: the
# interpreter (default python3).
# Exit status: 0, 2 usage, 3 no Python, 4 pip failed, 5 Jupyter failed.
set -eu
py=${TPUCTL_PYTHON:-python3}
mode=${1:-}
port=${2:-}
case $mode:$port in
start:[0-9]* | stop:[0-9]*) ;;
*)
	echo "usage: notebook.sh start|stop PORT"
	exit 2
	;;
esac
pidfile=$HOME/.tpuctl-notebook-$port.pid
log=$HOME/.tpuctl-notebook-$port.log

if [ "$mode" = stop ]; then
	pid=$(cat "$pidfile" 2>/dev/null || true)
	if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "notebook: no Jupyter running on port $port"
		rm -f "$pidfile"
		exit 0
	fi
	kill "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
	echo "notebook: Jupyter (pid $pid) stopped"
	exit 0
fi

if ! command -v "$py" >/dev/null 2>&1; then
	echo "notebook: no $py on this worker"
	exit 3
fi
if ! "$py" -c 'import notebook' 2>/dev/null; then
	echo "notebook: installing Jupyter ($py -m pip install --user notebook)"
	set -- --user
	if "$py" -c '
import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)
'; then
		set -- --break-system-packages "$@"
	fi
	if ! "$py" -m pip install --disable-pip-version-check --no-input \
	    --progress-bar off "$@" notebook; then
		echo "notebook: pip install notebook failed"
		exit 4
	fi
fi
: "${JUPYTER_TOKEN:?tpuctl passes the token}"
export JUPYTER_TOKEN
cd "$HOME"
nohup "$py" -m notebook --no-browser --allow-root --ip=127.0.0.1 \
    --port="$port" --port-retries=0 >"$log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pidfile"
i=0
until "$py" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
    "$port" 2>/dev/null; do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "notebook: Jupyter exited:"
		tail -5 "$log"
		rm -f "$pidfile"
		exit 5
	fi
	i=$((i + 1))
	if [ $i -ge 600 ]; then
		echo "notebook: Jupyter did not listen on port $port in 60 s"
		kill "$pid" 2>/dev/null || true
		exit 5
	fi
	sleep 0.1
done
echo "notebook: Jupyter (pid $pid) listens on 127.0.0.1:$port"
