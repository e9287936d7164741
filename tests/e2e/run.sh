#!/bin/sh
# Run every end-to-end test (tests/e2e/t*.sh), each with a time limit, and
# close with the "N passed, N failed" line.  TESTS="t001 t010" selects.
set -u

dir=$(cd "$(dirname "$0")" && pwd)
limit=${E2E_TIMEOUT:-300}
pass=0
failed=0
failures=""

for t in "$dir"/t*.sh; do
	name=$(basename "$t" .sh)
	if [ -n "${TESTS:-}" ]; then
		case " $TESTS " in
		*" ${name%%-*} "* | *" $name "*) ;;
		*) continue ;;
		esac
	fi
	start=$(date +%s)
	if timeout -k 10 "$limit" sh "$t" >"${TMPDIR:-/tmp}/e2e-$name.log" 2>&1; then
		pass=$((pass + 1))
		echo "ok   $name ($(($(date +%s) - start)) s)"
	else
		failed=$((failed + 1))
		failures="$failures $name"
		echo "FAIL $name ($(($(date +%s) - start)) s)"
		sed 's/^/    /' "${TMPDIR:-/tmp}/e2e-$name.log" | tail -40
	fi
	rm -f "${TMPDIR:-/tmp}/e2e-$name.log"
done

[ -z "$failures" ] || echo "failed:$failures"
echo "e2e: $pass passed, $failed failed"
[ "$failed" -eq 0 ]
