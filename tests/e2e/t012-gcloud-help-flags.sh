#!/bin/sh
# Issue 17: every flag gcloud documents for tpu-vm and queued-resources
# commands (../shared/gcloud/help-*.txt, read at test time, so a flag a
# newer gcloud adds fails here) is either accepted by tpuctl's same command
# or refused with exit 2 and one line naming the flag (or the command,
# for a command tpuctl lacks): never "unknown option".  Every probe runs with --dry-run (global, and ssh/scp's own), so
# nothing is created or changed.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
HELP=${GCLOUD_HELP_DIR:-$SRCDIR/../shared/gcloud}
[ -d "$HELP" ] || HELP=/work/shared/gcloud
ls "$HELP"/help-tpu-vm_create.txt >/dev/null 2>&1 ||
    skip "no gcloud help texts in $HELP (set GCLOUD_HELP_DIR)"
emu_start
PROJECT=$CLOUDSDK_CORE_PROJECT
ZONE=$CLOUDSDK_COMPUTE_ZONE

KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
expect_rc 0 "$TPUCTL" create n --accelerator-type v4-8
expect_rc 0 "$TPUCTL" queued-resources create qr --accelerator-type v4-8 \
    --node-id qn --spot
echo x >"$T/f"
export TPUCTL_SSH_PORT=1

# flags FILE: one line per flag defined in a help text: "--name" or
# "--name=METAVAR" (definition lines only: a flag alone on its line,
# before GCLOUD WIDE FLAGS; examples and prose are skipped).
flags() {
	awk '/^GCLOUD WIDE FLAGS/ { exit } { print }' "$1" |
	    grep -E '^ {4,10}--[a-z][a-z0-9-]*(=[A-Z[][^ ]*)?(; default=.*)?$' |
	    sed -E 's/^ +//; s/;.*//; s/\]$//' | sort -u
}

# value FLAG METAVAR: a value of the shape gcloud's help asks for.
value() {
	case $1 in
	--zone) echo "$ZONE" ;;
	--accelerator-type) echo v4-8 ;;
	--type) echo v4 ;;
	--topology) echo 2x2x1 ;;
	--version | --runtime-version) echo tpu-vm-base ;;
	--node-id) echo qn2 ;;
	--node-count) echo 2 ;;
	--node-prefix) echo pre ;;
	--description) echo text ;;
	--labels | --update-labels) echo env=prod ;;
	--remove-labels | --remove-metadata) echo env ;;
	--metadata | --update-metadata) echo startup-script=true ;;
	--metadata-from-file) echo "startup-script=$T/f" ;;
	--tags | --add-tags | --remove-tags) echo t1 ;;
	--scopes) echo cloud-platform ;;
	--service-account) echo sa@p.iam.gserviceaccount.com ;;
	--network) echo default ;;
	--subnetwork) echo default ;;
	--reservation) echo r1 ;;
	--data-disk) echo "source=projects/$PROJECT/zones/$ZONE/disks/d1,mode=read-only" ;;
	--attach-disk) echo "source=projects/$PROJECT/zones/$ZONE/disks/d1" ;;
	--detach-disk) echo "projects/$PROJECT/zones/$ZONE/disks/d1" ;;
	--valid-after-duration | --valid-until-duration | --max-run-duration) echo 2h ;;
	--valid-after-time | --valid-until-time) echo 2030-01-01T00:00:00Z ;;
	--filter) echo 'state=READY' ;;
	--limit | --page-size | --batch-size | --queue-count) echo 2 ;;
	--sort-by) echo '~name' ;;
	--worker) echo 0 ;;
	--command) echo true ;;
	--ssh-key-file) echo "$KEY" ;;
	--output-directory) echo "$T/outdir" ;;
	--ssh-key-expire-after) echo 1h ;;
	--ssh-key-expiration) echo 2030-01-01T00:00:00Z ;;
	--strict-host-key-checking) echo no ;;
	--node) echo 0 ;;
	--provisioning-model) echo spot ;;
	--workload-type) echo THROUGHPUT_OPTIMIZED ;;
	--range) echo 10.0.0.0/29 ;;
	--boot-disk) echo 'confidential-compute=true,kms-key=projects/p1/locations/us/keyRings/r/cryptoKeys/k' ;;
	--network-config) echo 'network=default,subnetwork=default,external-ips=true' ;;
	--reservation-host-*) echo host1 ;;
	--ssh-flag | --scp-flag) echo -v ;;
	*) echo x ;;
	esac
}

