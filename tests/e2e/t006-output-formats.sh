#!/bin/sh
# --format in gcloud's language: table, table[...](...), json, yaml,
# jsonl, value(...), get(...), csv, flattened/text, none; core/format from
# the config; YAML quoted as gcloud quotes it (YAML 1.2) and read back to
# the same strings; invalid formats refused with the bad part named;
# write errors reported.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

unset CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE 2>/dev/null || true
PY=python3
# gcloud writes YAML 1.2 (ruamel): read it back with YAML 1.2's core
# schema, not PyYAML's 1.1 (which takes yes/no/on/off for booleans)
cat >"$T/yaml12.py" <<'EOF'
import re
import yaml
# YAML 1.2 core schema: bool, int and float as YAML 1.2 has them.
class R(yaml.SafeLoader):
    pass
drop = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float")
R.yaml_implicit_resolvers = {k: [r for r in v if r[0] not in drop]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
R.add_implicit_resolver("tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
R.add_implicit_resolver("tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9_]+|0o[0-7_]+|0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"))
R.add_implicit_resolver("tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)"
               r"(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))
EOF

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
[ "$(grep -c '^---$' "$T/out")" -eq "$n" ] || fail "yaml documents"
PYTHONPATH="$T" $PY -c '
import json, sys, yaml
from yaml12 import R
docs = [d for d in yaml.load_all(open(sys.argv[1]), Loader=R)
        if d["key"] != "core/format"]
want = [json.loads(l) for l in open(sys.argv[2])]
sys.exit(0 if docs == want else 1)' "$T/out" "$T/elems" ||
    fail "yaml list does not read back as the json list"

# value(): tab-separated fields per record, keys, missing = empty.
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
assert_grep '^tpuctl: [0-9.]+$' "$T/out"

# csv: a heading of lowercase labels, "..." around values with a comma;
# csv[no-heading]; get(); value[separator=...]; table[no-heading,box].
expect_rc 0 "$TPUCTL" config list --format 'csv(key,source)'
[ "$(head -1 "$T/out")" = "key,source" ] || fail "csv heading: $(head -1 "$T/out")"
assert_grep '^core/log_http,default$' "$T/out"
expect_rc 0 env TPUCTL_SSH_USER='a,b' "$TPUCTL" config get ssh/user \
    --format 'csv[no-heading](value)'
[ "$(cat "$T/out")" = '"a,b"' ] || fail "csv quoting: $(cat "$T/out")"
expect_rc 0 env TPUCTL_SSH_USER=u "$TPUCTL" config get ssh/user --format 'get(key)'
[ "$(cat "$T/out")" = ssh/user ] || fail "get(key): $(cat "$T/out")"
expect_rc 0 env TPUCTL_SSH_USER=u "$TPUCTL" config get ssh/user --format 'value[separator=" | "](key,key.upper())'
[ "$(cat "$T/out")" = 'ssh/user | SSH/USER' ] || fail "separator: $(cat "$T/out")"
expect_rc 0 env TPUCTL_SSH_USER=u "$TPUCTL" config get ssh/user --format 'table[no-heading](key,key.len())'
[ "$(cat "$T/out")" = 'ssh/user  8' ] || fail "table[no-heading]: $(cat "$T/out")"
expect_rc 0 env TPUCTL_SSH_USER=u "$TPUCTL" config get ssh/user --format 'table[box](key)'
printf '┌──────────┐\n│   KEY    │\n├──────────┤\n│ ssh/user │\n└──────────┘\n' |
    cmp -s - "$T/out" || fail "table[box]: $(cat "$T/out")"
expect_rc 0 env TPUCTL_SSH_USER=u "$TPUCTL" config get ssh/user --format 'flattened(key)'
[ "$(cat "$T/out")" = 'key: ssh/user' ] || fail "flattened: $(cat "$T/out")"
expect_rc 0 env TPUCTL_SSH_USER=u "$TPUCTL" config get ssh/user --format none
[ ! -s "$T/out" ] || fail "none printed: $(cat "$T/out")"

# YAML quoting as gcloud's (YAML 1.2): strings that a YAML 1.2 reader
# would take for a bool, null, number or time are quoted, the others not
# (yes, on, y are strings in YAML 1.2); every one reads back the same.
for v in "yes|yes" "no|no" "ON|ON" "y|y" "true|'true'" "False|'False'" \
    "null|'null'" "Null|'Null'" "~|'~'" "0123|'0123'" "1e3|'1e3'" ".5|'.5'" \
    "-1|'-1'" "0x1F|'0x1F'" "1:20|1:20" "2001-12-14|'2001-12-14'" \
    ".inf|'.inf'" "a: b|'a: b'" "#c|'#c'" "it's|it's" "'q|\"'q\"" \
    "üñí|üñí" "a,b|a,b" "1_000|'1_000'"; do
	yin=${v%%|*}
	yout="value: ${v#*|}"
	expect_rc 0 env TPUCTL_SSH_USER="$yin" "$TPUCTL" config get ssh/user \
	    --format 'yaml(value)'
	[ "$(cat "$T/out")" = "$yout" ] ||
	    fail "yaml of '$yin': $(cat "$T/out"), want $yout"
done
for v in yes no No ON off y n true False null Null '~' 0123 1e3 .5 -1 \
    0x1F 1:20 2001-12-14 '.inf' '=' '<<' 'a: b' '#c' 'a #c' '- x' '-' \
    "it's" '"q"' '@x' '`x' '%x' '!x' '&a' '*a' '[x' '{x' ']' '}' '|' '>' \
    ',x' '?' '? x' 'x:' 'üñí' 'a,b'; do
	expect_rc 0 env TPUCTL_SSH_USER="$v" "$TPUCTL" config get ssh/user \
	    --format yaml
	PYTHONPATH="$T" $PY -c '
import sys, yaml
from yaml12 import R
d = yaml.load(open(sys.argv[1], encoding="utf-8"), Loader=R)
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

# Invalid formats: exit 2, one line naming the bad part and the rule.
for f in "xml|unknown format 'xml'" "value|value needs a projection" \
    "value()|value needs a projection" "value(a,,b)|non-empty key name expected" \
    "table(a|',' or '.' expected" "table(a b)|',' or '.' expected" \
    "value(a;b)|',' or '.' expected" "JSON|unexpected text" \
    "[]|format name expected" "value(a..b)|non-empty key name expected" \
    "value(a.nosuch())|unknown transform 'nosuch" \
    "table[box|',' or '.' expected"; do
	expect_rc 2 "$TPUCTL" version --format "${f%%|*}"
	assert_grep "invalid format '.*': ${f#*|}" "$T/err"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "stdout not empty for --format '${f%%|*}'"
done
expect_rc 2 "$TPUCTL" version --format ''

# Write errors are failures in every format.
if [ -w /dev/full ]; then
	for f in table json yaml jsonl 'value(key)' 'table(key)' 'csv(key)' \
	    flattened 'table[box](key)'; do
		set +e
		"$TPUCTL" config list --format "$f" >/dev/full 2>"$T/err"
		rc=$?
		set -e
		[ $rc -eq 1 ] || fail "--format $f >/dev/full exited $rc"
		assert_grep 'write error' "$T/err"
	done
fi
