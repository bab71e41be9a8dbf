#!/usr/bin/env bash
# recordings.sh — compare jfrstream with the JDK's `jfr` on real recordings.
#
# usage: test/oracle/recordings.sh JFRSTREAM WORKDIR [recordings|producers|jdk9|all]
#
#   recordings  make recordings with test/java/Workload.java under every JDK
#               present (17, and 25 when installed; test/gen-recordings.sh) into
#               WORKDIR/recordings — cached: remade only when Workload.java, the
#               generator or the JDKs change — and compare each one; plus an
#               --events filter run and a run with --feed-size random:7.
#   producers   gunzip ../shared/data/producers/*.jfr.gz (beside the checkout)
#               into WORKDIR/producers and compare each one; skipped with a
#               message when that folder is absent (a user's clone).
#   jdk9        likewise ../shared/data/jdk9/*.jfr.gz (JDK 9 recordings, JFR
#               format 1.0) into WORKDIR/jdk9, compared as they are and with
#               --feed-size random:7.
#
# The reference is JDK 25's jfr when installed, else JDK 17's with the
# documented 17-vs-25 differences tolerated (see test/oracle/oracle.py). JDK25_HOME=none
# hides an installed JDK 25 (to try what CI sees with JDK 17 only).
# Exit: 0 equal, 1 differences, 77 skipped (no JDK / no data).
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 JFRSTREAM WORKDIR [recordings|producers|jdk9|all]" >&2
    exit 2
fi
jfrstream=$(readlink -f "$1")
work=$2
what=${3:-all}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ------------------------------------------------------------ reference tool
jfr_of_version() { # $1 = major -> the jfr of that JDK (or the next newer one), or nothing
    local home # test/find_jdk.py: $JFRSTREAM_JDK<N>, $JDK<N>_HOME (none: absent), /usr/lib/jvm
    home=$(python3 "$here/../find_jdk.py" "$1" 2>/dev/null) || return 0
    if [ -x "$home/bin/jfr" ]; then echo "$home/bin/jfr"; fi
}
ref=$(jfr_of_version 25)
if [ -z "$ref" ]; then
    ref=$(command -v jfr || true)
    [ -z "$ref" ] && ref=$(jfr_of_version 17)
    if [ -n "$ref" ]; then
        echo "recordings: no JDK 25 found; reference is $ref (documented 17-vs-25 differences tolerated)"
    fi
fi
if [ -z "$ref" ]; then
    echo "recordings: SKIP: no JDK 'jfr' tool found (install openjdk-17-jdk-headless, or set JFRSTREAM_JDK25 to a JDK home)"
    exit 77
fi
echo "recordings: reference: $ref ($("$ref" version 2>/dev/null | head -1))"

status=0
ran=0
# ORACLE=text: `print` (text) against JDK 25's (print_text.py) instead of
# summary, metadata and print --json (oracle.py); ORACLE=xml: `print --xml`;
# ORACLE=view: `view` (view.py: all-views at three widths, types, event types)
script=oracle.py
fmt=()
case "${ORACLE:-}" in
text) script=print_text.py ;;
xml) script=print_text.py; fmt=(--xml) ;;
view) script=view.py ;;
esac
# the views' random:7 run in the first call: the JDK's texts made once
once_more=()
[ "$script" = view.py ] && once_more=(--feed-size whole,random:7)
oracle() {
    local rc=0
    python3 "$here/$script" --jfrstream "$jfrstream" --jfr "$ref" --exact-numbers "${fmt[@]}" "$@" || rc=$?
    if [ "$rc" = 77 ]; then
        return 0
    fi
    ran=1
    [ "$rc" = 0 ] || status=1
}

