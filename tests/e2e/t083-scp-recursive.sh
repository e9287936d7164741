#!/bin/sh
# shellcheck disable=SC2016 # remote shells expand these
# tpuctl scp --recurse over SFTP on a v4-16 (2 workers): a tree with
# nested and empty directories, a read-only directory, names with spaces,
# a newline, UTF-8 and a leading '-', modes, a link to a file (copied as
# the file), a link to a directory and a dangling link (skipped), up to
# every worker and back from every worker into per-worker folders, the
# round trip compared name by name, mode by mode, byte by byte.  Then
# what could escape the destination: links made on the worker pointing
# out of the tree (never followed, nothing written outside), a remote
# operand ending in "..", and local links already in the destination
# (never written through).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-16
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
nl='
'

S="$T/src/tree"
mkdir -p "$S/empty" "$S/deep/x/y/z" "$S/ro" "$S/-dash dir"
echo space >"$S/a b.txt"
chmod 640 "$S/a b.txt"
echo newline >"$S/new${nl}line"
echo unicode >"$S/été ünï ✓"
echo dash >"$S/-dash dir/-f"
head -c 70000 /dev/urandom >"$S/deep/x/y/z/bin"
chmod 600 "$S/deep/x/y/z/bin"
echo ro >"$S/ro/f"
chmod 700 "$S/empty"
chmod 751 "$S/deep/x"
chmod 555 "$S/ro"
ln -s 'a b.txt' "$S/flink"
ln -s /etc "$S/dlink"
ln -s ../../nowhere "$S/dangling"

# manifest DIR: type, mode and name of everything under DIR.
manifest() {
	(cd "$1" && find . -mindepth 1 -printf '%y %m %p\n' | LC_ALL=C sort)
}
# same_files SRC DST: every regular file under SRC is the same in DST.
same_files() {
	(cd "$1" && find . -type f -exec sh -c \
	    'for f; do cmp -s "$f" "$0/$f" || exit 1; done' "$2" {} +)
}
# What a copy must hold: the tree without its links, and flink as a
# regular file with the mode of its target.
{
	manifest "$S" | grep -v '^l '
	echo "f 640 ./flink"
} | LC_ALL=C sort >"$T/want"
[ "$(grep -c . "$T/want")" -eq 15 ] || fail "bad manifest: $(cat "$T/want")"

expect_rc 0 "$TPUCTL" scp --worker all --recurse --ssh-key-file "$KEY" \
    "$S" pod:
assert_grep '^\[w1\] 2 symbolic links or special files skipped' "$T/err"

# On the workers: flink is a regular file, no link was made.
expect_rc 0 "$TPUCTL" ssh pod --worker all --ssh-key-file "$KEY" --command \
    'test -f tree/flink && ! test -L tree/flink &&
     test "$(find tree -type l | wc -l)" = 0 &&
     test "$(cat "tree/new
line")" = newline && echo clean'
[ "$(grep -c 'clean$' "$T/out")" -eq 2 ] || fail "worker trees: $(cat "$T/out")"

# one tree from several workers: DST/wN/ is the tree (issue 20)
expect_rc 0 "$TPUCTL" scp --worker all --recurse --ssh-key-file "$KEY" \
    pod:tree "$T/dl"
for w in 0 1; do
	manifest "$T/dl/w$w" >"$T/got"
	diff "$T/want" "$T/got" >"$T/diff" ||
	    fail "w$w: tree differs: $(cat "$T/diff")"
	same_files "$S" "$T/dl/w$w" || fail "w$w: file contents differ"
	cmp "$S/a b.txt" "$T/dl/w$w/flink" || fail "w$w: flink differs"
done
# One worker, into a new name.
expect_rc 0 "$TPUCTL" scp --worker 1 --recurse --ssh-key-file "$KEY" \
    pod:tree "$T/one"
manifest "$T/one" >"$T/got"
diff "$T/want" "$T/got" >"$T/diff" || fail "single: $(cat "$T/diff")"

# Links made on the worker that point out of the tree: not followed,
# nothing lands outside the destination.
expect_rc 0 "$TPUCTL" ssh pod --worker 0 --ssh-key-file "$KEY" --command \
    'mkdir -p esc/in && echo secret >outside &&
     ln -s .. esc/up && ln -s ../.. esc/in/upup && ln -s / esc/root &&
     ln -s ../../outside esc/in/file-out && echo in >esc/in/ok'
mkdir -p "$T/esc"
expect_rc 0 "$TPUCTL" scp --recurse --ssh-key-file "$KEY" pod:esc "$T/esc"
assert_grep '3 symbolic links or special files skipped' "$T/err"
(cd "$T/esc" && find . -printf '%y %p\n' | LC_ALL=C sort) >"$T/got"
printf '%s\n' 'd .' 'd ./esc' 'd ./esc/in' 'f ./esc/in/file-out' \
    'f ./esc/in/ok' >"$T/want"
diff "$T/want" "$T/got" >"$T/diff" || fail "escape tree: $(cat "$T/diff")"
[ "$(cat "$T/esc/esc/in/file-out")" = secret ] ||
    fail "a link to a file is copied as that file"
if [ -e "$T/outside" ] || [ -e "$T/up" ] || [ -e "$T/in" ]; then
	fail "wrote outside the destination"
fi

# A remote operand with no file name.
expect_rc 2 "$TPUCTL" scp --recurse --ssh-key-file "$KEY" pod:esc/in/.. \
    "$T/dotdot"
assert_grep 'has no file name' "$T/err"
[ ! -e "$T/dotdot" ] || fail "'..' was copied"

# Local links already in the destination are never written through.
mkdir -p "$T/victim" "$T/ll/esc"
ln -s "$T/victim" "$T/ll/esc/in"
expect_rc 1 "$TPUCTL" scp --recurse --ssh-key-file "$KEY" pod:esc "$T/ll"
assert_grep "cannot create directory '.*/ll/esc/in': exists and is not a directory" "$T/err"
[ -z "$(ls -A "$T/victim")" ] || fail "wrote through a local link"
rm "$T/ll/esc/in"
: >"$T/victim/target"
mkdir -p "$T/ll/esc/in"
ln -s "$T/victim/target" "$T/ll/esc/in/ok"
expect_rc 0 "$TPUCTL" scp --recurse --ssh-key-file "$KEY" pod:esc "$T/ll"
[ ! -s "$T/victim/target" ] || fail "wrote through a local file link"
if [ -L "$T/ll/esc/in/ok" ] || [ "$(cat "$T/ll/esc/in/ok")" != in ]; then
	fail "the local link was not replaced by the file"
fi
