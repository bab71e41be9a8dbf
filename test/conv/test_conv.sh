#!/usr/bin/env bash
# test_conv.sh — the converter library through its public header
# (test/conv/test_conv.c, output through a callback jfrc_out of 64 KiB, 7 and 1
# bytes, and through a memory jfrc_out whose bytes are taken with
# jfrc_out_swap after every event) gives the CLI's bytes: print --json, summary, collapsed, pprof.
# The JSON also with the writer's cache limited to 0 (off), 64 KiB and
# 1 MiB (TEST_CONV_JSON_CACHE; test_conv checks the writer's memory after
# every event), and the CLI's print --json under --max-memory 4M.
#
# usage: test/conv/test_conv.sh TEST_CONV JFRSTREAM FILE.jfr...
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
        for cap in 0 7 1 mem; do
            if "$conv" "$mode" "$f" "$cap" >"$tmp/got" 2>"$tmp/err" && cmp -s "$tmp/got" "$tmp/$mode"; then
                echo "ok: $b $mode, buffer $cap: $(wc -c <"$tmp/got") bytes = jfrstream ($(tail -1 "$tmp/err" | sed 's/^test_conv: //'))"
            else
                echo "FAIL: $b $mode, buffer $cap: differs from jfrstream: $(head -c 300 "$tmp/err")"
                cmp "$tmp/got" "$tmp/$mode" | head -2
                fails=$((fails + 1))
            fi
        done
        [ $mode = json ] || continue
        for lim in 0 65536 1048576; do
            if TEST_CONV_JSON_CACHE=$lim "$conv" json "$f" 0 >"$tmp/got" 2>"$tmp/err" &&
                cmp -s "$tmp/got" "$tmp/json"; then
                echo "ok: $b json, cache limit $lim: = jfrstream ($(tail -1 "$tmp/err" | sed 's/^test_conv: //'))"
            else
                echo "FAIL: $b json, cache limit $lim: $(head -c 300 "$tmp/err")"
                fails=$((fails + 1))
            fi
        done
        ${JFRSTREAM_TEST_WRAPPER:-} "$cli" --max-memory 4M print --json --stack-depth 64 "$f" >"$tmp/got" 2>"$tmp/err"
        if cmp -s "$tmp/got" "$tmp/json"; then
            echo "ok: $b print --json --max-memory 4M: identical"
        else
            echo "FAIL: $b print --json --max-memory 4M differs: $(head -c 300 "$tmp/err")"
            fails=$((fails + 1))
        fi
    done
done
echo "conv: $fails failures"
[ "$fails" = 0 ]
