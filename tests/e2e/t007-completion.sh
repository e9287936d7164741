#!/bin/sh
# "tpuctl completion bash|zsh": the bash script, run in bash, completes
# commands, sub-commands, options, --format values and config keys from
# the command table; the zsh script has the same data.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$TPUCTL" completion bash
cp "$T/out" "$T/tpuctl.bash"
bash -n "$T/tpuctl.bash" || fail "bash script does not parse"
shellcheck -s bash "$T/tpuctl.bash" >&2 || fail "shellcheck: bash script"

# complete WORDS...: the candidates bash offers for the last word.
complete_words() {
	bash -c '
		. "$1"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_tpuctl
		printf "%s\n" "${COMPREPLY[@]}"' sh "$T/tpuctl.bash" "$@" |
	    sort | tr '\n' ' ' | sed 's/ $//'
}

check() {
	want=$1
	shift
	got=$(complete_words "$@")
	[ "$got" = "$want" ] || fail "completing '$*': got '$got', want '$want'"
}

# Every top-level command of "help" is offered for an empty word.
"$TPUCTL" help | sed -n 's/^  \([a-z-]*\) .*/\1/p' | sort | tr '\n' ' ' |
    sed 's/ $//' >"$T/cmds"
check "$(cat "$T/cmds")" tpuctl ''
check "completion config" tpuctl co
check "get list set unset" tpuctl config ''
check "set" tpuctl --zone us-central2-b config s
check "--access-token-file --all" tpuctl config list --a
check "bash" tpuctl completion b
check "bash zsh" tpuctl completion ''
check "compute/zone" tpuctl config get compute/
check "core/custom_ca_certs_file core/format core/log_http core/profile core/project" \
    tpuctl config set core/
check "" tpuctl config set compute/zone ''
check "json jsonl" tpuctl --format js
check "table" tpuctl config list --format t
check "debug" tpuctl --verbosity de
check "" tpuctl --project ''
check "--profile --project" tpuctl config get --pro
check "config" tpuctl help con
# Every sub-command of help --all completes under its parent.
while IFS= read -r path; do
	case "$path" in
	*" "*)
		got=$(complete_words tpuctl "${path%% *}" "${path#* }")
		[ "$got" = "${path#* }" ] || fail "'$path' not completed: '$got'"
		;;
	esac
done <<PATHS
$("$TPUCTL" help --all)
PATHS

expect_rc 0 "$TPUCTL" completion zsh
assert_grep '^#compdef tpuctl$' "$T/out"
assert_grep '"config get"\) echo "[^"]*compute/zone' "$T/out"
assert_grep '^	config\) echo "list get set unset" ;;$' "$T/out"
cp "$T/out" "$T/_tpuctl"
# zcomplete WORDS...: what the zsh function hands to compadd (zsh filters
# by prefix itself), with compadd, _files and compdef stubbed.
zcomplete() {
	# shellcheck disable=SC2016 # zsh code, expanded by zsh
	zsh -c '
		compadd() { shift; print -l -- "$@"; }
		_files() { print _files; }
		compdef() { :; }
		. "$1"
		shift
		words=("$@")
		CURRENT=$#
		_tpuctl' zsh "$T/_tpuctl" "$@" | tr '\n' ' ' | sed 's/ $//'
}
zcheck() {
	zwant=$1
	shift
	got=$(zcomplete "$@")
	[ "$got" = "$zwant" ] ||
	    fail "zsh completing '$*': got '$got', want '$zwant'"
}
if have_tool zsh zsh "the zsh completion checks"; then
	zsh -n "$T/_tpuctl" || fail "zsh script does not parse"
	zcheck "list get set unset" tpuctl config ''
	zcheck "bash zsh" tpuctl --zone x completion ''
	zcheck "table json yaml jsonl" tpuctl --format ''
	zcheck "_files" tpuctl version x ''
	zcomplete tpuctl config get '' | grep -q 'compute/zone' ||
	    fail "zsh: no config keys"
	zcomplete tpuctl config list --a | grep -q -- '--all' ||
	    fail "zsh: no --all"
	[ "$(zcomplete tpuctl '' | tr ' ' '\n' | sort | tr '\n' ' ' |
	    sed 's/ $//')" = "$(cat "$T/cmds")" ] ||
	    fail "zsh: commands differ from help"
fi

# Dynamic words (tpuctl completion --list, local data only): node and
# queued-resource names from the node cache, zones and accelerator types
# from the catalog, --worker values from the cached worker count.
emu_start
mkdir -p "$T/path"
ln -s "$TPUCTL" "$T/path/tpuctl"
PATH="$T/path:$PATH"
expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
expect_rc 0 "$TPUCTL" create west --accelerator-type v5litepod-4 \
    --zone us-west4-a
expect_rc 0 "$TPUCTL" queued-resources create qr1 --node-id qn \
    --accelerator-type v4-8
# ssh caches the queued resource's membership (and its node).
expect_rc 0 "$TPUCTL" ssh qr1 -- true
expect_rc 0 "$TPUCTL" completion --list nodes bash
[ "$(cat "$T/out")" = "$(printf 'pod\nqn')" ] || fail "--list nodes: $(cat "$T/out")"
check "pod qn" tpuctl describe ''
check "pod" tpuctl delete p
check "pod qn" tpuctl delete pod ''
check "pod qn west" tpuctl --zone - describe ''
check "west" tpuctl --zone us-west4-a describe ''
check "pod qn qr1" tpuctl ssh ''
check "qr1" tpuctl queued-resources delete ''
check "0 1 2 3 all" tpuctl ssh pod --worker ''
check "" tpuctl ssh nosuch --worker ''
check "us-west4-a us-west4-b" tpuctl --zone us-west4-
check "us-west4-a" tpuctl list --zone us-west4-a
check "v4-3072 v4-32 v4-3456 v4-384" tpuctl create x --accelerator-type v4-3
complete_words tpuctl create x --accelerator-type v4- | grep -q 'v4-8 ' ||
    fail "no v4 accelerator types"
check "v5litepod-1 v5litepod-128 v5litepod-16" tpuctl --zone us-west4-a create x \
    --accelerator-type v5litepod-1
check "" tpuctl --zone us-west4-a create x --accelerator-type v4-
expect_rc 2 "$TPUCTL" completion --list bogus bash
assert_grep "invalid --list 'bogus'" "$T/err"
if have_tool zsh zsh "dynamic zsh completion"; then
	zcheck "all 0 1 2 3" tpuctl ssh pod --worker ''
	zcomplete tpuctl describe '' | grep -q pod || fail "zsh: no node names"
	zcomplete tpuctl --zone '' | grep -q us-central2-b || fail "zsh: no zones"
fi

expect_rc 2 "$TPUCTL" completion fish
assert_grep "unknown shell 'fish': use bash or zsh" "$T/err"
expect_rc 2 "$TPUCTL" completion
