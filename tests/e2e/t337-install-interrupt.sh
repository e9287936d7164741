#!/bin/sh
# tpuctl install interrupted mid-run, on a v4-32's four workers: SIGINT
# exits 130 ("interrupted"), SIGTERM 143 ("terminated"), each after the
# recipe reached pip on every worker; nothing of the installation is left
# running on any worker (no process carries the run's interpreter in its
# environment: the recipe's sh, the interpreter, its children); a second
# install then completes.  The interpreter given with --python is a
# wrapper that waits in "pip install" while a flag file exists.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_sig.sh
. "$(dirname "$0")/lib_sig.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32

# (outside /tmp: as root each worker has its own /tmp, not the test's)
IDX=$(mktemp -d /var/tmp/tpuctl-e2e-idx.XXXXXX)
trap 'rc=$?; rm -rf "$IDX"; (exit $rc); cleanup' EXIT
"$SRCDIR/tests/frameworks/build_index.sh" "$IDX" >/dev/null
PY="$IDX/slowpy"
cat >"$PY" <<EOF
#!/bin/sh
if [ -e "$IDX/slow" ] && [ "\$1 \$2 \$3" = "-m pip install" ]; then
	: >"$IDX/at.\$\$"
	sleep 120
fi
exec /usr/bin/python3 "\$@"
EOF
chmod 755 "$PY"

# the processes of the run: TPUCTL_PYTHON=$PY is in their environment
SIG_ENV="TPUCTL_PYTHON=$PY"
SIG_DIR=$IDX
interrupt() { # SIGNAL EXIT-STATUS WORD
	sig_interrupt "$1" "$2" "$3" install "$TPUCTL" install pod \
	    --framework jax --no-index --find-links "$IDX" --python "$PY"
}

interrupt INT 130 interrupted
interrupt TERM 143 terminated

# a second install completes
rm -f "$IDX/slow"
expect_rc 0 "$TPUCTL" install pod --framework jax --no-index \
    --find-links "$IDX" --python "$PY"
w=0
while [ $w -lt 4 ]; do
	assert_grep "^\[w$w\] jax 0\.6\.1 installed \(jax 0\.6\.1, jaxlib 0\.6\.1, libtpu 0\.0\.15\)$" "$T/out"
	w=$((w + 1))
done
assert_grep '^jax 0\.6\.1: 4 of 4 workers succeeded$' "$T/err"
[ -z "$(sig_procs)" ] || fail "left running after the install: $(sig_procs)"
