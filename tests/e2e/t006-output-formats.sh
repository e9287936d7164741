#!/bin/sh
# --format: table, table(...), json, yaml, jsonl, value(...); core/format
# from the config; YAML that a YAML 1.1 reader (PyYAML) reads back to the
# same strings; invalid formats refused; write errors reported.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

unset CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE 2>/dev/null || true
PY=python3

# json: valid, indented, the same data as jsonl.
expect_rc 0 "$TPUCTL" version --format json
jq -e '.tpuctl | length > 0' "$T/out" >/dev/null || fail "json: no tpuctl"
assert_grep '^  "libcurl": ' "$T/out"
jq -c . "$T/out" >"$T/json1"
expect_rc 0 "$TPUCTL" version --format jsonl
[ "$(wc -l <"$T/out")" -eq 1 ] || fail "jsonl object is not one line"
jq -c . "$T/out" >"$T/json2"
cmp -s "$T/json1" "$T/json2" || fail "json and jsonl disagree"

# A list: jsonl is one line per element, yaml one document per element.
expect_rc 0 "$TPUCTL" config list --format json
n=$(jq length "$T/out")
[ "$n" -ge 5 ] || fail "config list has $n entries"
# (core/format differs: it is the --format flag itself.)
jq -c '.[] | select(.key != "core/format")' "$T/out" >"$T/elems"
expect_rc 0 "$TPUCTL" config list --format jsonl
[ "$(wc -l <"$T/out")" -eq "$n" ] || fail "jsonl lines != $n"
jq -c 'select(.key != "core/format")' "$T/out" | cmp -s - "$T/elems" ||
    fail "jsonl elements differ"
expect_rc 0 "$TPUCTL" config list --format yaml
[ "$(grep -c '^---$' "$T/out")" -eq $((n - 1)) ] || fail "yaml documents"
$PY -c '
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1]))
        if d["key"] != "core/format"]
want = [json.loads(l) for l in open(sys.argv[2])]
sys.exit(0 if docs == want else 1)' "$T/out" "$T/elems" ||
    fail "yaml list does not read back as the json list"

# value(): tab-separated fields per record, dotted paths, missing = empty.
expect_rc 0 "$TPUCTL" config list --format 'value(key,source,nosuch.x)'
assert_grep "^core/log_http	default	\$" "$T/out"
[ "$(wc -l <"$T/out")" -eq "$n" ] || fail "value() lines"
expect_rc 0 "$TPUCTL" version --format 'value( tpuctl , cjson )'
grep -Eq '^[0-9.]+	[0-9.]+$' "$T/out" || fail "value(a,b): $(cat "$T/out")"

# table: the command's columns, or table(...) for chosen ones.
expect_rc 0 "$TPUCTL" config list
assert_grep '^KEY +VALUE +SOURCE$' "$T/out"
expect_rc 0 "$TPUCTL" config list --format 'table(key,source)'
assert_grep '^KEY +SOURCE$' "$T/out"
assert_grep '^core/log_http +default$' "$T/out"
# Columns line up: every SOURCE cell starts where the header does.
col=$(head -1 "$T/out" | awk '{ print index($0, "SOURCE") }')
awk -v c="$col" 'NR > 1 && substr($0, c - 2, 3) !~ /^  [^ ]$/ { exit 1 }' \
    "$T/out" || fail "table columns not aligned"
# A single record without columns is YAML, as gcloud describe.
expect_rc 0 "$TPUCTL" version
assert_grep "^tpuctl: '[0-9.]+'\$" "$T/out"

# YAML quoting: strings that look like other types read back as strings.
for v in yes no No ON off y n true False null Null '~' 0123 1e3 .5 -1 \
    0x1F 1:20 2001-12-14 '.inf' '=' '<<' 'a: b' '#c' 'a #c' '- x' '-' \
    "it's" '"q"' '@x' '`x' '%x' '!x' '&a' '*a' '[x' '{x' ']' '}' '|' '>' \
    ',x' '?' '? x' 'x:' 'üñí' 'a,b'; do
	expect_rc 0 env TPUCTL_SSH_USER="$v" "$TPUCTL" config get ssh/user \
	    --format yaml
	$PY -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
sys.exit(0 if d["value"] == sys.argv[2] else 1)' "$T/out" "$v" ||
	    fail "yaml did not keep '$v': $(cat "$T/out")"
	expect_rc 0 env TPUCTL_SSH_USER="$v" "$TPUCTL" config get ssh/user
	[ "$(cat "$T/out")" = "$v" ] || fail "config get changed '$v'"
done

# core/format from the config sets the default; the flag beats it.
expect_rc 0 "$TPUCTL" config set core/format json
expect_rc 0 "$TPUCTL" version
jq -e .tpuctl "$T/out" >/dev/null || fail "core/format json not applied"
expect_rc 0 "$TPUCTL" version --format 'value(tpuctl)'
grep -Eq '^[0-9.]+$' "$T/out" || fail "--format did not beat core/format"
expect_rc 0 env TPUCTL_CORE_FORMAT=jsonl "$TPUCTL" version
[ "$(wc -l <"$T/out")" -eq 1 ] || fail "TPUCTL_CORE_FORMAT not applied"
expect_rc 0 "$TPUCTL" config unset core/format

# Invalid formats: exit 2, the value and the valid ones named.
for f in xml 'value' 'value()' 'value(a,,b)' 'json(a)' 'table(a' 'table(a b)' \
    'yaml(x)' 'value(a;b)' 'JSON' ''; do
	expect_rc 2 "$TPUCTL" version --format "$f"
	[ -z "$f" ] && continue
	assert_grep "invalid format '.*': use table, table\\(field,...\\), json, yaml, jsonl or value\\(field,...\\)" \
	    "$T/err"
	[ ! -s "$T/out" ] || fail "stdout not empty for --format '$f'"
done

# Write errors are failures in every format.
if [ -w /dev/full ]; then
	for f in table json yaml jsonl 'value(key)' 'table(key)'; do
		set +e
		"$TPUCTL" config list --format "$f" >/dev/full 2>"$T/err"
		rc=$?
		set -e
		[ $rc -eq 1 ] || fail "--format $f >/dev/full exited $rc"
		assert_grep 'write error' "$T/err"
	done
fi
