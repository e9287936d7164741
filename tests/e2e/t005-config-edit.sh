#!/bin/sh
# "config set/unset" edit tpuctl's file in place: comments and other lines
# kept, the profile's section used, atomic replacement with 0700/0600
# modes whatever the umask; bad keys, values and files are refused with
# exit 2 and the file left alone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

CFG="$XDG_CONFIG_HOME/tpuctl/config"

# Created from nothing, under a permissive umask.
(umask 000 && "$TPUCTL" config set compute/zone us-central2-b) \
    2>"$T/err" || fail "config set failed: $(cat "$T/err")"
assert_grep "set compute/zone in $CFG" "$T/err"
[ "$(stat -c %a "$CFG")" = 600 ] || fail "file mode $(stat -c %a "$CFG")"
[ "$(stat -c %a "$XDG_CONFIG_HOME/tpuctl")" = 700 ] || fail "dir mode"
printf '[compute]\nzone = us-central2-b\n' >"$T/want"
cmp -s "$CFG" "$T/want" || fail "unexpected file: $(cat "$CFG")"
ls -a "$XDG_CONFIG_HOME/tpuctl" >"$T/ls"
assert_no_grep '^\.config\.' "$T/ls"

# Comments, unknown lines and other sections survive; a key repeated is
# collapsed into one line where the last one was.
cat >"$CFG" <<'INI'
# my settings
[core]
project = old-project-1
; keep me
[compute]
zone = us-east1-d
zone = us-east1-c

[profile ci]
# ci comment
compute/zone = europe-west4-a
INI
expect_rc 0 "$TPUCTL" config set compute/zone us-west1-b
expect_rc 0 "$TPUCTL" config set core/project new-project-1
expect_rc 0 "$TPUCTL" --profile ci config set core/project ci-project-1
expect_rc 0 "$TPUCTL" config set ssh/user 'yes: no'
cat >"$T/want" <<'INI'
# my settings
[core]
project = new-project-1
; keep me
[compute]
zone = us-west1-b

[profile ci]
# ci comment
compute/zone = europe-west4-a
core/project = ci-project-1

[ssh]
user = yes: no
INI
diff -u "$T/want" "$CFG" >&2 || fail "edited file differs"
expect_rc 0 "$TPUCTL" config get ssh/user
[ "$(cat "$T/out")" = 'yes: no' ] || fail "value with ':' not kept"

# unset removes the line in the selected section only.
expect_rc 0 "$TPUCTL" --profile ci config unset compute/zone
assert_grep "unset compute/zone in $CFG \\[profile ci\\]" "$T/err"
expect_rc 0 "$TPUCTL" config get compute/zone
[ "$(cat "$T/out")" = us-west1-b ] || fail "default section touched"
assert_no_grep 'europe-west4-a' "$CFG"
assert_grep '^# ci comment$' "$CFG"
expect_rc 0 "$TPUCTL" config unset compute/zone
expect_rc 4 "$TPUCTL" config get compute/zone
expect_rc 0 "$TPUCTL" config unset compute/zone
assert_grep 'compute/zone was not set' "$T/err"

# A flag or variable that overrides the new value is pointed out.
expect_rc 0 env CLOUDSDK_CORE_PROJECT=env-project-1 "$TPUCTL" config set \
    core/project other-project
assert_grep 'overridden by env CLOUDSDK_CORE_PROJECT' "$T/err"

# Refusals leave the file as it was.
cp "$CFG" "$T/before"
expect_rc 2 "$TPUCTL" config set compute/zone US-CENTRAL2-B
assert_grep "invalid compute/zone 'US-CENTRAL2-B': a zone looks like" "$T/err"
expect_rc 2 "$TPUCTL" config set compute/zone '../x'
expect_rc 2 "$TPUCTL" config set core/project abc
assert_grep "6 to 30" "$T/err"
expect_rc 2 "$TPUCTL" config set core/project my-project-
expect_rc 2 "$TPUCTL" config set core/format 'value('
assert_grep "invalid format 'value\\(': non-empty key name expected" "$T/err"
expect_rc 2 "$TPUCTL" config set core/log_http maybe
expect_rc 2 "$TPUCTL" config set ssh/fanout 2000
expect_rc 2 "$TPUCTL" config set ssh/user "$(printf 'a\nb')"
assert_grep "control characters" "$T/err"
expect_rc 2 "$TPUCTL" config set ssh/user ' x'
expect_rc 2 "$TPUCTL" config set core/nosuch x
assert_grep "^tpuctl: unknown key 'core/nosuch'; valid keys: .*compute/zone" \
    "$T/err"
