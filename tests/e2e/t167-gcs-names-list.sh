#!/bin/sh
# t167: Object names: unicode, "a?b#c%2F", spaces and '+' round-trip through
# percent-encoded paths; raw '/' works too; CR/LF, ".", and names over
# 1024 bytes are refused.  Lists: prefix, delimiter with prefixes[], and
# paging that returns exactly the unpaged result.

# shellcheck source-path=SCRIPTDIR
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119
emu_start
TOKEN=$(cat "$EMU_DIR/access-token")
GCS=${STORAGE_EMULATOR_HOST:?the emulator env has no STORAGE_EMULATOR_HOST}
GCS=${GCS%/}
PROJECT=${CLOUDSDK_CORE_PROJECT:-e2e-project}

# req METHOD URL [curl args...]: body in $T/body, headers in $T/hdr,
# status in $ST.
req() {
	m=$1
	u=$2
	shift 2
	ST=$(curl -sS -X "$m" -o "$T/body" -D "$T/hdr" -w '%{http_code}' \
	    -H "Authorization: Bearer $TOKEN" "$@" "$u") ||
	    fail "curl $m $u failed"
}
# want STATUS WHAT: the last req answered STATUS.
want() {
	[ "$ST" = "$1" ] || {
		cat "$T/body" >&2
		fail "$2: HTTP $ST, want $1"
	}
}
# jf FILTER: a jq filter over the last body.
jf() {
	jq -r "$1" "$T/body"
}
# hdr NAME: a response header of the last req ("" when absent).
hdr() {
	tr -d '\r' <"$T/hdr" | sed -n "s/^$1: //Ip" | tail -1
}
# uri S: percent-encode S as one path segment.
uri() {
	jq -rn --arg s "$1" '$s|@uri'
}
# hashes FILE: "CRC32C_B64 MD5_B64", computed independently in Python.
hashes() {
	python3 - "$1" <<'PY'
import base64, hashlib, struct, sys
t = [[0] * 256 for _ in range(8)]
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    t[0][i] = c
for k in range(1, 8):
    for i in range(256):
        t[k][i] = t[0][t[k - 1][i] & 0xFF] ^ (t[k - 1][i] >> 8)
t0, t1, t2, t3, t4, t5, t6, t7 = t
d = open(sys.argv[1], 'rb').read()
n8 = len(d) // 8 * 8
c = 0xFFFFFFFF
for (w,) in struct.iter_unpack('<Q', d[:n8]):
    w ^= c
    c = (t7[w & 0xFF] ^ t6[(w >> 8) & 0xFF] ^ t5[(w >> 16) & 0xFF] ^
         t4[(w >> 24) & 0xFF] ^ t3[(w >> 32) & 0xFF] ^ t2[(w >> 40) & 0xFF] ^
         t1[(w >> 48) & 0xFF] ^ t0[w >> 56])
for b in d[n8:]:
    c = t0[(c ^ b) & 0xFF] ^ (c >> 8)
c ^= 0xFFFFFFFF
print(base64.b64encode(c.to_bytes(4, 'big')).decode(),
      base64.b64encode(hashlib.md5(d).digest()).decode())
PY
}
# mkfile PATH SIZE: SIZE pseudo-random bytes (deterministic).
mkfile() {
	python3 -c 'import random,sys; random.seed(int(sys.argv[1])); sys.stdout.buffer.write(random.randbytes(int(sys.argv[1])))' "$2" >"$1"
}
# mkbucket NAME: create a bucket in $PROJECT.
mkbucket() {
	req POST "$GCS/storage/v1/b?project=$PROJECT" \
	    -H 'Content-Type: application/json' --data-binary "{\"name\":\"$1\"}"
	want 200 "create bucket $1"
}
# sums FILE: $CRC and $MD5 of FILE.
# shellcheck disable=SC2034
sums() {
	h=$(hashes "$1")
	CRC=${h% *}
	MD5=${h#* }
}

mkbucket e2e-names
for n in 'dir/a.txt' 'dir/b.txt' 'dir/sub/c.txt' 'top.txt' \
    'ünïcødé/文件.bin' 'a?b#c%2F' 'with space+plus'; do
	e=$(uri "$n")
	printf '%s' "$n" >"$T/data"
	req POST "$GCS/upload/storage/v1/b/e2e-names/o?uploadType=media&name=$e" \
	    --data-binary "@$T/data"
	want 200 "upload '$n'"
	[ "$(jf .name)" = "$n" ] || fail "stored name '$(jf .name)' for '$n'"
	jf .selfLink | grep -qF "/o/$e" || fail "selfLink of '$n': $(jf .selfLink)"
	req GET "$GCS/storage/v1/b/e2e-names/o/$e"
	want 200 "get '$n'"
	[ "$(jf .name)" = "$n" ] || fail "get name '$(jf .name)'"
	req GET "$GCS/download/storage/v1/b/e2e-names/o/$e?alt=media"
	want 200 "download '$n'"
	[ "$(cat "$T/body")" = "$n" ] || fail "content of '$n'"
done
req GET "$GCS/storage/v1/b/e2e-names/o/dir/sub/c.txt"
want 200 "raw slashes in the path"
[ "$(jf .name)" = dir/sub/c.txt ] || fail "raw-slash name"

for bad in 'x%0Ay' 'x%0Dy' '.' '..'; do
	req POST "$GCS/upload/storage/v1/b/e2e-names/o?uploadType=media&name=$bad" \
	    --data-binary x
	want 400 "bad name '$bad'"
done
long=$(python3 -c 'print("n" * 1024)')
req POST "$GCS/upload/storage/v1/b/e2e-names/o?uploadType=media&name=x$long" \
    --data-binary x
want 400 "a 1025-byte name"
req POST "$GCS/upload/storage/v1/b/e2e-names/o?uploadType=media&name=$long" \
    --data-binary x
want 200 "a 1024-byte name"
req DELETE "$GCS/storage/v1/b/e2e-names/o/$long"
want 204 "delete the 1024-byte name"

req GET "$GCS/storage/v1/b/e2e-names/o?prefix=dir%2F&delimiter=%2F"
want 200 "list dir/ with a delimiter"
[ "$(jf '[.items[].name]|join(",")')" = dir/a.txt,dir/b.txt ] ||
    fail "items: $(jf '[.items[].name]|join(",")')"
[ "$(jf '.prefixes|join(",")')" = dir/sub/ ] || fail "prefixes: $(jf '.prefixes|join(",")')"
req GET "$GCS/b/e2e-names/o?delimiter=/"
want 200 "list the top level"
[ "$(jf '.prefixes|join(",")')" = "dir/,ünïcødé/" ] || fail "top prefixes: $(jf '.prefixes|join(",")')"
[ "$(jf '[.items[].name]|join(",")')" = "a?b#c%2F,top.txt,with space+plus" ] ||
    fail "top items: $(jf '[.items[].name]|join(",")')"
req GET "$GCS/storage/v1/b/e2e-names/o?prefix=dir"
want 200 "list a prefix without a delimiter"
[ "$(jf '.items|length')" = 3 ] || fail "prefix dir: $(jf '.items|length') items"
req GET "$GCS/storage/v1/b/e2e-names/o?prefix=zzz"
want 200 "empty list"
[ "$(jf 'keys|join(",")')" = kind ] || fail "an empty list has $(jf 'keys|join(",")')"

# Paging with and without a delimiter returns the unpaged result.
for d in '' '%2F'; do
	req GET "$GCS/storage/v1/b/e2e-names/o?delimiter=$d"
	jf '[(.prefixes // [])[], (.items // [])[].name]|sort|.[]' >"$T/all"
	: >"$T/paged"
	tok=
	pages=0
	while :; do
		req GET "$GCS/storage/v1/b/e2e-names/o?delimiter=$d&maxResults=2${tok:+&pageToken=$tok}&fields=items(name),prefixes,nextPageToken"
		want 200 "page $pages"
		n=$(jf '((.prefixes // []) + [(.items // [])[].name])|length')
		[ "$n" -le 2 ] || fail "page with $n entries"
		jf '(.prefixes // [])[], (.items // [])[].name' >>"$T/paged"
		pages=$((pages + 1))
		[ $pages -lt 20 ] || fail "paging does not end"
		tok=$(jf '.nextPageToken // empty')
		[ -n "$tok" ] || break
	done
	sort "$T/paged" >"$T/paged.s"
	cmp -s "$T/all" "$T/paged.s" || {
		diff "$T/all" "$T/paged.s" >&2
		fail "paged list (delimiter '$d') differs"
	}
	[ $pages -ge 3 ] || fail "only $pages pages"
done
req GET "$GCS/storage/v1/b/e2e-names/o?pageToken=zz"
want 400 "a bad pageToken"
req GET "$GCS/storage/v1/b/e2e-names/o?maxResults=0"
want 400 "maxResults=0"
req GET "$GCS/storage/v1/b/no-such-bucket/o"
want 404 "list a missing bucket"
