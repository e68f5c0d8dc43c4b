"""Test bed (molecule/first_upgrade): the outage in a log of tests/benchmark's POLLER.

    outage.py POLL_LOG

POLLER prints "<unix time> <HTTP status>" at each change of /health_generate's answer (0: no answer). Prints JSON:
the first non-200 after a 200, the next 200 after it, the seconds between them (null when either is missing), and
the transitions themselves.
"""
import json
import sys


def main(path):
    with open(path) as handle:
        seen = [(float(t), int(c)) for t, c in (line.split() for line in handle if line.strip())]
    down = next((t for i, (t, c) in enumerate(seen) if c != 200 and i > 0 and seen[i - 1][1] == 200), None)
    up = next((t for t, c in seen if c == 200 and down is not None and t > down), None)
    print(json.dumps({'down_at': down, 'up_at': up, 'outage_s': round(up - down, 3) if down and up else None,
                      'transitions': seen}))


if __name__ == '__main__':
    main(sys.argv[1])