expect_rc 2 "$TPUCTL" config unset nosuch
expect_rc 2 "$TPUCTL" config get nosuch
assert_grep "unknown key 'nosuch'" "$T/err"
expect_rc 2 "$TPUCTL" config set compute/zone
assert_grep '^tpuctl: missing operand' "$T/err"
assert_grep '^usage: tpuctl config set key value' "$T/err"
expect_rc 2 "$TPUCTL" config frob
assert_grep "unknown command 'config frob'" "$T/err"
expect_rc 2 "$TPUCTL" config
assert_grep "missing sub-command" "$T/err"
cmp -s "$T/before" "$CFG" || fail "a refused set changed the file"

# Malformed files: exit 2 naming file and line; never rewritten.
printf '[core]\nproject = good-project\nthis line is bad\n' >"$CFG"
expect_rc 2 "$TPUCTL" config list
assert_grep "^tpuctl: $CFG:3: malformed line" "$T/err"
expect_rc 2 "$TPUCTL" config set compute/zone us-central2-b
assert_grep ":3: malformed line" "$T/err"
assert_no_grep 'zone' "$CFG"
printf 'zone = us-central2-b\n' >"$CFG"
expect_rc 2 "$TPUCTL" version
assert_grep ":1: 'zone' is outside any \\[section\\]" "$T/err"
printf '[compute]\n\nzone = nowhere\n' >"$CFG"
expect_rc 2 "$TPUCTL" version
assert_grep ":3: invalid compute/zone 'nowhere'" "$T/err"
printf '[profile ci]\nzone = us-central2-b\n' >"$CFG"
expect_rc 2 "$TPUCTL" version
assert_grep ":2: key 'zone' in \\[profile ci\\] must be written section/name" \
    "$T/err"
printf '[profile c/i]\ncompute/zone = us-central2-b\n' >"$CFG"
expect_rc 2 "$TPUCTL" version
assert_grep "invalid profile name 'c/i'" "$T/err"
printf '[core]\nproject = abcdef\0\n' >"$CFG"
expect_rc 2 "$TPUCTL" version
assert_grep "NUL byte" "$T/err"

# Unknown sections and keys: one warning each, then ignored.
printf '[core]\nfoo = 1\nfoo = 2\n[bar]\nx = 1\n[profile p]\nssh/nope = 1\n' \
    >"$CFG"
expect_rc 0 "$TPUCTL" --profile p version
[ "$(grep -c "unknown key 'core/foo'" "$T/err")" -eq 1 ] ||
    fail "unknown key not warned exactly once"
assert_grep ":2: unknown key 'core/foo' \\(ignored\\)" "$T/err"
assert_grep ":5: unknown section 'bar'" "$T/err"
assert_no_grep "profile 'p' is not defined" "$T/err"
assert_grep ":7: unknown key 'ssh/nope'" "$T/err"

# A directory that cannot be written: exit 1 with the reason.
if [ "$(id -u)" -ne 0 ]; then
	rm -f "$CFG"
	chmod 500 "$XDG_CONFIG_HOME/tpuctl"
	expect_rc 1 "$TPUCTL" config set compute/zone us-central2-b
	assert_grep "cannot create a file in" "$T/err"
	chmod 700 "$XDG_CONFIG_HOME/tpuctl"
fi
rm -rf "$XDG_CONFIG_HOME/tpuctl"
printf 'x' >"$T/notadir"
expect_rc 1 env XDG_CONFIG_HOME="$T/notadir" "$TPUCTL" config set \
    compute/zone us-central2-b
assert_grep "cannot create" "$T/err"

# tpuctl.conf(5) documents every key.
expect_rc 0 "$TPUCTL" config list --all --format 'value(key)'
while IFS= read -r key; do
	grep -q "^\\.It $key\$" "$SRCDIR/man/tpuctl.conf.5" ||
	    fail "tpuctl.conf.5 does not document $key"
done <"$T/out"
