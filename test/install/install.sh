#!/usr/bin/env bash
# install.sh — `meson install` gives a usable library, CLI and man page.
#
# usage: test/install/install.sh MESON BUILD_DIR SOURCE_DIR SANITIZE "CC..."
#
# Installs the build into a temporary --destdir, then, with pkg-config looking
# only there (PKG_CONFIG_SYSROOT_DIR): compiles examples/count_events.c against
# jfrstream and runs it on test/data/workload.jfr (counts = the committed
# `jfr summary` output, less metadata and checkpoint records); compiles
# examples/tail_repo.c against jfrstream-uv and tails a folder holding the
# fixture; compiles examples/stream_to_pprof.c against jfrstream-conv and
# checks its profile of the fixture is the installed CLI's `pprof`, byte for
# byte; runs the installed CLI; renders the installed man page with
# `man -l` (or groff) and no warning. SANITIZE is meson's b_sanitize, so
# that programs built here link against sanitized libraries.
set -uo pipefail
[ $# -eq 5 ] || { echo "usage: $0 MESON BUILD_DIR SOURCE_DIR SANITIZE \"CC...\"" >&2; exit 2; }
meson=$1 build=$2 src=$3 sanitize=$4
read -ra cc <<<"$5" # the compiler command, e.g. "ccache cc"
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

dest="$tmp/dest"
if ! "$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "FAIL: meson install"
    exit 1
fi
echo "installed:"
(cd "$dest" && find . -type f -o -type l | sort | sed 's/^\./  /')

pc=$(find "$dest" -name jfrstream.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: no jfrstream.pc installed"; exit 1; }
[ -n "$(find "$dest" -name jfrstream-uv.pc)" ] || fail "no jfrstream-uv.pc installed"
[ -n "$(find "$dest" -name jfrstream-conv.pc)" ] || fail "no jfrstream-conv.pc installed"
[ -n "$(find "$dest" -name 'libjfrstream_conv.*')" ] || fail "no libjfrstream_conv installed"
for f in include/jfrstream.h include/jfrstream_uv.h include/jfrstream_conv.h bin/jfrstream \
        share/man/man1/jfrstream.1; do
    [ -n "$(find "$dest" -path "*/$f" | head -1)" ] || fail "$f not installed"
done
# the agent jar, when the build made it (feature `agent`), beside the CLI's share folder
if [ -f "$build/tools/jfrstream-agent/jfrstream-agent.jar" ]; then
    ajar=$(find "$dest" -path '*/share/jfrstream/jfrstream-agent.jar' | head -1)
    if [ -z "$ajar" ]; then
        fail "share/jfrstream/jfrstream-agent.jar not installed"
    elif ! unzip -p "$ajar" META-INF/MANIFEST.MF 2>/dev/null | grep -q '^Premain-Class: JfrstreamAgent' \
            && command -v unzip >/dev/null; then
        fail "$ajar: no Premain-Class in its manifest"
    else
        echo "ok: share/jfrstream/jfrstream-agent.jar installed"
    fi
else
    echo "note: a build without the agent (no javac/jar, or -Dagent=disabled): no jar to check"
fi
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_SYSROOT_DIR="$dest"
# (pkg-config puts the sysroot before these variables too)
libdir=$(pkg-config --variable=libdir jfrstream)
bindir=$(pkg-config --variable=prefix jfrstream)/bin
flags=()
[ "$sanitize" = none ] || flags=("-fsanitize=$sanitize")

# ------------------------------------------ count_events against jfrstream
cflags=$(pkg-config --cflags --libs jfrstream) || { echo "FAIL: pkg-config jfrstream"; exit 1; }
echo "pkg-config --cflags --libs jfrstream: $cflags"
case $cflags in *"$dest"*) ;; *) fail "pkg-config flags do not point into the install: $cflags" ;; esac
# shellcheck disable=SC2086  # word splitting of the flags is meant
if ! "${cc[@]}" -std=c11 -Wall -Wextra -Werror "${flags[@]}" -o "$tmp/count_events" \
        "$src/examples/count_events.c" $cflags 2>"$tmp/cc.err"; then
    fail "count_events.c does not build against the installed library: $(cat "$tmp/cc.err")"
else
    want=$(awk '$1 != "jdk.Metadata" && $1 != "jdk.Checkpoint" && NF == 3 && $1 ~ /\./ && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $2 > 0 { print $2, $1 }' \
        "$src/test/data/workload.summary.txt" | sort)
    got=$(LD_LIBRARY_PATH="$libdir" "$tmp/count_events" "$src/test/data/workload.jfr" | awk '{ print $1, $2 }' | sort)
    if [ -z "$want" ] || [ "$got" != "$want" ]; then
        fail "count_events (installed library) differs from jfr summary:"
        diff <(echo "$want") <(echo "$got") | head -10
    else
        echo "ok: count_events built with pkg-config: $(echo "$got" | wc -l) types, $(echo "$got" | awk '{ s += $1 } END { print s }') events = jfr summary"
    fi
fi

# ---------------------------------------- tail_repo against jfrstream-uv
uvflags=$(pkg-config --cflags --libs jfrstream-uv) || fail "pkg-config jfrstream-uv"
# shellcheck disable=SC2086
if ! "${cc[@]}" -std=c11 -Wall -Wextra -Werror "${flags[@]}" -o "$tmp/tail_repo" \
        "$src/examples/tail_repo.c" $uvflags 2>"$tmp/cc.err"; then
    fail "tail_repo.c does not build against the installed library: $(cat "$tmp/cc.err")"
