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
# shellcheck source=tests/e2e/lib_gcs.sh
. "$(dirname "$0")/lib_gcs.sh"
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
