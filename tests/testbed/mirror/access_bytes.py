#!/usr/bin/env python
# Copyright (c) 2026 gpuops.sglang_stack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sum what the test mirror served, per client, from its JSON-lines access log (mirror_server.py).

    access_bytes.py --log build/mirror-logs/access.jsonl --since 2026-01-01T12:00:00.000Z --until 2026-01-01T12:05:00.000Z \
        [--client 172.18.0.1 --client 172.18.0.5 ...] [--path-prefix /pypi/ --path-prefix /pytorch/ ...] \
        [--exclude-agent uv/ --exclude-agent gpuops-stack-lock ...]
    access_bytes.py --log build/mirror-logs/access.jsonl --who /some-unique-probe-path

The first form prints one JSON object: for each client address, the number of requests, ``bytes``
(everything written to the socket: status line, headers, body) and ``body_bytes``, summed over the
requests logged in [since, until] whose path starts with one of the prefixes (all paths when none is
given), whose client is one of --client (all clients when none is given) and whose User-Agent starts with none of
--exclude-agent; plus the total over them. (Every scenario's lock step runs on the controller, uv and the module
stack_lock with their own User-Agents: a window that measures what the upgrade fetches leaves them out, since scenarios
running side by side share the controller's address.)
Clients that were asked for but made no request are listed with zeros, so that "this host fetched
nothing" is an explicit 0, not a missing key.

The second form prints the client address of the last request for exactly that path: a caller that
requests a unique path learns the address the mirror sees it as (the controller reaches the mirror
through a published port, and the mirror sees the Docker network's gateway, not 127.0.0.1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys


def parse_time(text: str) -> dt.datetime:
    """'2026-01-01T12:00:00.123Z' (or with an explicit offset) -> aware datetime."""
    text = text.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    value = dt.datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value


def read_log(path: str):
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except ValueError as exc:
                raise SystemExit(f"access_bytes: {path}:{number}: not a JSON line ({exc})") from exc


def summarize(entries, since, until, clients=(), prefixes=(), exclude_agents=()):
    wanted = set(clients)
    per_client = {client: {"requests": 0, "bytes": 0, "body_bytes": 0} for client in clients}
    for entry in entries:
        when = parse_time(entry["time"])
        if when < since or when > until:
            continue
        if wanted and entry["client"] not in wanted:
            continue
        if prefixes and not str(entry.get("path", "")).startswith(tuple(prefixes)):
            continue
        if exclude_agents and str(entry.get("user_agent", "")).startswith(tuple(exclude_agents)):
            continue
        row = per_client.setdefault(entry["client"], {"requests": 0, "bytes": 0, "body_bytes": 0})
        row["requests"] += 1
        row["bytes"] += int(entry.get("bytes") or 0)
        row["body_bytes"] += int(entry.get("body_bytes") or 0)
    total = {key: sum(row[key] for row in per_client.values()) for key in ("requests", "bytes", "body_bytes")}
    return {"since": since.isoformat(), "until": until.isoformat(), "path_prefixes": list(prefixes),
            "clients": per_client, "total": total}


def who(entries, path):
    client = None
    for entry in entries:
        if entry.get("path") == path:
            client = entry["client"]
    return client


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Sum the test mirror's access log per client over a time window.")
    ap.add_argument("--log", required=True, help="the mirror's access log (JSON lines)")
    ap.add_argument("--since", help="window start, ISO 8601 (UTC when no offset)")
    ap.add_argument("--until", help="window end, ISO 8601 (UTC when no offset)")
    ap.add_argument("--client", action="append", default=[], help="client address to count (repeat; default: all)")
    ap.add_argument("--path-prefix", action="append", default=[], help="count only paths starting with this (repeat)")
    ap.add_argument("--exclude-agent", action="append", default=[],
                    help="leave out requests whose User-Agent starts with this (repeat)")
    ap.add_argument("--who", metavar="PATH", help="print the client address of the last request for exactly PATH")
    args = ap.parse_args(argv)
    if args.who:
        client = who(read_log(args.log), args.who)
        if client is None:
            print(f"access_bytes: no request for {args.who} in {args.log}", file=sys.stderr)
            return 1
        print(client)
        return 0
    if not (args.since and args.until):
        ap.error("--since and --until are required (or --who)")
    since, until = parse_time(args.since), parse_time(args.until)
    if until < since:
        ap.error(f"--until {args.until} is before --since {args.since}")
    print(json.dumps(summarize(read_log(args.log), since, until, args.client, args.path_prefix, args.exclude_agent), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
