#!/bin/sh
# valgrind.sh PROGRAM ARGS... — run PROGRAM under valgrind memcheck: any
# memory error, or a definitely or indirectly lost block at exit, makes it
# exit 99 with the report on stderr.
#
# The exe_wrapper of `meson test --setup valgrind` and, through
# JFRSTREAM_TEST_WRAPPER, the prefix the test drivers (test/*.sh, *.py,
# test/live/*.py) put before every jfrstream CLI they start. An interpreter
# (python3, bash, sh) is run as is: it is a test driver, not our code, and it
# wraps our binaries itself; the JVMs those drivers start are never wrapped.
# A gcc build: valgrind 3.19 cannot read the DWARF 5 of clang 14 builds
# (CC=clang needs -Dc_args=-gdwarf-4).
case "${1##*/}" in
    python*|bash|sh|dash) exec "$@" ;;
esac
if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP: valgrind is not installed (apt-get install valgrind)" >&2
    exit 77
fi
exec valgrind -q --tool=memcheck --error-exitcode=99 \
    --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --num-callers=30 \
    ${JFRSTREAM_VALGRIND_OPTS:-} "$@"
