#!/bin/sh
# RELIABILITY.md S1: TLS peer and host verification always on, and the
# one verification switch (--strict-host-key-checking=no, for workers
# that publish no host key) explicit, loud and never a default:
#  - the source sets CURLOPT_SSL_VERIFYPEER 1 and VERIFYHOST 2 and never
#    anything else (nor the PROXY_ variants off);
#  - no ssh/curl/wget/pip/git "don't verify" in the source, the recipes
#    and probes run on workers, the scripts, or the CI files;
#  - no option (man pages, the usage tables, the config settings) named
#    insecure / no-verify / skip-verify / disable-ssl; the strict switch
#    is a flag only (config refuses it as a setting), defaults to yes;
#  - E1 live: the emulator over https with no CA given is refused with
#    "certificate verify failed" and no request reaches it (E2, the host
#    name check, is t204's).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$SRCDIR"

grep -rn -E 'CURLOPT_(PROXY_)?SSL_VERIFY(PEER|HOST)' src cmd >"$T/verify" ||
    true
[ "$(grep -c . "$T/verify")" -ge 2 ] ||
    fail "no CURLOPT_SSL_VERIFYPEER/HOST set: $(cat "$T/verify")"
if grep -v -E 'VERIFYPEER, 1L\)|VERIFYHOST, 2L\)' "$T/verify" | grep -q .; then
	fail "a verification option set to something else: $(cat "$T/verify")"
fi
grep -q 'VERIFYPEER, 1L)' "$T/verify" || fail "VERIFYPEER not set to 1"
grep -q 'VERIFYHOST, 2L)' "$T/verify" || fail "VERIFYHOST not set to 2"

# Off switches of the tools tpuctl, its recipes and its scripts call.
pat='StrictHostKeyChecking[= ]+(no|off|accept-new)|UserKnownHostsFile[= ]+/dev/null|'
pat="$pat"'curl[^|;]* (-k|--insecure)( |$)|--no-check-certificate|--trusted-host|'
pat="$pat"'GIT_SSL_NO_VERIFY|PYTHONHTTPSVERIFY=0|verify=False|SSL_VERIFY_NONE|'
pat="$pat"'LIBSSH2_KNOWNHOST_CHECK_NOTFOUND[^)]*return 0'
files=$(ls src/*.[ch] cmd/*.[ch] config/recipes/* config/probes/* \
    scripts/* .ci/run Makefile 2>/dev/null)
# shellcheck disable=SC2086 # file names without spaces
if grep -n -E -- "$pat" $files >"$T/hits"; then
	fail "an insecure switch: $(cat "$T/hits")"
fi

# No option or setting that turns verification off.
opt='insecure|no-verify|skip-verify|noverify|disable[-_]ssl|ssl[-_]verify|tls[-_]skip|verify[-_]ssl'
# shellcheck disable=SC2086
if grep -n -i -E -- "$opt" man/*.[15] cmd/*.c cmd/*.def src/config*.c \
    >"$T/hits"; then
	fail "an option that turns verification off: $(cat "$T/hits")"
fi
expect_rc 2 "$TPUCTL" config set ssh/strict_host_key_checking no
expect_rc 2 "$TPUCTL" config set ssh/strict-host-key-checking no
grep -q 'strict_host_keys = 1;' cmd/util_ssh.c ||
    fail "--strict-host-key-checking no longer defaults to yes"
# CI and the tests never turn it off for everyone.
if grep -n -E 'strict-host-key-checking[= ]no' .ci/run Makefile \
    tests/e2e/lib*.sh scripts/*; then
	fail "a CI default turns host key checking off"
fi

# E1, live.
emu_start --tls
unset TPUCTL_CA_BUNDLE
n=$(emu_requests | wc -l)
expect_rc 1 "$TPUCTL" --access-token-file "$EMU_DIR/access-token" \
    api "v2/projects/$CLOUDSDK_CORE_PROJECT/locations"
assert_grep 'certificate verify failed' "$T/err"
[ "$(emu_requests | wc -l)" -eq "$n" ] || fail "E1: a request got through"
echo "ok: $TEST_NAME"
