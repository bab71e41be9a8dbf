#!/usr/bin/env bash
# gen-recordings.sh — make JFR recordings with test/java/Workload.java.
#
# usage: test/gen-recordings.sh [--fixture] OUTDIR
#
#   OUTDIR/jdk17-profile.jfr      single chunk, settings=profile, ~2 s of load,
#                                 recorded with TZ=America/St_Johns (25: Asia/Kathmandu)
#   OUTDIR/jdk17-multichunk.jfr   >= 4 chunks (maxchunksize=1M, settings=default,
#                                 jfrstream.Bulk events to fill the chunks, plus 3
#                                 in-process recordings started mid-run: JDK 25
#                                 checks the chunk size only every few seconds)
#   OUTDIR/jdk25-*.jfr            the same with a JDK 25, when one is installed
#
#   --fixture: instead, (re)make the committed fixtures in OUTDIR (normally test/data):
#   workload.jfr (JDK 17, test/java/fixture.jfc, TZ=Asia/Kolkata) and synthetic.jfr
#   (test/mkjfr.py: odd but valid layouts), each with the outputs of the JDK 25
#   `jfr` tool (else 17's): NAME.summary.txt (`jfr summary`), NAME.metadata.txt
#   (`jfr metadata`) and NAME.json (`jfr print --json --stack-depth 64`, with the
#   whitespace squeezed out by test/compact-json.py: tests compare parsed JSON,
#   and the number literals stay as jfr printed them).
#
# JDKs: $JDK17_HOME / $JDK25_HOME if set (the value "none" hides that JDK), else
# the `java` on PATH when it is 17, else /usr/lib/jvm/*17*; for 25: /usr/lib/jvm/*25*. A missing JDK 25 is skipped
# with a message; a missing JDK 17 too (exit 77 if no JDK at all).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
workload="$here/java/Workload.java"
fixture_jfc="$here/java/fixture.jfc"

fixture=0
if [ "${1:-}" = "--fixture" ]; then fixture=1; shift; fi
if [ $# -ne 1 ]; then
    echo "usage: $0 [--fixture] OUTDIR" >&2
    exit 2
fi
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)

java_major() { # $1 = JAVA_HOME -> prints the feature version, e.g. 17
    "$1/bin/java" -XshowSettings:properties -version 2>&1 |
        sed -n 's/^ *java\.specification\.version = //p' | head -1
}

find_jdk() { # $1 = wanted major version -> prints a JAVA_HOME or nothing
    local want=$1 var="JDK$1_HOME" cand
    [ "${!var:-}" = none ] && return # JDK25_HOME=none: act as if absent
    if [ -n "${!var:-}" ] && [ -x "${!var}/bin/java" ]; then
        echo "${!var}"
        return
    fi
    if command -v java >/dev/null 2>&1; then
        cand=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
        if [ -x "$cand/bin/jfr" ] && [ "$(java_major "$cand")" = "$want" ]; then
            echo "$cand"
            return
        fi
    fi
    for cand in /usr/lib/jvm/*"$want"*; do
        if [ -x "$cand/bin/java" ] && [ -x "$cand/bin/jfr" ] &&
            [ "$(java_major "$cand")" = "$want" ]; then
            echo "$cand"
            return
        fi
    done
}

# run_workload JAVA_HOME OUT.jfr "JFR options" "-XX options" workload-args...
run_workload() {
    local home=$1 dest=$2 jfropts=$3 xx=$4
    shift 4
    local dir name
    dir=$(dirname "$dest")
    name=$(basename "$dest")
    rm -f "$dest.tmp.jfr"
    # Run in the output folder (the JVM writes hs_err files and logs there),
    # with a guard against a hung JVM: the workload takes a few seconds.
    local rc=0
    # shellcheck disable=SC2086  # $xx is a list of JVM options
    (cd "$dir" && timeout --kill-after=10 300 "$home/bin/java" $xx -Xlog:jfr+startup=warning \
        "-XX:StartFlightRecording:filename=$name.tmp.jfr,$jfropts" \
        "$workload" --quiet "$@" >"$name.log" 2>&1) || rc=$?
    if [ "$rc" != 0 ]; then
        [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "gen-recordings: the JVM did not finish in 300 s" >&2
        echo "gen-recordings: workload failed (exit $rc) with $home, log:" >&2
        cat "$dest.log" >&2
        return 1
    fi
    mv "$dest.tmp.jfr" "$dest"
    rm -f "$dest.log"
}

chunks_of() { # $1 = JAVA_HOME, $2 = file
    "$1/bin/jfr" summary "$2" | sed -n 's/^ *Chunks: *//p'
}

