# Copyright (c) 2026 gpuops.sglang_stack contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Serve the test bed's upstream mirror read-only over HTTP, with a JSON-lines access log.

    python3 mirror_server.py --root build/mirror --port 8080 --log build/mirror-logs/access.jsonl

Standard library only (it runs in the bare Debian test image). GET and HEAD; no Range, no uploads.
One log line per request, appended and flushed at once, so that a test can measure the bytes the
"upstreams" served during an upgrade:

    {"time": "2026-01-01T12:00:00.123Z", "client": "172.18.0.3", "method": "GET",
     "path": "/pytorch/whl/nightly/cu130/torch/", "status": 200, "bytes": 1234, "body_bytes": 1050,
     "duration_ms": 1.2, "user_agent": "pip/23.0.1 ..."}

``bytes`` counts everything written to the socket for the response (status line, headers, body);
``body_bytes`` the body alone.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class _CountingWriter:
    """Wraps the handler's socket writer and counts the bytes written through it."""

    def __init__(self, raw):
        self._raw = raw
        self.count = 0

    def write(self, data):
        n = self._raw.write(data)
        self.count += len(data) if n is None else n
        return n

    def flush(self):
        return self._raw.flush()

    def __getattr__(self, name):
        return getattr(self._raw, name)


class MirrorHandler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: apt and pip reuse connections
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms stalls
    server_version = "sglang-stack-test-mirror/1"
    log_file = None  # set by make_server
    log_lock = threading.Lock()
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map,
                      ".whl": "application/octet-stream", ".deb": "application/vnd.debian.binary-package",
                      ".gpg": "application/pgp-keys", ".asc": "application/pgp-keys", ".json": "application/json"}

    def setup(self):
        super().setup()
        self.wfile = _CountingWriter(self.wfile)

    def handle_one_request(self):
        self._t0 = time.monotonic()
        self._start = self.wfile.count
        self._header_end = None
        self._status = None
        self.command = None
        super().handle_one_request()
        if self.command or self._status:  # a request was read (not just a closed keep-alive connection)
            self._write_log()

    def parse_request(self):
        # Time from the request line on: on a kept-alive connection the wait for it is the client's.
        self._t0 = time.monotonic()
        return super().parse_request()

    def end_headers(self):
        super().end_headers()
        self._header_end = self.wfile.count

    def send_response(self, code, message=None):
        self._status = code
        super().send_response(code, message)

    def do_POST(self):  # noqa: N802 - read-only mirror
        self.send_error(405, "read-only mirror")

    do_PUT = do_DELETE = do_PATCH = do_POST

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass  # the JSON access log replaces the default stderr log

    def _write_log(self):
        if self.log_file is None:
            return
        total = self.wfile.count - self._start
        headers = (self._header_end - self._start) if self._header_end is not None else total
        now = time.time()
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z",
            "client": self.client_address[0],
            "method": self.command,
            "path": self.path,
            "status": self._status,
            "bytes": total,
            "body_bytes": total - headers,
            "duration_ms": round((time.monotonic() - self._t0) * 1000, 1),
            "user_agent": self.headers.get("User-Agent", "") if self.headers else "",
        }
        with self.log_lock:
            self.log_file.write(json.dumps(entry, sort_keys=True) + "\n")
            self.log_file.flush()


def make_server(root: str, host: str, port: int, log_path: str | None) -> ThreadingHTTPServer:
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        raise SystemExit(f"mirror_server: --root {root} is not a directory")
    if log_path:
        os.makedirs(os.path.dirname(os.path.abspath(log_path)) or ".", exist_ok=True)
        MirrorHandler.log_file = open(log_path, "a", encoding="utf-8")  # pylint: disable=consider-using-with
    handler = functools.partial(MirrorHandler, directory=root)
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    return ThreadingHTTPServer((host, port), handler)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Serve a directory read-only with a JSON-lines access log.")
    ap.add_argument("--root", required=True, help="directory to serve")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--bind", default="0.0.0.0", help="address to listen on (default: all)")
    ap.add_argument("--log", help="access log file (JSON lines, appended)")
    args = ap.parse_args(argv)
    server = make_server(args.root, args.bind, args.port, args.log)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    print(f"mirror_server: serving {os.path.abspath(args.root)} on {args.bind}:{args.port}, log {args.log or '-'}",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
