"""Shared by the Python contenders: the RESULT line the harness parses (on stderr)."""
import resource
import sys
import time


def now():
    return time.perf_counter()


def result(**pairs):
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    text = " ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in pairs.items())
    sys.stdout.flush()
    print(f"RESULT {text} rss_kib={rss}", file=sys.stderr, flush=True)


def lines(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]