jdk17=$(find_jdk 17)
jdk25=$(find_jdk 25)

if [ "$fixture" = 1 ]; then
    if [ -z "$jdk17" ]; then
        echo "gen-recordings: no JDK 17 found; the fixture is made with JDK 17" >&2
        exit 77
    fi
    tool=${jdk25:-$jdk17}
    [ -n "$jdk25" ] || echo "gen-recordings: no JDK 25: expected outputs come from JDK 17's jfr" >&2
    # made in a fresh temporary folder: the recording stores its own path
    tmpd=$(mktemp -d /tmp/jfrstream-fixture.XXXXXX)
    trap 'rm -rf "$tmpd"' EXIT
    # a half-hour time zone: jfr prints timestamps in the recording's offset
    TZ=Asia/Kolkata run_workload "$jdk17" "$tmpd/workload.jfr" "settings=$fixture_jfc" "" \
        --seconds 2 --threads 2
    mv "$tmpd/workload.jfr" "$out/workload.jfr"
    python3 "$here/mkjfr.py" "$out/synthetic.jfr"
    for name in workload synthetic; do
        TZ=UTC "$tool/bin/jfr" summary "$out/$name.jfr" >"$out/$name.summary.txt"
        TZ=UTC "$tool/bin/jfr" metadata "$out/$name.jfr" >"$out/$name.metadata.txt"
        TZ=UTC "$tool/bin/jfr" print --json --stack-depth 64 "$out/$name.jfr" |
            python3 "$here/compact-json.py" >"$out/$name.json"
    done
    ls -l "$out"/workload.* "$out"/synthetic.*
    exit 0
fi

if [ -z "$jdk17" ] && [ -z "$jdk25" ]; then
    echo "gen-recordings: SKIP: no JDK 17 or 25 with a jfr tool found" >&2
    exit 77
fi

made=0
for v in 17 25; do
    home=$jdk17
    [ "$v" = 25 ] && home=$jdk25
    if [ -z "$home" ]; then
        echo "gen-recordings: no JDK $v found (looked at \$JDK${v}_HOME, PATH, /usr/lib/jvm/*$v*): skipping its recordings" >&2
        continue
    fi
    echo "gen-recordings: JDK $v at $home"
    # recorded in odd time zones (-03:30, +05:45): timestamps print with offsets
    zone=America/St_Johns
    [ "$v" = 25 ] && zone=Asia/Kathmandu
    TZ=$zone run_workload "$home" "$out/jdk$v-profile.jfr" "settings=profile" "" \
        --seconds 2 --threads 2
    TZ=UTC run_workload "$home" "$out/jdk$v-multichunk.jfr" "settings=default" \
        "-XX:FlightRecorderOptions:maxchunksize=1M" \
        --seconds 3 --threads 1 --bulk 4000 --rotate 3 --edge-rounds 2
    n=$(chunks_of "$home" "$out/jdk$v-multichunk.jfr")
    if [ "${n:-0}" -lt 4 ]; then
        echo "gen-recordings: warning: jdk$v-multichunk.jfr has only $n chunks (wanted >= 4)" >&2
    fi
    echo "gen-recordings: jdk$v-profile.jfr $(stat -c %s "$out/jdk$v-profile.jfr") bytes;" \
        "jdk$v-multichunk.jfr $(stat -c %s "$out/jdk$v-multichunk.jfr") bytes, $n chunks"
    made=$((made + 2))
done
echo "gen-recordings: $made recordings in $out"
