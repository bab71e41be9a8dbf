#!/usr/bin/env bash
# profile-recordings.sh — `collapsed` and `pprof` against the JDK's `jfr` on
# recordings made by test/gen-recordings.sh (test/profile/profile-fixture.py).
#
# usage: test/profile/profile-recordings.sh JFRSTREAM WORKDIR
#
# Recordings: WORKDIR/recordings when the recordings test has made
# them (same stamp), else made here into WORKDIR/profile-recordings (cached
# the same way). The reference `jfr` is JDK 25's when installed, else 17's.
# pprof output is also decoded by `protoc` with Debian's profile.proto
# (golang-github-google-pprof-dev) when both are installed, and read by the
# real `pprof -raw` when it can be built offline (golang-go).
# Exit: 0 equal, 1 differences, 77 skipped (no JDK).
set -euo pipefail
jfrstream=$(readlink -f "$1")
work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)

ref=""
jdk25=$(python3 "$here/../find_jdk.py" 25 2>/dev/null || true) # $JFRSTREAM_JDK25, /usr/lib/jvm, ...
for c in ${jdk25:+"$jdk25/bin/jfr"} "$(command -v jfr || true)" \
    ${JDK17_HOME:+"$JDK17_HOME/bin/jfr"} /usr/lib/jvm/*17*/bin/jfr; do
    [ -n "$c" ] && [ -x "$c" ] && { ref=$c; break; }
done
if [ -z "$ref" ]; then
    echo "profile-recordings: SKIP: no JDK 'jfr' tool found (install openjdk-17-jdk-headless)"
    exit 77
fi
echo "profile-recordings: reference: $ref"

stamp="$(stat -c '%Y %s' "$here/../java/Workload.java" "$here/../gen-recordings.sh" | tr '\n' ' ')"
stamp="$stamp $(printf '%s ' /usr/lib/jvm/*/) ${JDK17_HOME:-} ${JDK25_HOME:-}"
rec=""
for d in "$work/recordings" "$work/profile-recordings"; do
    if [ -f "$d/.stamp" ] && [ "$(cat "$d/.stamp")" = "$stamp" ] && ls "$d"/*-profile.jfr >/dev/null 2>&1; then
        rec=$d
        break
    fi
done
if [ -z "$rec" ]; then
    rec="$work/profile-recordings"
    rm -rf "$rec"
    mkdir -p "$rec"
    grc=0
    "$here/../gen-recordings.sh" "$rec" || grc=$?
    if [ "$grc" = 77 ]; then
        echo "profile-recordings: SKIP: no usable JDK to make recordings"
        exit 77
    fi
    [ "$grc" = 0 ] || { echo "profile-recordings: FAIL: gen-recordings.sh exit $grc"; exit 1; }
    echo "$stamp" >"$rec/.stamp"
fi

proto=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
args=()
if command -v protoc >/dev/null 2>&1 && [ -f "$proto" ]; then
    args=(--protoc-proto "$proto")
else
    echo "profile-recordings: note: protoc or $proto absent: pprof checked by the python decoder only"
fi
# the real pprof tool, built offline from Debian's golang-go and
# golang-github-google-pprof-dev (GOPATH mode), cached in WORKDIR
gosrc=/usr/share/gocode
if command -v go >/dev/null 2>&1 && [ -d "$gosrc/src/github.com/google/pprof" ]; then
    if [ ! -x "$work/pprof-tool/pprof" ]; then
        mkdir -p "$work/pprof-tool"
        echo "profile-recordings: building pprof from $gosrc"
        GO111MODULE=off GOPATH=$gosrc GOCACHE="$work/pprof-tool/cache" GOFLAGS= \
            go build -o "$work/pprof-tool/pprof" github.com/google/pprof ||
            echo "profile-recordings: note: could not build pprof"
    fi
    [ -x "$work/pprof-tool/pprof" ] && args+=(--pprof-tool "$work/pprof-tool/pprof")
else
    echo "profile-recordings: note: golang-go or the pprof sources absent: no pprof -raw check"
fi
python3 "$here/profile-fixture.py" --jfrstream "$jfrstream" --jfr "$ref" "${args[@]}" \
    "$here/../data/workload.jfr" "$rec"/*.jfr
