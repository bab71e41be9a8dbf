#!/usr/bin/env bash
# run.sh — jfrstream vs the JDK's RecordingFile, side by side on one file.
#
# usage: bench/run.sh [FILE]
#
# Without FILE, bench/make-recording.sh makes (or reuses) a >= 200 MB
# recording in $DATA. Builds jfrbench in $BUILD if needed (release), then runs:
#
#   jfrstream  walk, type:$TYPE, type:$TYPE2, all (each also with --threads
#              $THREADS; all also with --no-value-cache, pooled objects decoded
#              at every read), walk and type:$TYPE with --release (one chunk per feed
#              call, pages dropped after it: the bounded-RSS way the CLI reads
#              files), stream, stream through a pipe (cat FILE | jfrbench -),
#              and the live shape (--live, 1x and 4x the file looped: peak RSS)
#              and `jfrstream print --json FILE > /dev/null` with --jobs 1 and
#              --jobs $THREADS (bench/timejson.py)
#              and, when $FIELD is set, field:$FIELD (one field of one type)
#   JDK        RecordingFileBench.java walk, type:$TYPE, type:$TYPE2, all,
#              field:$FIELD, and `jfr print --json FILE > /dev/null` (the jfr
#              beside $JAVA)
#
# each $REPEAT times (median), and prints a table. The raw outputs are kept in
# $OUT. Environment (defaults):
#   REPEAT=3  BUILD=/tmp/build-bench  DATA=/tmp/jfrbench-data  OUT=$DATA/results
#   JAVA=java (e.g. JDK 25: JAVA=$(python3 test/find_jdk.py 25)/bin/java)
#   TYPE=jdk.ExecutionSample  TYPE2=jdk.ObjectAllocationInNewTLAB (empty: skip)
#   FIELD=TYPE.FIELD (empty: skip), e.g. jfrstream.Bulk.payload on a Workload
#   recording made with --bulk: what its strings alone cost, a floor under all
#   SKIP_JAVA=1 to run jfrstream only; THREADS=2 for the --threads rows
#
# MB/s is wall-clock; "cpu MB/s" divides by CPU time instead (jfrstream: the
# process, one thread; JDK: the whole JVM process, JIT and GC threads
# included), which is steadier when other work shares the machine. Load
# averages are printed before and after.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
REPEAT=${REPEAT:-3}
BUILD=${BUILD:-/tmp/build-bench}
DATA=${DATA:-/tmp/jfrbench-data}
OUT=${OUT:-$DATA/results}
JAVA=${JAVA:-java}
TYPE=${TYPE:-jdk.ExecutionSample}
TYPE2=${TYPE2-jdk.ObjectAllocationInNewTLAB}
SKIP_JAVA=${SKIP_JAVA:-0}
THREADS=${THREADS:-2}
FIELD=${FIELD:-}

