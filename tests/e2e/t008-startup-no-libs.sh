#!/bin/sh
# Start-up stays cheap: "tpuctl --version" and the commands that need no
# network (help, config, completion) neither load libcurl, libssh2 nor
# libcrypto (src/dl.h loads them on first use), checked with the dynamic
# linker's own trace and with the three libraries replaced by empty
# files.  "tpuctl version", which asks them for their versions, does load
# them, and fails with one line naming the library when it cannot.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

LIBS_RE='lib(curl|ssh2|crypto)\.so'

# Not linked: no NEEDED entry for them.
if have_tool readelf binutils "the NEEDED check"; then
	readelf -d "$TPUCTL" >"$T/dyn"
	assert_grep 'NEEDED.*libcjson' "$T/dyn"
	assert_no_grep "NEEDED.*$LIBS_RE" "$T/dyn"
fi

# The loader's trace: nothing of them is initialised.
for args in "--version" "-V" "help" "help list" "config list" \
    "completion bash" "completion zsh"; do
	# shellcheck disable=SC2086 # args is a word list on purpose
	expect_rc 0 env LD_DEBUG=libs "$TPUCTL" $args
	assert_grep 'calling init: .*libc\.so' "$T/err"
	assert_no_grep "calling init: .*$LIBS_RE" "$T/err"
done
# The control: "tpuctl version" loads all three (so the check above can
# fail).
expect_rc 0 env LD_DEBUG=libs "$TPUCTL" version
for l in curl ssh2 crypto; do
	assert_grep "calling init: .*lib$l\\.so" "$T/err"
done
assert_grep '^libcurl: ' "$T/out"

# The libraries replaced by empty files, found first through
# LD_LIBRARY_PATH: the cheap commands still work.
mkdir "$T/lib"
: >"$T/lib/libcurl.so.4"
: >"$T/lib/libssh2.so.1"
: >"$T/lib/libcrypto.so.3"
export LD_LIBRARY_PATH="$T/lib"
expect_rc 0 "$TPUCTL" --version
assert_grep '^tpuctl [0-9]' "$T/out"
assert_grep '^built with libcurl [0-9].*, libssh2 [0-9].*, OpenSSL [0-9]' \
    "$T/out"
[ ! -s "$T/err" ] || fail "--version wrote on stderr"
expect_rc 0 "$TPUCTL" help
assert_grep '^  version ' "$T/out"
expect_rc 0 "$TPUCTL" config set core/project startup-proj
expect_rc 0 "$TPUCTL" config list --format json
assert_grep 'startup-proj' "$T/out"
expect_rc 0 "$TPUCTL" config unset core/project
expect_rc 0 "$TPUCTL" completion bash
assert_grep 'complete' "$T/out"

# A command that needs them: exit 1, one line naming the library and its
# Debian package, nothing on stdout.
expect_rc 1 "$TPUCTL" version
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line on stderr"
assert_grep '^tpuctl: cannot load libcurl\.so\.4 \(install the Debian package libcurl4\): ' \
    "$T/err"
[ ! -s "$T/out" ] || fail "stdout not empty"
# The loader's reason follows: here libcurl's own dependency libssh2.
rm "$T/lib/libcurl.so.4" "$T/lib/libcrypto.so.3"
expect_rc 1 "$TPUCTL" version
assert_grep '^tpuctl: cannot load libcurl\.so\.4 .*: .*/lib/libssh2\.so\.1: ' \
    "$T/err"
