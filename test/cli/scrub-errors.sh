#!/usr/bin/env bash
# scrub-errors.sh — scrub, disassemble and assemble on bad input and bad
# arguments, without a JDK: exit statuses (1 bad input, 2 usage), messages
# naming the input, chunk and byte, and no output file left by a failure.
#
# usage: test/cli/scrub-errors.sh JFRSTREAM FILE.jfr (a file of 2 chunks or more)
set -uo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 JFRSTREAM FILE.jfr" >&2
    exit 2
fi
# shellcheck disable=SC2206  # a command with options: split on purpose
bin=(${JFRSTREAM_TEST_WRAPPER:-} "$(realpath "$1")")
file=$(realpath "$2")
[ -f "$file" ] || { echo "SKIP: $file not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
checks=0

expect() { # want-status name stderr-pattern args...
    local want=$1 name=$2 pat=$3
    shift 3
    checks=$((checks + 1))
    "${bin[@]}" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    local msg
    msg=$(head -c 300 "$tmp/err" | tr '\n' ' ')
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $name: exit $rc, want $want (stderr: $msg)"
        fails=$((fails + 1))
    elif [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err"; then
        echo "FAIL: $name: stderr lacks '$pat': $msg"
        fails=$((fails + 1))
    else
        echo "ok: $name -> $rc ($msg)"
    fi
}
none_left() { # name: no file but the listed inputs in $tmp
    checks=$((checks + 1))
    local left
    left=$(find "$tmp" -name '*.tmp.*' -o -name 'out*.jfr' -o -name '*-scrubbed.jfr' | head -3)
    if [ -n "$left" ]; then
        echo "FAIL: $1: left $left"
        fails=$((fails + 1))
        rm -f "$tmp"/out*.jfr "$tmp"/*-scrubbed.jfr "$tmp"/*.tmp.*
    fi
}

cp "$file" in.jfr
size=$(stat -c %s in.jfr)
head -c $((size - 100)) in.jfr > cut.jfr
head -c 40 in.jfr > short.jfr
printf 'not a recording at all, just text\n' > text.jfr

# scrub: usage errors
expect 2 "scrub without arguments" "too few arguments" scrub
expect 2 "scrub, missing filter" "missing filter after --include-events" scrub --include-events
expect 2 "scrub, filter given as an option" "missing filter after --exclude-events" \
    scrub --exclude-events --include-threads x in.jfr
expect 2 "scrub, unknown option" "unknown option" scrub --include-event x in.jfr
expect 2 "scrub, three files" "too many arguments" scrub in.jfr out.jfr more.jfr
expect 2 "scrub, IN not .jfr with OUT" "unknown option in.txt" scrub in.txt out.jfr
expect 2 "scrub, OUT is IN" "can't be same as input" scrub in.jfr in.jfr
none_left "usage errors"
# scrub: bad input
expect 1 "scrub, OUT not .jfr" "filename must end with '.jfr'" scrub in.jfr out.txt
expect 1 "scrub, an unquoted glob (a file of that name)" "wildcards should be quoted" \
    scrub --include-events in.jfr in.jfr out.jfr
expect 1 "scrub, missing input" "missing.jfr" scrub missing.jfr out.jfr
expect 1 "scrub, truncated last chunk" "chunk 1" scrub cut.jfr out.jfr
none_left "truncated"
expect 1 "scrub, 40 bytes" "short.jfr" scrub short.jfr out.jfr
expect 1 "scrub, text" "bad magic" scrub text.jfr out.jfr
none_left "bad input"
expect 1 "scrub, default output of a truncated file" "cut.jfr" scrub cut.jfr
none_left "default output"
echo keep > out.jfr
expect 1 "scrub over an existing file, failing" "chunk 1" scrub cut.jfr out.jfr
checks=$((checks + 1))
if [ "$(cat out.jfr)" != keep ]; then echo "FAIL: an existing OUT was replaced by a failed run"; fails=$((fails + 1)); fi
expect 0 "scrub over an existing file" "" scrub in.jfr out.jfr
checks=$((checks + 1))
cmp -s <(head -c 4 out.jfr) <(printf 'FLR\0') || { echo "FAIL: OUT not replaced"; fails=$((fails + 1)); }
rm -f out.jfr
expect 0 "scrub, default output name" "" scrub --exclude-events '*' in.jfr
checks=$((checks + 1))
[ -f in-scrubbed.jfr ] || { echo "FAIL: no in-scrubbed.jfr"; fails=$((fails + 1)); }
grep -q "^$tmp/in-scrubbed.jfr\$" out || { echo "FAIL: the output path not printed: $(cat out)"; fails=$((fails + 1)); }
rm -f in-scrubbed.jfr

# disassemble
expect 2 "disassemble without a file" "missing file" disassemble
expect 2 "disassemble, unknown option" "unknown option" disassemble --max-chunk 2 in.jfr
expect 1 "disassemble, missing file" "missing.jfr" disassemble missing.jfr
cp text.jfr text.txt
expect 1 "disassemble, not .jfr" "must end with '.jfr'" disassemble text.txt
expect 1 "disassemble, max chunks 0" "max chunks must be at least 1" disassemble --max-chunks 0 in.jfr
expect 1 "disassemble, max size x" "not a valid value for --max-size" disassemble --max-size x in.jfr
expect 1 "disassemble, no such folder" "directory does not exist" \
    disassemble --output nowhere --max-chunks 1 in.jfr
expect 1 "disassemble, truncated" "chunk 1 at byte" disassemble --max-chunks 1 cut.jfr
checks=$((checks + 1))
[ -z "$(ls cut_*.jfr 2>/dev/null)" ] || { echo "FAIL: disassemble left files of a truncated input"; fails=$((fails + 1)); }
mkdir parts
touch parts/in_1.jfr
expect 1 "disassemble over an existing part" "already exist" \
    disassemble --max-chunks 1 --output parts in.jfr
checks=$((checks + 1))
[ ! -e parts/in_0.jfr ] || { echo "FAIL: disassemble wrote a part before refusing"; fails=$((fails + 1)); }
rm parts/in_1.jfr
expect 0 "disassemble" "" disassemble --max-chunks 1 --output parts in.jfr
# assemble
expect 2 "assemble, one argument" "too few arguments" assemble parts
expect 2 "assemble, three arguments" "too many arguments" assemble parts a.jfr b.jfr
expect 1 "assemble, no such folder" "directory does not exist" assemble nowhere out.jfr
expect 1 "assemble, existing output" "already exists" assemble parts in.jfr
expect 1 "assemble, not .jfr" "must end with '.jfr'" assemble parts out.txt
mkdir empty
expect 1 "assemble, no *.jfr" "no \*.jfr files found" assemble empty out.jfr
none_left "assemble errors"
expect 0 "assemble" "" assemble parts out.jfr
checks=$((checks + 1))
cmp -s out.jfr in.jfr || { echo "FAIL: assembled parts differ from the input"; fails=$((fails + 1)); }

echo "$checks checks, $fails failed"
if [ "$fails" != 0 ]; then
    echo "FAIL: $fails of $checks"
    exit 1
fi
echo "PASS: scrub, disassemble and assemble errors"
