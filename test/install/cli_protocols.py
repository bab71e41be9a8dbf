"""cli_protocols.py — the CLI speaks no protocol itself: no object file of
tools/jfrstream calls librdkafka, libcurl or libmicrohttpd; Kafka, Pyroscope
and the metrics endpoint are the sink library's (jfrs_fanout and the objects
it feeds). From `nm -u` of each object file of the CLI.

    cli_protocols.py NM CLI_BUILD_DIR
"""
import glob
import os
import re
import subprocess
import sys

# what each library's calls start with
PROTOCOLS = re.compile(r'^(rd_kafka_|curl_|MHD_)')


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    nm, d = sys.argv[1], sys.argv[2]
    objs = sorted(glob.glob(os.path.join(d, '*.p', '*.o')))
    if not objs:
        print('no object files under %s' % d, file=sys.stderr)
        return 1
    bad = []
    for o in objs:
        out = subprocess.run([nm, '-u', '-P', o], check=True, capture_output=True,
                             text=True).stdout
        calls = sorted({l.split()[0] for l in out.splitlines()
                        if l.split() and PROTOCOLS.match(l.split()[0])})
        if calls:
            bad.append('%s calls %s' % (os.path.relpath(o, d), ', '.join(calls)))
    for b in bad:
        print('FAIL: ' + b)
    if bad:
        return 1
    print('%d object files of the CLI: none calls librdkafka, libcurl or libmicrohttpd'
          % len(objs))
    return 0


if __name__ == '__main__':
    sys.exit(main())
