#!/usr/bin/env bash
# profile-errors.sh JFRSTREAM FIXTURE — exit statuses and messages of
# collapsed / flamegraph / pprof: usage errors (2), damaged input and
# unwritable output (1, with the chunk and byte offset), and that a damaged
# second chunk still gives the first chunk's profile.
set -uo pipefail
# JFRSTREAM_TEST_WRAPPER (e.g. test/valgrind.sh): a command put before ours
# shellcheck disable=SC2206  # the wrapper is split into words on purpose
js=(${JFRSTREAM_TEST_WRAPPER:-} "$1")
fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect RC "what" cmd...
    local want=$1 what=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $what: exit $rc, want $want"; cat "$tmp/err"; fail=1
    else
        echo "ok: $what: exit $rc $(head -c 160 "$tmp/err" | tr '\n' ' ')"
    fi
}
expect 2 "collapsed without FILE" "${js[@]}" collapsed
expect 2 "unknown --event" "${js[@]}" collapsed --event nope "$fx"
expect 2 "unknown option" "${js[@]}" pprof --nope "$fx"
expect 2 "--state without a value" "${js[@]}" collapsed "$fx" --state
expect 2 "bad --include regex" "${js[@]}" collapsed --include 'a(b' "$fx"
grep -q "bad regular expression" "$tmp/err" || { echo "FAIL: no regex message"; fail=1; }
expect 2 "bad --minwidth" "${js[@]}" collapsed --minwidth 101 "$fx"
expect 2 "bad --from" "${js[@]}" collapsed --from 12:xx "$fx"
expect 2 "unknown --event word" "${js[@]}" collapsed --event wallclock "$fx"
grep -q "nativemem" "$tmp/err" || { echo "FAIL: the words are not listed"; fail=1; }
# an empty profile: exit 0, no output, and a message naming what the file has
expect 0 "empty profile" "${js[@]}" collapsed --event live "$fx"
if [ -s "$tmp/out" ] || ! grep -q "empty profile: no profiler.LiveObject event matched; the input.s events with a stackTrace field: .*jdk.ExecutionSample ([0-9]*)" "$tmp/err"; then
    echo "FAIL: empty profile: output or message wrong"; fail=1
fi
# a missing file among several: exit 1, the others still profiled
expect 1 "two files, one missing" "${js[@]}" collapsed "$fx" "$tmp/absent.jfr"
[ -s "$tmp/out" ] || { echo "FAIL: no profile of the good file"; fail=1; }
expect 1 "missing file" "${js[@]}" collapsed "$tmp/absent.jfr"
expect 1 "unwritable output" "${js[@]}" pprof -o "$tmp/no/such/dir/x.pb.gz" "$fx"
grep -q "No such file" "$tmp/err" || { echo "FAIL: no reason given"; fail=1; }
head -c 200000 "$fx" >"$tmp/trunc.jfr"
expect 1 "truncated chunk" "${js[@]}" collapsed "$tmp/trunc.jfr"
grep -q "chunk 0 at byte 200000" "$tmp/err" || { echo "FAIL: no chunk/offset in the message"; fail=1; }
# two chunks, the second cut short: the first chunk's stacks, exit 1
cat "$fx" "$tmp/trunc.jfr" >"$tmp/two.jfr"
"${js[@]}" collapsed --event alloc "$fx" >"$tmp/want"
expect 1 "good chunk then a truncated one" "${js[@]}" collapsed --event alloc "$tmp/two.jfr"
if ! cmp -s "$tmp/out" "$tmp/want"; then
    echo "FAIL: the good chunk's profile differs"; fail=1
else
    echo "ok: the good chunk's profile is printed ($(wc -l <"$tmp/want") lines)"
fi
# a record in the middle of the chunk with a hostile size: exit 1 with the
# chunk and offset (and under ASan no use of the freed metadata afterwards)
python3 - "$fx" "$tmp/dmg.jfr" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
end, pos, offs = struct.unpack('>q', d[8:16])[0], 68, []
while pos < end:
    v, s, i = 0, 0, pos
    while True:
        c = d[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80 or s >= 56:
            break
    offs.append(pos)
    pos += v
at = offs[len(offs) // 2]
d[at:at + 5] = b'\xff\xff\xff\xff\x07'
open(sys.argv[2], 'wb').write(d)
PY
expect 1 "a hostile record size mid-chunk" "${js[@]}" collapsed --event live "$tmp/dmg.jfr"
grep -q "chunk 0 at byte [0-9]*: record size" "$tmp/err" && ! grep -q Sanitizer "$tmp/err" ||
    { echo "FAIL: no chunk/offset, or a sanitizer report"; fail=1; }
expect 0 "stdin" "${js[@]}" collapsed - <"$fx"
cmp -s "$tmp/out" <("${js[@]}" collapsed "$fx") || { echo "FAIL: stdin output differs"; fail=1; }
exit $fail