# tpuctl's command and the operands a probe of gcloud's command needs.
command_of() {
	case $1 in
	tpu-vm_create) echo "create c1 --accelerator-type v4-8" ;;
	tpu-vm_delete) echo "delete n" ;;
	tpu-vm_describe) echo "describe n" ;;
	tpu-vm_list) echo "list" ;;
	tpu-vm_start) echo "start n" ;;
	tpu-vm_stop) echo "stop n" ;;
	tpu-vm_update) echo "update n --description d" ;;
	tpu-vm_ssh) echo "ssh n --dry-run --ssh-key-file $KEY" ;;
	tpu-vm_scp) echo "scp --dry-run --ssh-key-file $KEY $T/f n:dst" ;;
	tpu-vm_accelerator-types_list) echo "accelerator-types list" ;;
	tpu-vm_versions_list) echo "versions list" ;;
	queued-resources_create) echo "queued-resources create q2 --accelerator-type v4-8 --node-id qn2" ;;
	queued-resources_delete) echo "queued-resources delete qr" ;;
	queued-resources_describe) echo "queued-resources describe qr" ;;
	queued-resources_list) echo "queued-resources list" ;;
	queued-resources_reset) echo "queued-resources reset qr" ;;
	queued-resources_ssh) echo "queued-resources ssh qr --dry-run --ssh-key-file $KEY" ;;
	*) return 1 ;;
	esac
}

nflags=0
bad=0
nok=0
nrefused=0
for f in "$HELP"/help-*.txt; do
	c=$(basename "$f" .txt)
	c=${c#help-}
	base=$(command_of "$c") || fail "$c: no tpuctl command mapped (a new gcloud command?)"
	for spec in $(flags "$f"); do
		nflags=$((nflags + 1))
		fl=${spec%%=*}
		if [ "$fl" = "$spec" ]; then
			arg=$fl
		else
			arg="$fl=$(value "$fl")"
		fi
		rc=0
		# shellcheck disable=SC2086 # $base is words
		"$TPUCTL" --dry-run $base "$arg" </dev/null >"$T/out" 2>"$T/err" || rc=$?
		case $rc in
		0) nok=$((nok + 1)) ;;
		2)
			nrefused=$((nrefused + 1))
			echo "refused: $c $arg: $(head -1 "$T/err")"
			# one line naming the flag, or the command when tpuctl
			# refuses the whole command with its reason
			if [ "$(wc -l <"$T/err")" -ne 1 ] ||
			    grep -qE 'unknown (option|command)|unrecognized' "$T/err" ||
			    ! { grep -qF -- "$fl" "$T/err" ||
			    grep -qF "'$(echo "$base" | cut -d' ' -f1,2)'" "$T/err"; }; then
				echo "BAD: $c $arg: exit 2: $(cat "$T/err")" >&2
				bad=$((bad + 1))
			fi
			;;
		*)
			echo "BAD: $c $arg: exit $rc: $(head -3 "$T/err")" >&2
			bad=$((bad + 1))
			;;
		esac
	done
done
[ "$nflags" -gt 150 ] || fail "only $nflags flags read from $HELP"
echo "$nflags gcloud flags: $nok accepted, $nrefused refused with a reason"
[ "$bad" -eq 0 ] || fail "$bad of $nflags gcloud flags neither accepted nor refused with a reason"