else
    mkdir "$tmp/repo"
    cp "$src/test/data/workload.jfr" "$tmp/repo/2026_01_01_00_00_00.jfr"
    n=$(LD_LIBRARY_PATH="$libdir" timeout 30 "$tmp/tail_repo" "$tmp/repo" 2000 | wc -l)
    want_n=$(echo "$want" | awk '{ s += $1 } END { print s }')
    if [ "$n" = "$want_n" ]; then
        echo "ok: tail_repo built with pkg-config jfrstream-uv: $n events"
    else
        fail "tail_repo (installed library): $n events, want $want_n"
    fi
fi

# ------------------------------------ stream_to_pprof against jfrstream-conv
convflags=$(pkg-config --cflags --libs jfrstream-conv) || fail "pkg-config jfrstream-conv"
echo "pkg-config --cflags --libs jfrstream-conv: $convflags"
# shellcheck disable=SC2086
if ! "${cc[@]}" -std=c11 -Wall -Wextra -Werror "${flags[@]}" -o "$tmp/stream_to_pprof" \
        "$src/examples/stream_to_pprof.c" $convflags 2>"$tmp/cc.err"; then
    fail "stream_to_pprof.c does not build against the installed library: $(cat "$tmp/cc.err")"
elif ! LD_LIBRARY_PATH="$libdir" "$tmp/stream_to_pprof" - alloc <"$src/test/data/workload.jfr" \
        >"$tmp/conv.pb.gz" 2>"$tmp/conv.err" ||
        ! LD_LIBRARY_PATH="$libdir" "$bindir/jfrstream" pprof --event alloc -o "$tmp/cli.pb.gz" \
        "$src/test/data/workload.jfr" 2>>"$tmp/conv.err"; then
    fail "stream_to_pprof or jfrstream pprof (installed): $(head -c 300 "$tmp/conv.err")"
elif ! cmp -s "$tmp/conv.pb.gz" "$tmp/cli.pb.gz" || ! gzip -t "$tmp/conv.pb.gz" 2>/dev/null; then
    fail "stream_to_pprof (installed library) differs from jfrstream pprof"
else
    echo "ok: stream_to_pprof built with pkg-config jfrstream-conv: $(wc -c <"$tmp/conv.pb.gz") bytes = jfrstream pprof --event alloc"
fi

# ---------------------------------------------------------- installed CLI
if LD_LIBRARY_PATH="$libdir" TZ=UTC "$bindir/jfrstream" summary "$src/test/data/workload.jfr" >"$tmp/summary" 2>"$tmp/err" &&
        cmp -s "$tmp/summary" "$src/test/data/workload.summary.txt"; then
    echo "ok: installed jfrstream summary = jfr summary"
else
    fail "installed jfrstream: $(head -c 300 "$tmp/err")"
fi

# the events a summary table counts (its rows: type, count, size)
summary_events() {
    awk 'NF == 3 && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' "$1"
}

# listen and tail run from their module (tools/jfrstream/module.h), installed
# under libdir/jfrstream and found from the staged executable; the others
# never load it
if [ -z "$(find "$dest" -path '*/jfrstream/jfrstream_live.so')" ]; then
    fail "jfrstream/jfrstream_live.so (listen and tail) not installed under the libdir"
elif LD_LIBRARY_PATH="$libdir" "$bindir/jfrstream" tail --exit-when-done --summary \
        "$src/test/data/workload.jfr" >"$tmp/tail" 2>"$tmp/err" &&
        [ "$(summary_events "$tmp/tail")" = "$(summary_events "$src/test/data/workload.summary.txt")" ]; then
    echo "ok: installed jfrstream tail (its module) counts the events jfr summary counts"
else
    fail "installed jfrstream tail: $(head -c 300 "$tmp/err")"
fi
if command -v ldd >/dev/null && LD_LIBRARY_PATH="$libdir" ldd "$bindir/jfrstream" | grep -q -e librdkafka -e libcurl; then
    fail "the installed jfrstream links the sinks' libraries itself (they are the module's)"
fi

# --------------------------------------------------------------- man page
page=$(find "$dest" -name 'jfrstream.1*' | head -1)
if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man --warnings -l -P cat "$page" >"$tmp/man.txt" 2>"$tmp/man.err"
    rc=$?
    how="man --warnings -l"
elif command -v groff >/dev/null 2>&1; then
    groff -man -ww -Tutf8 "$page" >"$tmp/man.txt" 2>"$tmp/man.err"
    rc=$?
    how="groff -man -ww"
else
    echo "SKIP: neither man nor groff to render the man page (Debian packages man-db, groff-base)"
    [ "$fails" = 0 ] && exit 77
    exit 1
fi
if [ "$rc" != 0 ] || [ -s "$tmp/man.err" ]; then
    fail "$how $page: exit $rc: $(head -c 500 "$tmp/man.err")"
else
    missing=
    for w in NAME SYNOPSIS summary print metadata listen tail --feed-size --events \
            --categories --stack-depth --ids --per-chunk --once --exit-when-done --idle \
            --json --summary --help --version "EXIT STATUS" gzip zip lz4 zstd collapsed \
            flamegraph pprof "PROFILE OPTIONS"; do
        grep -q -e "$w" "$tmp/man.txt" || missing="$missing $w"
    done
    if [ -z "$missing" ]; then
        echo "ok: $how renders the man page without warnings ($(wc -l <"$tmp/man.txt") lines)"
    else
        fail "man page lacks:$missing"
    fi
fi

echo "install: $fails failures"
[ "$fails" = 0 ]
