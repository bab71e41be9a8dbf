#!/usr/bin/env bash
# make-recording.sh — make (or reuse) a large multi-chunk JFR recording for the
# benchmarks.
#
# usage: bench/make-recording.sh DIR [SIZE_MB]
#
#   DIR/bench-SIZEmb.jfr   >= SIZE_MB (default 200) MB, 12 MB chunks, JDK
#                          `profile` settings plus bench/bench-extra.jfc
#                          (allocation events with stacks, 1 ms execution
#                          samples, park/monitor/sleep thresholds 0), recorded
#                          from bench/BenchWorkload.java
#
# An existing file of at least SIZE_MB is reused. The JVM stops as soon as its
# JFR repository holds SIZE_MB (plus a margin), or after 600 s. On a 2-core
# machine 200 MB takes about 1.5 minutes.
#
# JDK: $JAVA_HOME/bin/java if set, else `java` on PATH. The file's path is the
# last line printed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [SIZE_MB]" >&2
    exit 2
fi
dir=$1
size_mb=${2:-200}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
out="$dir/bench-${size_mb}mb.jfr"

if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    java="$JAVA_HOME/bin/java"
    jfr="$JAVA_HOME/bin/jfr"
else
    java=$(command -v java || true)
    jfr=$(command -v jfr || true)
fi
if [ -z "$java" ]; then
    echo "make-recording.sh: no JDK (java) found" >&2
    exit 77
fi

want=$((size_mb * 1000 * 1000))
have=0
[ -f "$out" ] && have=$(stat -c %s "$out")
if [ "$have" -ge "$want" ]; then
    echo "reusing $out"
else
    repo="$dir/repo.$$"
    tmp="$out.tmp.$$"
    rm -rf "$repo" "$tmp"
    mkdir -p "$repo"
    trap 'rm -rf "$repo" "$tmp"' EXIT
    # small fixed TLABs: many jdk.ObjectAllocationInNewTLAB events (with stack
    # traces); maxsize=0: keep every chunk (the default cap is 250 MB)
    echo "recording $out (target ${size_mb} MB) with $("$java" -version 2>&1 | head -1)"
    "$java" -Xmx1g -XX:TLABSize=2k -XX:-ResizeTLAB \
        "-XX:StartFlightRecording:settings=profile,settings=$here/bench-extra.jfc,maxsize=0,filename=$tmp" \
        "-XX:FlightRecorderOptions:repository=$repo,maxchunksize=12M" \
        "$here/BenchWorkload.java" --repo "$repo" \
        --target-mb $((size_mb + size_mb / 50 + 2)) --max-seconds 600 \
        --cpu 2 --alloc 6 --lockers 6 2>&1 | grep -v '^\[.*jfr,startup' || true
    if [ ! -s "$tmp" ]; then
        echo "make-recording.sh: the JVM wrote no recording" >&2
        exit 1
    fi
    mv "$tmp" "$out"
    rm -rf "$repo"
    trap - EXIT
fi

echo "size: $(stat -c %s "$out") bytes"
if [ -n "$jfr" ]; then
    "$jfr" summary "$out" | head -8
fi
echo "$out"