if [ $# -gt 1 ]; then
    echo "usage: $0 [FILE]" >&2
    exit 2
fi
if [ $# -eq 1 ]; then
    file=$1
else
    file=$("$here/make-recording.sh" "$DATA" | tee /dev/stderr | tail -1)
fi
[ -f "$file" ] || { echo "run.sh: no such file: $file" >&2; exit 1; }
file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")

if [ ! -x "$BUILD/bench/jfrbench" ]; then
    [ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" "$root" --buildtype=release >/dev/null
fi
ninja -C "$BUILD" bench/jfrbench tools/jfrstream/jfrstream >/dev/null
jfrbench=$BUILD/bench/jfrbench
jfrstream=$BUILD/tools/jfrstream/jfrstream
# the JDK's jfr tool beside $JAVA (for the print --json rows)
jfrtool=$(dirname "$(readlink -f "$(command -v "$JAVA")")")/jfr

mkdir -p "$OUT"
rm -f "$OUT"/*.txt
bytes=$(stat -c %s "$file")
cat "$file" >/dev/null # into the page cache

echo "file: $file ($bytes bytes)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores"
echo "jdk: $("$JAVA" -version 2>&1 | head -1)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "repeat: $REPEAT"

# field NAME FILE: the value of NAME=... in FILE (last occurrence)
field() { sed -n "s#.*\(^\| \)$1=\([^ ]*\).*#\2#p" "$2" | tail -1; }

# run_c NAME ARGS...: jfrbench ARGS FILE, output to $OUT/NAME.txt
run_c() {
    local name=$1
    shift
    echo "  jfrstream $name ..." >&2
    "$jfrbench" "$@" "$file" >"$OUT/$name.txt"
}

# run_java NAME MODE
run_java() {
    echo "  JDK $1 ..." >&2
    "$JAVA" "$here/RecordingFileBench.java" --repeat "$REPEAT" "$2" "$file" >"$OUT/$1.java.txt"
}

# the pipe: one process per run, median of the runs by MB/s
run_pipe() {
    local i
    echo "  jfrstream stream (pipe) ..." >&2
    for i in $(seq "$REPEAT"); do
        cat "$file" | "$jfrbench" --mode stream - >"$OUT/pipe.$i.txt"
    done
    local med
    med=$(for i in $(seq "$REPEAT"); do
        printf '%s %s\n' "$(field MB/s "$OUT/pipe.$i.txt")" "$i"
    done | sort -n | awk '{a[NR]=$2} END {print a[int((NR+1)/2)]}')
    cp "$OUT/pipe.$med.txt" "$OUT/pipe.txt"
}

# run_json NAME CMD...: CMD... print --json FILE > /dev/null (bench/timejson.py)
run_json() {
    local name=$1
    shift
    echo "  $name print --json ..." >&2
    python3 "$here/timejson.py" "$REPEAT" "$file" "$@" print --json >"$OUT/$name.txt"
}

run_c walk --mode walk --repeat "$REPEAT"
run_c walkr --mode walk --release --repeat "$REPEAT"
run_c walkt --mode walk --threads "$THREADS" --repeat "$REPEAT"
run_c type1 --mode "type:$TYPE" --repeat "$REPEAT"
run_c type1r --mode "type:$TYPE" --release --repeat "$REPEAT"
run_c type1t --mode "type:$TYPE" --threads "$THREADS" --repeat "$REPEAT"
if [ -n "$TYPE2" ]; then
    run_c type2 --mode "type:$TYPE2" --repeat "$REPEAT"
    run_c type2t --mode "type:$TYPE2" --threads "$THREADS" --repeat "$REPEAT"
fi
run_c all --mode all --repeat "$REPEAT"
run_c allt --mode all --threads "$THREADS" --repeat "$REPEAT"
run_c allnc --mode all --no-value-cache --repeat "$REPEAT"
[ -n "$FIELD" ] && run_c field --mode "field:$FIELD" --repeat "$REPEAT"
run_c stream --mode stream --repeat "$REPEAT"
run_pipe
run_c live1 --mode stream --live --repeat "$REPEAT"
run_c live4 --mode stream --live --loop 4 --repeat "$REPEAT"
run_json json "$jfrstream" --jobs 1
run_json jsont "$jfrstream" --jobs "$THREADS"
if [ "$SKIP_JAVA" != 1 ]; then
    run_java walk walk
    run_java type1 "type:$TYPE"
    [ -n "$TYPE2" ] && run_java type2 "type:$TYPE2"
    run_java all all
    [ -n "$FIELD" ] && run_java field "field:$FIELD"
    [ -x "$jfrtool" ] && run_json json.java "$jfrtool"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------------ table

# java cpu MB/s: bytes / process cpu seconds
jcpu() { awk -v b="$bytes" -v c="$(field cpu_s "$1")" 'BEGIN {printf "%.1f", (c > 0 ? b / c / 1e6 : 0)}'; }
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN {if (b > 0) printf "%.*fx", d, (a / b); else printf "-"}'; }

echo
printf '%-40s %-9s %9s %9s %12s %9s %9s %9s\n' mode impl "MB/s" "cpu MB/s" "events/s" "RSS MB" "x JDK" "x JDK cpu"
row() { # LABEL IMPL C-FILE [JAVA-FILE]
    local label=$1 impl=$2 f=$3 jf=${4:-} mbs cmbs evs rss r="" rc=""
    [ -f "$f" ] || return 0
    mbs=$(field MB/s "$f")
    evs=$(field events/s "$f")
    rss=$(awk -v k="$(field rss_kb "$f")" 'BEGIN {printf "%.0f", k / 1024}')
    if [ "$impl" = JDK ]; then
        cmbs=$(jcpu "$f")
    else
        cmbs=$(field cpu_MB/s "$f")
        if [ -n "$jf" ] && [ -f "$jf" ]; then
            r=$(ratio "$mbs" "$(field MB/s "$jf")")
            rc=$(ratio "$cmbs" "$(jcpu "$jf")")
        fi
    fi
    printf '%-40s %-9s %9s %9s %12s %9s %9s %9s\n' "$label" "$impl" "$mbs" "$cmbs" "$evs" "$rss" "$r" "$rc"
}
row "walk (on_record, mmap)" jfrstream "$OUT/walk.txt" "$OUT/walk.java.txt"
row "  same, --release" jfrstream "$OUT/walkr.txt" "$OUT/walk.java.txt"
row "  same, --threads $THREADS" jfrstream "$OUT/walkt.txt" "$OUT/walk.java.txt"
row "walk" JDK "$OUT/walk.java.txt"
row "type:$TYPE" jfrstream "$OUT/type1.txt" "$OUT/type1.java.txt"
row "  same, --release" jfrstream "$OUT/type1r.txt" "$OUT/type1.java.txt"
row "  same, --threads $THREADS" jfrstream "$OUT/type1t.txt" "$OUT/type1.java.txt"
row "type:$TYPE" JDK "$OUT/type1.java.txt"
if [ -n "$TYPE2" ]; then
    row "type:$TYPE2" jfrstream "$OUT/type2.txt" "$OUT/type2.java.txt"
    row "  same, --threads $THREADS" jfrstream "$OUT/type2t.txt" "$OUT/type2.java.txt"
    row "type:$TYPE2" JDK "$OUT/type2.java.txt"
fi
row "all (every field)" jfrstream "$OUT/all.txt" "$OUT/all.java.txt"
row "  same, --threads $THREADS" jfrstream "$OUT/allt.txt" "$OUT/all.java.txt"
row "  same, --no-value-cache" jfrstream "$OUT/allnc.txt" "$OUT/all.java.txt"
row "all" JDK "$OUT/all.java.txt"
if [ -n "$FIELD" ]; then
    row "field:$FIELD" jfrstream "$OUT/field.txt" "$OUT/field.java.txt"
    row "field:$FIELD" JDK "$OUT/field.java.txt"
fi
row "stream (read 64 KiB slices)" jfrstream "$OUT/stream.txt"
row "stream (cat FILE | jfrbench -)" jfrstream "$OUT/pipe.txt"
row "live 1x (--live, 64 KiB slices)" jfrstream "$OUT/live1.txt"
row "live 4x (--live --loop 4)" jfrstream "$OUT/live4.txt"
row "print --json > /dev/null (input MB/s)" jfrstream "$OUT/json.txt" "$OUT/json.java.txt"
row "  same, --jobs $THREADS" jfrstream "$OUT/jsont.txt" "$OUT/json.java.txt"
row "jfr print --json > /dev/null" JDK "$OUT/json.java.txt"

echo
for n in walk walkr walkt type1 type1r type1t type2 type2t all allt allnc field stream live1 live4; do
    [ -f "$OUT/$n.txt" ] || continue
    printf '%-7s events=%s heap_peak_kb=%s frames=%s\n' "$n" "$(field events "$OUT/$n.txt")" \
        "$(field heap_peak_kb "$OUT/$n.txt")" "$(field frames "$OUT/$n.txt")"
done
for n in walk type1 type2 all field; do
    [ -f "$OUT/$n.java.txt" ] || continue
    printf '%-7s JDK events=%s frames=%s\n' "$n" "$(field events "$OUT/$n.java.txt")" \
        "$(field frames "$OUT/$n.java.txt")"
done
echo
echo "targets: walk >= 4000 MB/s: $(field MB/s "$OUT/walk.txt");" \
     "type:$TYPE >= 2000 MB/s: $(field MB/s "$OUT/type1.txt");" \
     "all >= 1000 MB/s: $(field MB/s "$OUT/all.txt"); >= 20x the JDK (see x JDK)"
for n in json jsont json.java; do
    [ -f "$OUT/$n.txt" ] || continue
    printf '%-9s JSON bytes=%s JSON MB/s=%s JSON cpu MB/s=%s cpu_s=%s\n' "$n" \
        "$(field json_bytes "$OUT/$n.txt")" "$(field json_MB/s "$OUT/$n.txt")" \
        "$(field json_cpu_MB/s "$OUT/$n.txt")" "$(field cpu_s "$OUT/$n.txt")"
done
echo "targets: print --json >= 1000 JSON MB/s: $(field json_MB/s "$OUT/json.txt"); >= 10x jfr print --json"
[ -f "$OUT/jsont.txt" ] && echo "print --json --jobs $THREADS: $(ratio "$(field MB/s "$OUT/jsont.txt")" "$(field MB/s "$OUT/json.txt")" 2) the speed of --jobs 1 (wall; target >= 1.7x on 2 cores)"
echo "live: peak RSS 1x $(field rss_kb "$OUT/live1.txt") kB, 4x $(field rss_kb "$OUT/live4.txt") kB"
largest=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(); o = m = 0
while o + 68 <= len(d):
    n = struct.unpack(">q", d[o + 8:o + 16])[0]
    if n < 68: break
    m = max(m, n); o += n
print(m // 1024)' "$file")
echo "file: largest chunk $largest kB; peak RSS with --release: walk $(field rss_kb "$OUT/walkr.txt") kB," \
     "type:$TYPE $(field rss_kb "$OUT/type1r.txt") kB (target: largest chunk + 64 MB =" \
     "$((largest + 65536)) kB)"
echo "raw outputs: $OUT"
