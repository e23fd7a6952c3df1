#!/usr/bin/env python3
"""Start llama.cpp's OpenAI-compatible HTTP server (from the `xllamacpp` wheel) and keep it up
until SIGTERM or SIGINT.

The wheel has no command line of its own, so this launcher builds `xllamacpp.CommonParams`
from a few flags named like llama-server's, starts `xllamacpp.Server`, prints one line with
the address on stdout, and then sleeps until it is told to stop. Run it with the venv that
scripts/install-engine.sh creates (`.cache/venv/bin/python`).
"""

import argparse
import os
import signal
import sys
import threading


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", "-m", required=True, help="path to a GGUF file")
    p.add_argument("--alias", "-a", default=None, help="model name served by /v1/models")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--ctx", "-c", type=int, default=4096, help="total context (split across slots)")
    p.add_argument("--parallel", "-np", type=int, default=4, help="number of slots")
    p.add_argument("--threads", "-t", type=int, default=1, help="CPU threads (1 is steadiest)")
    p.add_argument("--metrics", action="store_true", help="enable /metrics (Prometheus text)")
    p.add_argument("--no-prompt-cache", action="store_true", help="disable the prompt cache")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isfile(args.model):
        print(f"llamacpp-server: model file not found: {args.model}", file=sys.stderr)
        return 2

    stop = threading.Event()

    def on_signal(signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    if args.alias:
        params.model_alias = {args.alias}
    params.n_ctx = args.ctx
    params.n_parallel = args.parallel
    params.hostnames = [args.host]
    params.port = args.port
    params.endpoint_metrics = bool(args.metrics)
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    if args.no_prompt_cache:
        params.cache_prompt = False

    server = xllamacpp.Server(params)
    print(f"llamacpp-server: listening on http://{args.host}:{args.port}", flush=True)

    # Wake up now and then so that signals are handled promptly on every Python version.
    while not stop.wait(0.2):
        pass
    print("llamacpp-server: stopping", flush=True)
    del server
    # The server's threads are native; leave without waiting for interpreter shutdown hooks.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
