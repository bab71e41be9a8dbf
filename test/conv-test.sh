#!/usr/bin/env bash
# conv-test.sh — the converter library through its public header
# (test/test_conv.c, output through a callback jfrc_out of 64 KiB, 7 and 1
# bytes) gives the CLI's bytes: print --json, summary, collapsed, pprof.
#
# usage: test/conv-test.sh TEST_CONV JFRSTREAM FILE.jfr...
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: $0 TEST_CONV JFRSTREAM FILE.jfr..." >&2; exit 2; }
conv=$1 cli=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
for f in "$@"; do
    b=$(basename "$f")
    ${JFRSTREAM_TEST_WRAPPER:-} "$cli" print --json --stack-depth 64 "$f" >"$tmp/json" 2>/dev/null
    ${JFRSTREAM_TEST_WRAPPER:-} "$cli" summary "$f" >"$tmp/summary" 2>/dev/null
    ${JFRSTREAM_TEST_WRAPPER:-} "$cli" collapsed --event cpu,alloc,lock --threads "$f" >"$tmp/collapsed" 2>/dev/null
    ${JFRSTREAM_TEST_WRAPPER:-} "$cli" pprof --event alloc -o - "$f" >"$tmp/pprof" 2>/dev/null
    for mode in json summary collapsed pprof; do
        # (a file without stack traces has an empty collapsed profile)
        case $mode in json | summary | pprof) [ -s "$tmp/$mode" ] ||
            { echo "FAIL: $b: jfrstream $mode printed nothing"; fails=$((fails + 1)); continue; } ;;
        esac
        for cap in 0 7 1; do
            if "$conv" "$mode" "$f" "$cap" >"$tmp/got" 2>"$tmp/err" && cmp -s "$tmp/got" "$tmp/$mode"; then
                echo "ok: $b $mode, buffer $cap: $(wc -c <"$tmp/got") bytes = jfrstream ($(tail -1 "$tmp/err" | sed 's/^test_conv: //'))"
            else
                echo "FAIL: $b $mode, buffer $cap: differs from jfrstream: $(head -c 300 "$tmp/err")"
                cmp "$tmp/got" "$tmp/$mode" | head -2
                fails=$((fails + 1))
            fi
        done
    done
done
echo "conv-test: $fails failures"
[ "$fails" = 0 ]
