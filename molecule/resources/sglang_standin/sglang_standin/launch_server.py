"""Stand-in for `python -m sglang.launch_server` (test double; see ../README.md)."""
import argparse
import glob
import hmac
import json
import logging
import os
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


# Through logging, as SGLang logs (engine.py:1031 logs server_args, api_key included): the role's key launcher
# must keep the key out of what this prints.
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[standin %(asctime)s] %(message)s",
                    datefmt="%H:%M:%S")


def log(msg):
    logging.getLogger("sglang_standin").info("%s", msg)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="sglang.launch_server (stand-in)")
    parser.add_argument("--model-path", "--model", dest="model_path", required=True)
    parser.add_argument("--tp-size", "--tensor-parallel-size", dest="tp_size", type=int, default=1)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--served-model-name", default=None)
    parser.add_argument("--speculative-algorithm", default=None,
                        choices=["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"])
    parser.add_argument("--speculative-draft-model-path", "--speculative-draft-model", dest="draft", default=None)
    parser.add_argument("--speculative-num-steps", type=int, default=None)
    parser.add_argument("--speculative-eagle-topk", type=int, default=None)
    parser.add_argument("--speculative-num-draft-tokens", type=int, default=None)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--admin-api-key", default=None)
    return parser.parse_known_args(argv)


def stack_faults():
    # sys.prefix is <stack>/venv: faults belong to the stack, so a rollback leaves them behind.
    path = os.path.join(os.path.dirname(sys.prefix), "standin-faults.json")
    if os.path.exists(path):
        with open(path) as handle:
            faults = json.load(handle)
        log("faults from %s: %s" % (path, faults))
        return faults
    return {}


def start_up(args):
    """What SGLang checks or does before it serves; raises as SGLang would."""
    config = os.path.join(args.model_path, "config.json")
    if not os.path.isfile(config):
        raise OSError("Can't load the configuration of '%s': no config.json" % args.model_path)
    dev = os.environ.get("STANDIN_DEV_DIR", "/dev")  # the unit tests point it at a directory of their own
    gpus = [p for p in glob.glob(os.path.join(dev, "nvidia*")) if re.match(r"^nvidia[0-9]+$", os.path.basename(p))]
    if len(gpus) < args.tp_size:
        raise RuntimeError("tp_size %d needs %d GPUs; %d visible" % (args.tp_size, args.tp_size, len(gpus)))
    if args.speculative_algorithm and not (args.draft and os.path.isfile(os.path.join(args.draft, "config.json"))):
        raise OSError("speculative draft model %r has no config.json" % args.draft)
    import torch  # noqa: F401  the stack's torch, as SGLang imports it first
    import sgl_kernel  # noqa: F401  fails with "undefined symbol" when built against another torch
    import sglang
    log("sglang %s, torch %s, tp %d, %d GPU nodes" % (sglang.__version__, torch.__version__, args.tp_size, len(gpus)))
    custom_ar = os.environ.get("SGLANG_CUSTOM_AR_ALLOW_PCIE", "0") == "1"
    log("all-reduce path: %s" % ("custom all-reduce on PCIe (SGLANG_CUSTOM_AR_ALLOW_PCIE=1)" if custom_ar
                                 else "NCCL (custom all-reduce is disabled on more than two PCIe-only GPUs)"))
    nccl = dict((k, v) for k, v in sorted(os.environ.items()) if k.startswith("NCCL_"))
    log("NCCL environment: %s" % nccl)
    return custom_ar


class State(object):
    def __init__(self, args, custom_ar, faults):
        self.args = args
        self.faults = faults
        self.ready_at = time.time() + float(os.environ.get("STANDIN_LOAD_SECONDS", "2"))
        base = float(os.environ.get("STANDIN_BASE_TOK_S", "91.0"))
        accept = float(os.environ.get("STANDIN_EAGLE_ACCEPT_LEN", "2.4")) if args.speculative_algorithm else 0.0
        rate = base * (accept * 0.75 if accept else 1.0) * (1.04 if custom_ar else 1.0)
        self.tok_s = rate * float(faults.get("tok_s_factor", 1.0))
        self.accept = accept
        self.last_gen_throughput = None

    def health_status(self):
        if time.time() < self.ready_at:
            return 503
        return int(self.faults.get("health_status", 200))


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            log("%s %s" % (self.address_string(), fmt % args))

        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def info(self):
            return {"model_path": state.args.model_path, "tokenizer_path": state.args.model_path,
                    "is_generation": True, "tp_size": state.args.tp_size,
                    "speculative_algorithm": state.args.speculative_algorithm,
                    "internal_states": [{"last_gen_throughput": state.last_gen_throughput,
                                         "avg_spec_accept_length": state.accept or None,
                                         "memory_usage": {"token_capacity": 400000},
                                         "effective_max_running_requests_per_dp": 256}]}

        def authorized(self):
            # sglang 0.5.9 srt/utils/auth.py decide_request_auth: /health* and /metrics are always allowed;
            # every other endpoint needs "Bearer <api_key>" when an api key is set.
            if self.path.startswith("/health") or self.path.startswith("/metrics") or not state.args.api_key:
                return True
            parts = (self.headers.get("Authorization") or "").split(" ", 1)
            if len(parts) == 2 and parts[0].lower() == "bearer" and hmac.compare_digest(parts[1], state.args.api_key):
                return True
            self.reply(401, {"error": "Unauthorized"})
            return False

        def do_GET(self):
            if not self.authorized():
                return
            if self.path in ("/health", "/health_generate"):
                code = state.health_status()
                self.reply(code, {} if code == 200 else {"error": "not ready"})
            elif self.path in ("/get_model_info", "/model_info"):
                self.reply(200, {"model_path": state.args.model_path, "is_generation": True})
            elif self.path in ("/get_server_info", "/server_info"):
                self.reply(200, self.info())
            elif self.path == "/v1/models":
                self.reply(200, {"object": "list", "data": [{"id": state.args.served_model_name or state.args.model_path}]})
            elif self.path == "/flush_cache":
                self.reply(200, {})
            else:
                self.reply(404, {"error": "not found"})

        def do_POST(self):
            if not self.authorized():
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/flush_cache":
                self.reply(200, {})
                return
            if self.path != "/generate":
                self.reply(404, {"error": "not found"})
                return
            if state.health_status() != 200:
                self.reply(503, {"error": "not ready"})
                return
            params = body.get("sampling_params") or {}
            tokens = int(params.get("max_new_tokens", 16))
            # Decode time at the stack's rate, capped so a test never waits long.
            time.sleep(min(tokens / state.tok_s, 3.0))
            state.last_gen_throughput = round(state.tok_s, 2)
            self.reply(200, {"text": "x" * tokens,
                             "meta_info": {"completion_tokens": tokens, "finish_reason": {"type": "length"}}})
    return Handler


def main():
    args, unknown = parse_args(sys.argv[1:])
    log("server_args: %s; ignored: %s" % (vars(args), unknown))
    faults = stack_faults()
    if faults.get("exit_at_start"):
        log("start-up failed: %s" % faults["exit_at_start"])
        sys.exit(1)
    custom_ar = start_up(args)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(State(args, custom_ar, faults)))
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    log("serving on %s:%d" % (args.host, args.port))
    server.serve_forever()


if __name__ == "__main__":
    main()
