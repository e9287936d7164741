#!/bin/sh
# shellcheck disable=SC2016,SC2086 # remote shells expand these; $S is two words
# Issue 20 "scp behaves like scp(1)": a tree from several workers lands
# as DST/wN/ holding the tree's contents (the README's ./logs/w0/), a
# file or several sources as DST/wN/NAME; a worker that failed leaves no
# empty wN/; remote ~ and wildcards (worker:~/x, 'worker:logs/*.txt')
# are expanded on the worker's side, over SFTP (no shell: a name cannot
# inject a command); a missing path says "no such file or directory"
# naming the path and the worker.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
emu_start

expect_rc 0 "$TPUCTL" create pod --accelerator-type v4-32
KEY="$T/id_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$KEY" >/dev/null
S="--ssh-key-file $KEY"
expect_rc 0 "$TPUCTL" ssh pod --worker all $S -- \
    'rm -rf logs && mkdir -p logs/sub && echo "$HOME" >logs/a.txt && echo b >logs/b.json && echo c >logs/sub/c.txt && echo d >logs/.hidden.txt'

# --recurse from every worker: DST/wN/ is the tree
expect_rc 0 "$TPUCTL" scp --worker all --recurse $S pod:logs "$T/dl"
for w in 0 1 2 3; do
	{ [ -f "$T/dl/w$w/a.txt" ] && [ -f "$T/dl/w$w/sub/c.txt" ]; } ||
	    fail "w$w: $(cd "$T/dl" && find . | sort | tr '\n' ' ')"
	[ ! -e "$T/dl/w$w/logs" ] || fail "w$w/logs/ made: the tree's contents go in w$w/"
done
# each worker's own file
[ "$(cat "$T/dl/w0/a.txt")" != "$(cat "$T/dl/w3/a.txt")" ] || fail "w0 and w3 hold the same file"
# several sources: each by name under wN/
expect_rc 0 "$TPUCTL" scp --worker 0,1 --recurse $S pod:logs/sub pod:logs/b.json "$T/two"
{ [ -f "$T/two/w1/sub/c.txt" ] && [ -f "$T/two/w1/b.json" ]; } ||
    fail "two sources: $(cd "$T/two" && find . | sort | tr '\n' ' ')"

# remote ~
expect_rc 0 "$TPUCTL" scp $S 'pod:~/logs/b.json' "$T/b.json"
[ "$(cat "$T/b.json")" = b ] || fail "pod:~/logs/b.json: $(cat "$T/b.json")"
expect_rc 0 "$TPUCTL" scp $S "$T/b.json" 'pod:~/logs/up.json'
expect_rc 0 "$TPUCTL" ssh pod $S -- cat logs/up.json
assert_grep '^\[w0\] b$' "$T/out"
expect_rc 2 "$TPUCTL" scp $S 'pod:~root/x' "$T/x"
assert_grep 'only ~ .*not ~user' "$T/err"

# wildcards on the worker's side; a leading dot is not matched by *
expect_rc 0 "$TPUCTL" scp --worker all $S 'pod:logs/*.txt' "$T/g"
[ -f "$T/g/w2/a.txt" ] || fail "glob: $(cd "$T/g" && find . | sort | tr '\n' ' ')"
[ ! -e "$T/g/w2/b.json" ] || fail "glob: b.json matched *.txt"
[ ! -e "$T/g/w2/.hidden.txt" ] || fail "glob: *.txt matched .hidden.txt"
# several matches need a directory, as several sources do
expect_rc 2 "$TPUCTL" scp $S 'pod:logs/[ab].*' "$T/g1"
assert_grep 'not a directory' "$T/err"
mkdir "$T/g1"
expect_rc 0 "$TPUCTL" scp $S 'pod:logs/[ab].*' "$T/g1"
{ [ -f "$T/g1/a.txt" ] && [ -f "$T/g1/b.json" ]; } || fail "glob [ab].*: $(ls "$T/g1")"
# a pattern that would run a command in a shell matches nothing, runs nothing
expect_rc 4 "$TPUCTL" scp $S 'pod:logs/$(touch INJECTED)*' "$T/inj"
assert_grep 'no match for logs/\$\(touch INJECTED\)\* on worker 0' "$T/err"
expect_rc 0 "$TPUCTL" ssh pod $S -- 'ls -a . logs'
assert_no_grep 'INJECTED' "$T/out"
expect_rc 2 "$TPUCTL" scp $S 'pod:lo*/a.txt' "$T/x"
assert_grep 'only the last component' "$T/err"

# a missing path, in words, naming the worker
expect_rc 4 "$TPUCTL" scp --worker 2 $S pod:/tmp/t415-none "$T/m"
assert_grep "'/tmp/t415-none' on worker 2: no such file or directory" "$T/err"
assert_no_grep 'SFTP status' "$T/err"

# a worker that failed leaves no empty wN/
expect_rc 0 "$TPUCTL" ssh pod --worker 1 $S -- 'rm -rf logs'
expect_rc 8 "$TPUCTL" scp --worker all --recurse $S pod:logs "$T/part"
assert_grep "^\\[w1\\] error: .*'logs' on worker 1: no such file or directory" "$T/err"
[ ! -e "$T/part/w1" ] || fail "an empty w1/ was left"
[ -f "$T/part/w0/a.txt" ] || fail "w0 not copied: $(cd "$T/part" && find . | sort | tr '\n' ' ')"
