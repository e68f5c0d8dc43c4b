"""Stand-in for `python -m sglang.bench_one_batch_server --base-url ...` (test double; see ../README.md).

Prints the block and appends the JSON line that sglang 0.5.9's run_one_case does.
"""
import argparse
import json
import sys
import time
import urllib.request


def call(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read() or b"{}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", "--model-path", dest="model")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--batch-size", type=int, nargs="+", default=[1])
    parser.add_argument("--input-len", type=int, nargs="+", default=[1024])
    parser.add_argument("--output-len", type=int, nargs="+", default=[16])
    parser.add_argument("--result-filename", default="result.jsonl")
    parser.add_argument("--run-name", default="default")
    args = parser.parse_known_args()[0]
    url = args.base_url.rstrip("/")
    call(url + "/get_server_info")
    for batch, ilen, olen in [(b, i, o) for b in args.batch_size for i in args.input_len for o in args.output_len]:
        call(url + "/flush_cache", {})
        tic = time.perf_counter()
        call(url + "/generate", {"input_ids": [[0] * ilen] * batch, "sampling_params": {"max_new_tokens": olen}})
        latency = time.perf_counter() - tic
        info = call(url + "/get_server_info")
        state = info.get("internal_states", [{}])[0]
        last_gen = state.get("last_gen_throughput") or -1
        acc = state.get("avg_spec_accept_length") or -1
        ttft = min(0.05, latency / 2)
        input_tp = batch * ilen / ttft
        output_tp = batch * olen / (latency - ttft)
        print("batch size: %d" % batch)
        print("input_len: %d" % ilen)
        print("output_len: %d" % olen)
        print("latency: %.2f s" % latency)
        print("input throughput: %.2f tok/s" % input_tp)
        if olen != 1:
            print("output throughput: %.2f tok/s" % output_tp)
        print("last_ttft: %.2f s" % ttft)
        print("last generation throughput: %.2f tok/s" % last_gen)
        if acc > 0:
            print("acc_length: %.2f " % acc)
        with open(args.result_filename, "a") as fout:
            fout.write(json.dumps({
                "run_name": args.run_name, "batch_size": batch, "input_len": ilen, "output_len": olen,
                "latency": round(latency, 4), "input_throughput": round(input_tp, 2),
                "output_throughput": round(output_tp, 2), "overall_throughput": round(batch * (ilen + olen) / latency, 2),
                "last_ttft": round(ttft, 4), "last_gen_throughput": round(last_gen, 2), "acc_length": round(acc, 2),
                "cache_hit_rate": None}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
