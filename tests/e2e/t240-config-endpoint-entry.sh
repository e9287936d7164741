#!/bin/sh
# t240: an api_endpoint_overrides/... value that could never be used is
# refused where it is given (issue 19 defect 13, config part): config set
# applies the rule the use applies (endpoint_check_value: https, or http
# to a loopback host; host:port is http), exit 2 with one line naming the
# value and the rule, and the config file is unchanged; such a value put
# in the file by hand is refused when the file is read, with the same
# rule; usable values are still accepted.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

CONF="$XDG_CONFIG_HOME/tpuctl/config"
expect_rc 0 "$TPUCTL" config set api_endpoint_overrides/tpu https://tpu.example.com/
cp "$CONF" "$T/conf.before"
for key in tpu storage oauth2 iamcredentials; do
	for v in file:///etc/passwd ftp://example.com/ gopher://127.0.0.1/ \
	    http://example.com/ http://10.0.0.1:8080 example.com:8080; do
		expect_rc 2 "$TPUCTL" config set "api_endpoint_overrides/$key" "$v"
		[ "$(wc -l <"$T/err")" -eq 1 ] ||
		    fail "$key=$v: more than one line: $(cat "$T/err")"
		assert_grep "^tpuctl: invalid api_endpoint_overrides/$key: refusing URL '" "$T/err"
		assert_grep 'only https|plain http is allowed only to loopback' "$T/err"
		cmp -s "$CONF" "$T/conf.before" || fail "$key=$v changed the file"
	done
done
for v in https://tpu.example.com/ http://127.0.0.1:8080/ 127.0.0.1:8080 \
    localhost:9 'http://[::1]:9/'; do
	expect_rc 0 "$TPUCTL" config set api_endpoint_overrides/tpu "$v"
done

# the use says the same as the entry
printf '[api_endpoint_overrides]\ntpu = http://example.com/\n' >"$CONF"
expect_rc 2 "$TPUCTL" config get api_endpoint_overrides/tpu
assert_grep "plain http is allowed only to loopback hosts" "$T/err"
rm -f "$CONF"
expect_rc 2 env CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU=file:///etc/passwd \
    "$TPUCTL" config get api_endpoint_overrides/tpu
assert_grep "refusing URL 'file:///etc/passwd'" "$T/err"
exit 0
