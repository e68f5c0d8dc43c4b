"""Stand-in for `python -m sglang.launch_server` (test double; see ../README.md)."""
import argparse
import glob
import hmac
import importlib.util
import json
import logging
import os
import random
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
    settings = launch_settings(sys.argv[1:])
    for line in allreduce_lines(settings, args.tp_size):
        log(line)
    return settings


def load_rules():
    """plugins/module_utils/sglang_flags.py: copied beside this package in the test bed (molecule/default/prepare.yml),
    read from the source tree in the unit tests. The same decision rules as patch 0003's gpuops_allreduce_path."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "sglang_flags.py"),
                 os.path.join(here, "..", "..", "..", "..", "plugins", "module_utils", "sglang_flags.py")):
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("standin_sglang_flags", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise ImportError("sglang_flags.py (the collection's launch-flag rules) is neither beside %s nor in the source tree" % here)


def launch_settings(argv):
    """{option: value} of the command line, as sglang 0.5.9's parser resolves it (aliases, last one wins)."""
    rules = load_rules()
    errors = []
    settings = dict(rules.parse_args(argv, errors))
    for exc in errors:
        log("launch option not understood by the rules: %s" % exc)
    return settings


def allreduce_lines(settings, tp_size):
    """The [AR] lines patched SGLang 0.5.9 (patch 0003) logs at start-up, one per rank of each group above one rank,
    from the same decision rules (sglang_flags.predict / allreduce_path): the world group (no custom AR, mscclpp or
    torch symm-mem: init_world_group, parallel_state.py:1343-1358) and the tp group (moe_ep is the tp group when
    --ep-size equals --tp-size, parallel_state.py:1801-1802, and moe_tp then has one rank)."""
    rules = load_rules()
    # engine.py _set_envs_and_config: NCCL_CUMEM_ENABLE / NCCL_NVLS_ENABLE default to 0 unless --enable-symm-mem.
    if not settings.get("--enable-symm-mem"):
        os.environ.setdefault("NCCL_CUMEM_ENABLE", "0")
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    cc_major = int(os.environ.get("STANDIN_COMPUTE_CAPABILITY", "12.0").split(".")[0])
    full_nvlink = os.environ.get("STANDIN_FULL_NVLINK", "0") == "1"
    nccl = " ".join("%s=%s" % (k, v) for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")) or "(none set)"
    world_settings = {"--disable-custom-all-reduce": True, "--enable-symm-mem": settings.get("--enable-symm-mem")}
    groups = [("world:0", world_settings), ("tp:0", settings)]
    ep_size = int(settings.get("--ep-size", 1) or 1)
    if 1 < ep_size < tp_size:
        groups.append(("moe_ep:0", settings))
    lines = []
    for name, group_settings in groups:
        size = ep_size if name.startswith("moe_ep") else tp_size
        path, why = rules.allreduce_path(size, **rules.predict(group_settings, size, cc_major, full_nvlink))
        for rank in range(size):
            lines.append("[AR] group %s rank %d/%d: decode all-reduce path: %s (%s); NCCL env: %s"
                         % (name, rank, size, path, why, nccl))
    return lines


# How settings move the stand-in's decode rate: invented figures, not measurements. Deterministic, so the
# qualification's keep rule is exercised both ways: NCCL Tree beyond the noise (kept), fewer channels below the
# baseline, expert parallelism within the noise (neither kept).
def rate_factor(settings, environ):
    factor = 1.0
    if "tree" in environ.get("NCCL_ALGO", "").lower():
        factor *= float(environ.get("STANDIN_TREE_FACTOR", "1.06"))
    channels = environ.get("NCCL_MAX_NCHANNELS", "")
    if channels.isdigit() and int(channels) < 8:
        factor *= float(environ.get("STANDIN_FEW_CHANNELS_FACTOR", "0.985"))
    if int(settings.get("--ep-size", 1) or 1) > 1:
        factor *= float(environ.get("STANDIN_EP_FACTOR", "1.0"))
    return factor


class State(object):
    def __init__(self, args, settings, faults):
        self.args = args
        self.faults = faults
        self.ready_at = time.time() + float(os.environ.get("STANDIN_LOAD_SECONDS", "2"))
        base = float(os.environ.get("STANDIN_BASE_TOK_S", "91.0"))
        accept = float(os.environ.get("STANDIN_EAGLE_ACCEPT_LEN", "2.4")) if args.speculative_algorithm else 0.0
        rate = base * (accept * 0.75 if accept else 1.0) * rate_factor(settings, os.environ)
        self.tok_s = rate * float(faults.get("tok_s_factor", 1.0))
        self.accept = accept
        self.last_gen_throughput = None
        # Small noise, the same for the same settings and the n-th request: STANDIN_NOISE is its half-width (fraction).
        self.noise = float(os.environ.get("STANDIN_NOISE", "0.005"))
        self.seed = json.dumps([sorted((k, str(v)) for k, v in settings.items() if k not in ("--port", "--host")),
                                sorted((k, v) for k, v in os.environ.items() if k.startswith("NCCL_"))])
        self.requests = 0

    def next_rate(self):
        self.requests += 1
        if not self.noise:
            return self.tok_s
        rng = random.Random("%s|%d" % (self.seed, self.requests))
        return self.tok_s * (1.0 + rng.uniform(-self.noise, self.noise))

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
            rate = state.next_rate()
            time.sleep(min(tokens / rate, 3.0))
            state.last_gen_throughput = round(rate, 2)
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
    settings = start_up(args)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(State(args, settings, faults)))
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    log("serving on %s:%d" % (args.host, args.port))
    server.serve_forever()


if __name__ == "__main__":
    main()
