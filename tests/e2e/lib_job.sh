#!/bin/sh
# Helpers of the job-state tests (t359, t372, t430, t433): a node to run
# jobs on, emulator worker events, a submitted job's start; and of the
# restart tests (t306, t354, t355, t471): a preemption once an attempt
# started; and of the bucket tests (t453, t454, t456): a queued resource's
# end.  Sourced after lib.sh (and lib_fleet.sh for job_node).

# job_node ID: fleet_api_setup, then a READY v4-16 node ID (at most
# 90 s); $JOB_NODE its full name (projects/P/locations/Z/nodes/ID).
job_node() {
	fleet_api_setup
	fleet_create_node "$1" v4-16 90
	JOB_NODE="projects/$CLOUDSDK_CORE_PROJECT/locations/$CLOUDSDK_COMPUTE_ZONE/nodes/$1"
}

# job_worker_event EVENT WORKER: POST the emulator event (worker-down,
# worker-up, ...) for worker WORKER of $JOB_NODE; fails unless 200.
job_worker_event() {
	code=$(curl -sS --noproxy '*' -o "$T/resp" -w '%{http_code}' -X POST \
	    -H 'Content-Type: application/json' \
	    --data-binary "{\"event\":\"$1\",\"node\":\"$JOB_NODE\",\"worker\":$2}" \
	    "$API/_emulator/events")
	[ "$code" = 200 ] || fail "$1 $2: $code $(cat "$T/resp")"
}

# job_wait_started NAME: until the submitted job NAME (node NAME) has
# written "started" to its stdout on every worker (at most 30 s).
job_wait_started() {
	n=0
	until "$TPUCTL" ssh "$1" --worker=all -- sh -c \
	    "grep -q started .tpuctl/jobs/$1/stdout" >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -lt 150 ] || fail "$1 never started"
		sleep 0.2
	done
}

# job_preempt_when OUT R NODE [ZONE [N]]: once OUT holds N (default 1)
# lines "start rR" (at most 120 s), preempt NODE (in ZONE when given).
job_preempt_when() {
	wait_for_grep -c "${5:-1}" "$1" "start r$2\$" "" 120
	"$EMULATOR" event --state-dir "$EMU_DIR" ${4:+--zone "$4"} preempt \
	    --node "$3" || fail "preempt (attempt $2) failed"
}

# job_wait_qr_gone NAME: until the queued resource NAME is gone (at most
# 60 s): a submitted job's delete-after, done by its worker 0.
job_wait_qr_gone() {
	n=0
	while "$TPUCTL" queued-resources describe "$1" >/dev/null 2>&1; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "the queued resource $1 is still there"
		sleep 0.2
	done
}
