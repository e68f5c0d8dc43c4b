"""Test bed (molecule/first_upgrade): watch a server's /health while something else runs.

    poller.py URL OUT_JSON [INTERVAL_S]

Asks URL every INTERVAL_S (default 0.25) seconds, 1 s timeout, and keeps OUT_JSON up to date (rewritten once a
second and on SIGTERM): polls, failures, the first and last failure, the longest run of failures in seconds, the
first and last poll's time. Runs until stopped (systemctl stop of its transient unit).
"""
import json
import os
import signal
import sys
import time
import urllib.request


def main(argv):
    url, out = argv[0], argv[1]
    interval = float(argv[2]) if len(argv) > 2 else 0.25
    state = {"url": url, "polls": 0, "failures": 0, "first_failure": None, "last_failure": None,
             "longest_outage_s": 0.0, "started": time.time(), "last_poll": None}
    outage_since = [None]
    running = [True]

    def save():
        tmp = out + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(state, handle, indent=1, sort_keys=True)
        os.replace(tmp, out)

    def stop(_signum, _frame):
        running[0] = False

    signal.signal(signal.SIGTERM, stop)
    last_save = 0.0
    while running[0]:
        now = time.time()
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                ok = response.status == 200
                detail = response.status
        except Exception as exc:  # any failure to answer 200 counts: refused, timeout, 503
            ok = False
            detail = repr(exc)[:200]
        state["polls"] += 1
        state["last_poll"] = now
        if ok:
            outage_since[0] = None
        else:
            state["failures"] += 1
            state["last_failure"] = {"at": now, "detail": detail}
            if state["first_failure"] is None:
                state["first_failure"] = {"at": now, "detail": detail}
            if outage_since[0] is None:
                outage_since[0] = now
            state["longest_outage_s"] = max(state["longest_outage_s"], round(now - outage_since[0] + interval, 3))
        if now - last_save >= 1:
            save()
            last_save = now
        time.sleep(interval)
    save()


if __name__ == "__main__":
    main(sys.argv[1:])