# -------------------------------------------------------------- recordings
if [ "$what" = recordings ] || [ "$what" = all ]; then
    if ! command -v java >/dev/null 2>&1 && [ -z "${JDK17_HOME:-}${JDK25_HOME:-}" ] &&
        ! ls /usr/lib/jvm/*/bin/java >/dev/null 2>&1; then
        echo "recordings: no 'java' found: cannot make recordings (skipped)"
    else
        rec="$work/recordings"
        # one maker at a time: `recordings` and `print-text-recordings` share
        # the cache and may run at once (the second waits, then finds it made)
        exec 9>"$work/.recordings.lock"
        flock 9
        stamp="$(stat -c '%Y %s' "$here/../java/Workload.java" "$here/../gen-recordings.sh" | tr '\n' ' ')"
        stamp="$stamp $(printf '%s ' /usr/lib/jvm/*/) ${JDK17_HOME:-} ${JDK25_HOME:-}"
        if [ -f "$rec/.stamp" ] && [ "$(cat "$rec/.stamp")" = "$stamp" ] &&
            ls "$rec"/*.jfr >/dev/null 2>&1; then
            echo "recordings: recordings up to date in $rec"
        else
            rm -rf "$rec"
            mkdir -p "$rec"
            t0=$(date +%s)
            grc=0
            "$here/../gen-recordings.sh" "$rec" || grc=$?
            if [ "$grc" = 0 ]; then
                echo "$stamp" >"$rec/.stamp"
                echo "recordings: recordings made in $(($(date +%s) - t0)) s"
            elif [ "$grc" = 77 ]; then
                echo "recordings: no usable JDK to make recordings (skipped)"
            else
                echo "recordings: FAIL: gen-recordings.sh exit $grc"
                status=1
            fi
        fi
        flock -u 9
        files=("$rec"/*.jfr)
        if [ -e "${files[0]}" ]; then
            echo "=== oracle: ${#files[@]} generated recordings"
            oracle "${once_more[@]}" "${files[@]}"
            profiles=("$rec"/*-profile.jfr)
            profile=${profiles[0]}
            if [ -f "$profile" ]; then
                echo "=== oracle: --events filter on $(basename "$profile")"
                oracle --no-summary --no-metadata \
                    --events 'jfrstream.Scalars,jfrstream.Strings,jdk.ExecutionSample,jdk.ThreadSleep' "$profile"
            fi
            multis=("$rec"/*-multichunk.jfr)
            multi=${multis[0]}
            if [ -f "$multi" ] && [ "$script" != view.py ]; then
                echo "=== oracle: --feed-size random:7 on $(basename "$multi")"
                oracle --feed-size random:7 "$multi"
            fi
        fi
    fi
fi

# ------------------------------------------- producers, jdk9 (../shared/data)
shared_set() { # $1 = folder of ../shared/data, $2 = what it holds -> gunzipped copies
    local src="$repo/../shared/data/$1" dst="$work/$1" gz out n=0
    if [ ! -d "$src" ]; then
        echo "recordings: $src is absent (only CI and the development machines have ../shared): $2 skipped" >&2
        return
    fi
    mkdir -p "$dst"
    for gz in "$src"/*.jfr.gz; do
        [ -e "$gz" ] || continue
        out="$dst/$(basename "$gz" .gz)"
        if [ ! -f "$out" ] || [ "$gz" -nt "$out" ]; then
            gunzip -c "$gz" >"$out.tmp.$$" && mv "$out.tmp.$$" "$out"
        fi
        echo "$out"
        n=$((n + 1))
    done
    [ "$n" = 0 ] && echo "recordings: no *.jfr.gz in $src: $2 skipped" >&2
    return 0
}
if [ "$what" = producers ] || [ "$what" = all ]; then
    mapfile -t files < <(shared_set producers "producer recordings")
    if [ "${#files[@]}" -gt 0 ]; then
        echo "=== oracle: ${#files[@]} producer recordings from ../shared/data/producers"
        oracle "${files[@]}"
    fi
fi
if [ "$what" = jdk9 ] || [ "$what" = all ]; then
    mapfile -t files < <(shared_set jdk9 "JDK 9 recordings (format 1.0)")
    if [ "${#files[@]}" -gt 0 ]; then
        echo "=== oracle: ${#files[@]} JDK 9 recordings (format 1.0) from ../shared/data/jdk9"
        oracle "${once_more[@]}" "${files[@]}"
        if [ "$script" != view.py ]; then
            echo "=== oracle: --feed-size random:7 on the JDK 9 recordings"
            oracle --feed-size random:7 "${files[@]}"
        fi
        # profiles: --event cpu, alloc and lock take the com.oracle.jdk.* events
        if [ "$script" = oracle.py ]; then
            echo "=== profile oracle: the JDK 9 recordings"
            prc=0
            python3 "$here/../profile/profile-fixture.py" --jfrstream "$jfrstream" --jfr "$ref" "${files[@]}" || prc=$?
            ran=1
            [ "$prc" = 0 ] || status=1
        fi
    fi
fi

if [ "$ran" = 0 ]; then
    echo "recordings: SKIP: nothing was compared"
    exit 77
fi
[ "$status" = 0 ] && echo "recordings: all equal" || echo "recordings: DIFFERENCES (see above)"
exit "$status"
