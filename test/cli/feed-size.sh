#!/usr/bin/env bash
# feed-size.sh — jfrstream's output must not depend on how the input is sliced.
#
# usage: test/cli/feed-size.sh JFRSTREAM FILE.jfr
#
# For `summary`, `metadata` and `print --json --stack-depth 64`, the output with
# --feed-size 1, 7, 4096, random:1, random:2 (and reading from stdin) must be
# byte-identical to the output with the default feeding.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 JFRSTREAM FILE.jfr" >&2
    exit 2
fi
# JFRSTREAM_TEST_WRAPPER (e.g. test/valgrind.sh): a command put before ours
# shellcheck disable=SC2206  # a command with options: split on purpose
bin=(${JFRSTREAM_TEST_WRAPPER:-} "$1")
file=$2
if [ ! -f "$file" ]; then
    echo "SKIP: $file not found (../shared/data, if it is from there, is only beside CI and development checkouts)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fails=0
check() { # name, command...
    local name=$1
    shift
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    "${bin[@]}" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    t1=$(date +%s.%N)
    if [ "$rc" != 0 ]; then
        echo "FAIL: $name: exit $rc: $(head -c 300 "$tmp/err")"
        fails=$((fails + 1))
    elif ! cmp -s "$tmp/out" "$tmp/ref"; then
        echo "FAIL: $name: output differs from the default feeding:"
        cmp "$tmp/out" "$tmp/ref" || true
        diff <(head -c 2000000 "$tmp/ref") <(head -c 2000000 "$tmp/out") | head -10 || true
        fails=$((fails + 1))
    else
        printf 'ok: %-48s %9d bytes %6.2f s\n' "$name" "$(stat -c %s "$tmp/out")" \
            "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
    fi
}

for cmd in summary metadata "print --json --stack-depth 64"; do
    rc=0
    # shellcheck disable=SC2086  # $cmd is a command with options
    "${bin[@]}" $cmd "$file" >"$tmp/ref" 2>"$tmp/err" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: jfrstream $cmd $file: exit status $rc: $(head -c 300 "$tmp/err")"
        fails=$((fails + 1))
        continue
    fi
    echo "reference: jfrstream $cmd: $(stat -c %s "$tmp/ref") bytes"
    for fs in 1 7 4096 random:1 random:2; do
        # shellcheck disable=SC2086
        check "--feed-size $fs $cmd" --feed-size "$fs" $cmd "$file"
    done
    rc=0
    # shellcheck disable=SC2086
    "${bin[@]}" $cmd - <"$file" >"$tmp/out" 2>"$tmp/err" || rc=$?
    if [ "$rc" != 0 ] || ! cmp -s "$tmp/out" "$tmp/ref"; then
        echo "FAIL: $cmd - (stdin): exit $rc, output $(cmp -s "$tmp/out" "$tmp/ref" && echo same || echo differs)"
        fails=$((fails + 1))
    else
        echo "ok: $cmd - (stdin)"
    fi
done
echo "feed-size: $fails failures"
[ "$fails" = 0 ]
