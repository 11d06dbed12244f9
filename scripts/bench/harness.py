"""Runs the contenders of scripts/bench alternately and prints medians, ranges, ratios and peak RSS.

Called by run_all.sh with the paths it prepared (environment variables, see `E` below). Each
workload runs every contender once as a warm-up, then RUNS rounds; in round r the contenders start
at position r, so none is always first or last. A contender is one command; its rows are figures read
from one run: the in-process rate it reports on stderr (`RESULT rate=... rss_kib=...`), or the
whole-process rate (units of work / wall time from fork to exit, measured by `runner`, a small C
launcher, so that neither Python's fork nor its pages are counted). Peak RSS is the child's
ru_maxrss from wait4 in `runner`. Results go to stdout (Markdown) and to $BENCH_OUT/results.json.

Each workload has a stable key and each check (a ratio, a peak RSS, the start-up time ratio) says
whether higher or lower is better, so that `harness.py --compare BASELINE CURRENT` can tell a
regression from noise-free drift: it fails when a check moved the wrong way by more than the
tolerance (20 %: a higher-is-better ratio below 0.8× its baseline, a lower-is-better figure above
1.25× its baseline, plus its `slack` if it has one: thread counts may grow by 8 more). `run_all.sh --check` runs a short benchmark and this comparison.
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

E = os.environ
RUNS = int(E.get("BENCH_RUNS", "5"))
EXPLICIT_RUNS = "BENCH_RUNS" in E
# Comparing, saving a baseline or being imported (by test_harness.py) needs none of the run's environment.
COMPARING = sys.argv[1:2] in (["--compare"], ["--save-baseline"]) or __name__ != "__main__"
OUT = E.get("BENCH_OUT", "") if COMPARING else E["BENCH_OUT"]
WORK = E.get("BENCH_WORK", "") if COMPARING else E["BENCH_WORK"]
BIN = E.get("BENCH_BIN", "") if COMPARING else E["BENCH_BIN"]  # directory with c_verify, c_pin, c_https and the Swift products
HERE = os.path.dirname(os.path.abspath(__file__))
PY = E.get("BENCH_PYTHON", sys.executable)
AT = "1893456000"  # 2030-01-01T00:00:00Z
AT_TEXT = "2030-01-01T00:00:00Z"
HOST = "bench.test"
STARTED = time.monotonic()
LOG = None if COMPARING else open(os.path.join(OUT, "runs.log"), "a")


def mtls(*args):
    return [os.path.join(BIN, "mtls"), *args]


def bench(*args):
    return [os.path.join(BIN, "mtls-bench"), *args]


def c(name, *args):
    return [os.path.join(BIN, name), *args]


def py(script, *args):
    return [PY, os.path.join(HERE, script), *args]


class Contender:
    """One command and the rows it yields. rows: [(label, kind)] with kind "rate" (reported in-process
    rate), "mb_s" (reported MB/s), "wall" (units / whole-process seconds). repeat: the command runs
    that many times per sample (for short processes); units count all of them."""

    def __init__(self, name, cmd, rows, units=1, repeat=1, env=None, stdout=None, shell=False, after=None, warm_cmd=None, expect=0,
                 sample=False, rss="runner", check=None):
        self.name, self.cmd, self.rows, self.units, self.repeat = name, cmd, rows, units, repeat
        self.env, self.stdout, self.shell, self.after, self.warm_cmd, self.expect = env, stdout, shell, after, warm_cmd, expect
        # sample: watch the command's processes in /proc while it runs (peak threads and processes,
        # see `Watch`); rss: "runner" (wait4's ru_maxrss: exact for one process, the largest one for
        # several), "sum_hwm" (the sum of each process's own peak, VmHWM: for a few long-lived
        # processes such as shards) or "peak_sum" (the largest sum of VmRSS over the processes alive
        # at one sample: for many short-lived ones). check: called with the stdout path after each
        # run with whether it was the warm-up; returns an error message when the run's output is wrong
        # (the benchmark then stops).
        self.sample, self.rss, self.check = sample, rss, check


class Watch:
    """Samples the process group of a running command in /proc every INTERVAL seconds: the most
    threads (the sum of `Threads:` over its processes) and processes alive at once, the largest sum
    of VmRSS at one sample, and the last VmHWM seen of every process. The command's own launcher
    (`runner`, one thread and a few hundred KiB) is left out. Linux keeps no peak thread count, so
    this is a sample: threads that live less than the interval may be missed, but a worker thread
    that lives as long as its probes (hundreds of milliseconds at least) is not."""

    INTERVAL = float(E.get("BENCH_SAMPLE_MS", "2")) / 1000

    def __init__(self, group, skip):
        self.group, self.skip = group, skip
        self.threads = self.processes = self.rss_sum = 0
        self.hwm = {}
        self.samples = 0

    def members(self):
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == self.skip:
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[2]) == self.group:  # pgrp
                found.append(int(name))
        return found

    def sample(self, pids):
        threads = rss = alive = 0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/status", "rb") as f:
                    status = f.read()
            except OSError:
                continue
            fields = dict(line.split(b":", 1) for line in status.splitlines() if b":" in line)
            if b"Threads" not in fields or b"VmRSS" not in fields:
                continue  # a zombie: exited, not yet reaped
            alive += 1
            threads += int(fields[b"Threads"])
            rss += int(fields[b"VmRSS"].split()[0])
            self.hwm[pid] = int(fields[b"VmHWM"].split()[0])
        self.samples += 1
        self.threads = max(self.threads, threads)
        self.processes = max(self.processes, alive)
        self.rss_sum = max(self.rss_sum, rss)

    def run(self, process):
        # The member list is refreshed every sample when the command forks (peers), else every 50 ms.
        pids, scanned, every = [], 0.0, 0.0
        while process.poll() is None:
            now = time.monotonic()
            if now - scanned >= every:
                fresh = self.members()
                every = 0.0 if len(fresh) > 8 or len(set(fresh) - set(pids)) > 1 else 0.05
                pids, scanned = fresh, now
            self.sample(pids)
            time.sleep(self.INTERVAL)


def run_once(contender, warm=False):
    """Returns ({row label: value}, peak RSS KiB, {"threads": …, "processes": …} or None) of one
    sample. Every command runs under `runner`, which times it from fork to exit and reads its peak
    RSS from wait4; a sampled contender is watched in /proc meanwhile (`Watch`)."""
    cmd = contender.warm_cmd if (warm and contender.warm_cmd) else contender.cmd
    argv = ["sh", "-c", cmd] if contender.shell else list(cmd)
    env = dict(os.environ, **(contender.env or {}))
    measured = os.path.join(OUT, "runner.txt")
    err_path = os.path.join(OUT, "last.err")
    wall = 0.0
    rss = 0
    reported = {}
    watched = None
    for _ in range(contender.repeat):
        out = open(contender.stdout, "wb") if contender.stdout else subprocess.DEVNULL
        with open(err_path, "wb") as err:
            if contender.sample:
                # Its own process group, so that every process the command starts can be found.
                process = subprocess.Popen([os.path.join(BIN, "runner"), measured, *argv], stdout=out, stderr=err, env=env, start_new_session=True)
                watch = Watch(process.pid, process.pid)
                watch.run(process)
            else:
                process = subprocess.run([os.path.join(BIN, "runner"), measured, *argv], stdout=out, stderr=err, env=env)
        if out is not subprocess.DEVNULL:
            out.close()
        text = open(err_path, "rb").read().decode(errors="replace")
        if process.returncode != contender.expect:
            raise SystemExit(f"{contender.name}: exit {process.returncode}\n$ {shlex.join(argv)}\n{text[-3000:]}")
        if contender.check:
            problem = contender.check(warm)
            if problem:
                raise SystemExit(f"{contender.name}: {problem}\n$ {shlex.join(argv)}\n{text[-3000:]}")
        seconds, maxrss = open(measured).read().split()
        if contender.sample:
            maxrss = {"runner": int(maxrss), "sum_hwm": sum(watch.hwm.values()), "peak_sum": watch.rss_sum}[contender.rss]
            watched = {"threads": max(watch.threads, (watched or {}).get("threads", 0)), "processes": max(watch.processes, (watched or {}).get("processes", 0)), "samples": watch.samples}
        wall += float(seconds)
        for line in text.splitlines():
            if line.startswith("RESULT "):
                reported = dict(pair.split("=", 1) for pair in line.split()[1:])
        rss = max(rss, int(maxrss))
        seen = f"\tthreads={watched['threads']} processes={watched['processes']} samples={watched['samples']}" if watched else ""
        LOG.write(f"{contender.name}\t{float(seconds):.4f}\t{maxrss}{seen}\t{text.strip().splitlines()[-1] if text.strip() else ''}\n")
        LOG.flush()
    if contender.after:
        contender.after()
    values = {}
    for label, kind in contender.rows:
        if kind == "wall":
            values[label] = contender.units * contender.repeat / wall
        else:
            if kind not in reported:
                raise SystemExit(f"{contender.name}: no {kind} in its RESULT line")
            values[label] = float(reported[kind])
    return values, rss, watched


def workload(key, title, unit, contenders, ratios, notes=(), rss_limits=(), runs=None, thread_limits=()):
    """Runs the contenders alternately; prints and returns the table. `key` names the workload
    across runs (titles carry counts that the knobs change). `ratios`: (label, numerator row,
    denominator row, target or None[, guarded]), higher is better — `guarded` False for a ratio
    between two peers that the regression guard reports but never fails on; `rss_limits`: (label, row, MiB), lower is
    better; `thread_limits`: (label, row, threads), lower is better, for sampled contenders (the
    largest peak of the runs). `runs`: more rounds for workloads whose samples last only tens of milliseconds, where
    one scheduling hiccup on a busy machine moves a sample by half (BENCH_RUNS, when set, applies to
    every workload); a negative `runs` is a cap instead, for workloads whose samples last long
    (BENCH_RUNS, when set, still applies)."""
    began = time.monotonic()
    if runs is not None and runs < 0:
        runs = RUNS if EXPLICIT_RUNS else min(-runs, RUNS)
    else:
        runs = RUNS if (EXPLICIT_RUNS or runs is None) else max(runs, RUNS)
    for contender in contenders:
        run_once(contender, warm=True)
    samples = {c.name: [] for c in contenders}
    for r in range(runs):
        order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
        for contender in order:
            samples[contender.name].append(run_once(contender))
    table = []
    medians = {}
    bests = {}
    sampled = any(c.sample for c in contenders)
    for contender in contenders:
        rss = statistics.median(s[1] for s in samples[contender.name])
        watched = [s[2] for s in samples[contender.name] if s[2]]
        for label, _ in contender.rows:
            values = [s[0][label] for s in samples[contender.name]]
            median = statistics.median(values)
            medians[label] = median
            bests[label] = max(values)
            row = {"row": label, "median": median, "min": min(values), "max": max(values), "rss_kib": rss, "values": values,
                   "rss_max_kib": max(s[1] for s in samples[contender.name]), "rss_how": contender.rss if contender.sample else "runner"}
            if watched:
                row["threads"] = max(w["threads"] for w in watched)
                row["processes"] = max(w["processes"] for w in watched)
            table.append(row)
    head = f"| contender | median ({unit}) | min – max | peak RSS |" + (" peak threads (processes) |" if sampled else "")
    lines = [f"### {title}", "", head, "|---|---:|---:|---:|" + ("---:|" if sampled else "")]
    for row in table:
        threads = (f" {row['threads']:,} ({row['processes']:,}) |" if "threads" in row else " — |") if sampled else ""
        lines.append(f"| {row['row']} | {fmt(row['median'])} | {fmt(row['min'])} – {fmt(row['max'])} | {row['rss_kib'] / 1024:.1f} MiB |{threads}")
    checks = []
    if ratios or rss_limits or thread_limits:
        lines += ["", "| ratio | of medians | of bests | target | |", "|---|---:|---:|---:|---|"]
    for label, numerator, denominator, target, *flags in ratios:
        guarded = flags[0] if flags else True
        value = medians[numerator] / medians[denominator]
        best = bests[numerator] / bests[denominator]
        met = None if target is None else value >= target
        checks.append({"ratio": label, "value": value, "best": best, "target": target, "met": met, "better": "higher"})
        if not guarded:
            checks[-1]["guarded"] = False
        lines.append(f"| {label} | {value:.2f}× | {best:.2f}× | {'—' if target is None else f'≥ {target:g}×'} | {'' if met is None else ('met' if met else '**missed**')} |")
    for label, row_label, limit_mib in rss_limits:
        row = next(r for r in table if r["row"] == row_label)
        met = row["rss_kib"] / 1024 <= limit_mib
        checks.append({"ratio": label, "value": row["rss_kib"] / 1024, "target": limit_mib, "met": met, "unit": "MiB", "better": "lower"})
        lines.append(f"| {label} | {row['rss_kib'] / 1024:.1f} MiB | | ≤ {limit_mib:g} MiB | {'met' if met else '**missed**'} |")
    for label, row_label, limit in thread_limits:
        row = next(r for r in table if r["row"] == row_label)
        met = row["threads"] <= limit
        # Small counts move by a thread or two between runs (helpers started on demand): the guard
        # allows that many more threads on top of its tolerance (`slack`).
        checks.append({"ratio": label, "value": row["threads"], "target": limit, "met": met, "unit": " threads", "better": "lower", "slack": 8})
        lines.append(f"| {label} | {row['threads']:,} | | ≤ {limit:g} | {'met' if met else '**missed**'} |")
    for note in notes:
        lines += ["", note]
    lines += ["", f"_{runs} runs after a warm-up, contenders alternating; {time.monotonic() - began:.0f} s._", ""]
    text = "\n".join(lines)
    print(text, flush=True)
    RESULTS.append({"key": key, "title": title, "unit": unit, "rows": table, "ratios": checks, "notes": list(notes)})
    return medians, table


def fmt(value):
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


RESULTS = []


def remove(path):
    def go():
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    return go


def verify(alg):
    d = os.path.join(WORK, alg)
    root, inter, ders, pems = f"{d}/root.pem", f"{d}/int.pem", f"{d}/der.list", f"{d}/leaves.list"
    leaves = open(pems).read().split()
    n = len(leaves)
    per_leaf = f"{d}/leaves-30.list"
    with open(per_leaf, "w") as f:
        f.write("\n".join(leaves[:30]) + "\n")
    name = "ECDSA P-256" if alg == "ec" else "RSA-2048"
    contenders = [
        Contender("c-oneshot", c("c_verify", "oneshot", root, inter, ders, AT, HOST), [("C limit, one-shot (parse all three)", "rate")]),
        Contender("c-leaf", c("c_verify", "leaf", root, inter, ders, AT, HOST), [("C limit, parse only the leaf", "rate")]),
        Contender("c-noparse", c("c_verify", "noparse", root, inter, ders, AT, HOST), [("C limit, parse excluded", "rate")]),
        Contender("openssl", ["openssl", "verify", "-CAfile", root, "-untrusted", inter, "-attime", AT, "-purpose", "sslserver", "-x509_strict", "-verify_hostname", HOST, *leaves],
                  [("`openssl verify`, one process", "wall")], units=n),
        Contender("openssl-each", f"xargs -a {shlex.quote(per_leaf)} -n 1 openssl verify -CAfile {shlex.quote(root)} -untrusted {shlex.quote(inter)} -attime {AT} -purpose sslserver -x509_strict -verify_hostname {HOST}",
                  [("`openssl verify`, one process per leaf (30 leaves)", "wall")], units=30, shell=True),
        Contender("mtls-each", f"xargs -a {shlex.quote(per_leaf)} -n 1 {shlex.quote(os.path.join(BIN, 'mtls'))} verify --anchors {shlex.quote(root)} --intermediates {shlex.quote(inter)} --at {AT_TEXT} --host {HOST} >/dev/null",
                  [("`mtls verify`, one process per leaf (30 leaves)", "wall")], units=30, shell=True),
        # The floor of a Swift process: the same OpenSSL calls as `openssl verify`, from Swift, alone
        # and with FoundationEssentials linked (scripts/bench/SwiftFloor).
        Contender("swift-floor-each", f"xargs -a {shlex.quote(per_leaf)} -n 1 {shlex.quote(os.path.join(BIN, 'swift-floor'))} {shlex.quote(root)} {shlex.quote(inter)} {AT} {HOST} >/dev/null",
                  [("Swift floor: the same OpenSSL calls from Swift, one process per leaf (30 leaves)", "wall")], units=30, shell=True),
        Contender("swift-floor-foundation-each", f"xargs -a {shlex.quote(per_leaf)} -n 1 {shlex.quote(os.path.join(BIN, 'swift-floor-foundation'))} {shlex.quote(root)} {shlex.quote(inter)} {AT} {HOST} >/dev/null",
                  [("Swift floor with FoundationEssentials linked, one process per leaf (30 leaves)", "wall")], units=30, shell=True),
        Contender("mtls", mtls("verify", "--batch", *leaves, "--anchors", root, "--intermediates", inter, "--at", AT_TEXT, "--host", HOST),
                  [("`mtls verify --batch`, one process", "wall")], units=n),
        Contender("mtls-inproc", bench("verify", "leaf", root, inter, ders, AT, HOST), [("mtls in-process (TrustEvaluator, parse only the leaf)", "rate")]),
        Contender("mtls-noparse", bench("verify", "noparse", root, inter, ders, AT, HOST), [("mtls in-process, parse excluded", "rate")]),
        Contender("python", py("py_verify.py", root, inter, ders, AT, HOST),
                  [("Python `cryptography`, in-process (parse only the leaf)", "rate"), ("Python `cryptography`, whole process", "wall")], units=n),
    ]
    ratios = [
        ("`mtls verify` / `openssl verify` (one process each)", "`mtls verify --batch`, one process", "`openssl verify`, one process", 1.0),
        ("one `mtls verify` / one `openssl verify` per leaf", "`mtls verify`, one process per leaf (30 leaves)", "`openssl verify`, one process per leaf (30 leaves)", 1.0),
        # The floor's own ratios are between peers (nothing of mtls moves them): reported, not guarded.
        ("Swift floor / `openssl verify` per leaf", "Swift floor: the same OpenSSL calls from Swift, one process per leaf (30 leaves)", "`openssl verify`, one process per leaf (30 leaves)", None, False),
        ("Swift floor with FoundationEssentials / `openssl verify` per leaf", "Swift floor with FoundationEssentials linked, one process per leaf (30 leaves)", "`openssl verify`, one process per leaf (30 leaves)", None, False),
        ("one `mtls verify` / Swift floor with FoundationEssentials per leaf", "`mtls verify`, one process per leaf (30 leaves)", "Swift floor with FoundationEssentials linked, one process per leaf (30 leaves)", None),
        ("mtls in-process / C parse-only-the-leaf", "mtls in-process (TrustEvaluator, parse only the leaf)", "C limit, parse only the leaf", 0.9),
        ("mtls in-process, parse excluded / C parse excluded", "mtls in-process, parse excluded", "C limit, parse excluded", None),
        ("mtls in-process / Python in-process", "mtls in-process (TrustEvaluator, parse only the leaf)", "Python `cryptography`, in-process (parse only the leaf)", 1.0),
        ("`mtls verify --batch` / Python whole process", "`mtls verify --batch`, one process", "Python `cryptography`, whole process", 1.2),
    ]
    return workload(f"verify-{alg}", f"verify, {name}: {n} leaves → intermediate → root (chains/s)", "chains/s", contenders, ratios)


def pin():
    d = os.path.join(WORK, "ec")
    pems, ders = f"{d}/leaves.list", f"{d}/der.list"
    leaves = open(pems).read().split()
    n = len(leaves)
    few = leaves[:20]
    pipeline = " ; ".join(
        f"openssl x509 -in {shlex.quote(p)} -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | openssl enc -base64" for p in few)
    contenders = [
        Contender("c-walk", c("c_pin", "walk", pems), [("C limit, DER walk, in-process (file reads timed)", "rate"), ("C limit, DER walk, whole process", "wall")], units=n),
        Contender("c-walk-mem", c("c_pin", "walk", pems, "mem"), [("C limit, DER walk, in-process, files preloaded", "rate")]),
        Contender("c-x509", c("c_pin", "x509", pems), [("C, `d2i_X509` + `i2d_X509_PUBKEY`, in-process", "rate")]),
        Contender("mtls", mtls("pin", *leaves, "--format", "spki"), [("`mtls pin --format spki`, whole process", "wall")], units=n),
        Contender("mtls-full", mtls("pin", *leaves, "--format", "spki"), [("`mtls pin`, full X.509 parse (`MTLS_PIN_FULL_PARSE=1`), whole process", "wall")],
                  units=n, env={"MTLS_PIN_FULL_PARSE": "1"}),
        Contender("mtls-inproc", bench("pin", "fast", pems), [("mtls in-process (CertificateSummaryReader, file reads timed)", "rate")]),
        Contender("mtls-inproc-mem", bench("pin", "fast", pems, "mem"), [("mtls in-process, files preloaded", "rate")]),
        Contender("python-pem", py("py_pin.py", "pem", pems), [("Python `cryptography`, PEM, in-process", "rate"), ("Python `cryptography`, PEM, whole process", "wall")], units=n),
        Contender("python-der", py("py_pin.py", "der", ders), [("Python `cryptography`, DER, in-process", "rate")]),
        Contender("pipeline", pipeline, [("four-process shell pipeline (20 files)", "wall")], units=len(few), shell=True),
    ]
    ratios = [
        ("`mtls pin` whole process / C DER walk in-process (reads timed)", "`mtls pin --format spki`, whole process", "C limit, DER walk, in-process (file reads timed)", 0.5),
        ("`mtls pin` whole process / C DER walk in-process (preloaded)", "`mtls pin --format spki`, whole process", "C limit, DER walk, in-process, files preloaded", None),
        ("`mtls pin` / C DER walk, whole process each", "`mtls pin --format spki`, whole process", "C limit, DER walk, whole process", None),
        ("mtls in-process / C in-process (reads timed)", "mtls in-process (CertificateSummaryReader, file reads timed)", "C limit, DER walk, in-process (file reads timed)", None),
        ("`mtls pin` / Python PEM, whole process each", "`mtls pin --format spki`, whole process", "Python `cryptography`, PEM, whole process", 2.0),
        ("mtls in-process / Python PEM in-process", "mtls in-process (CertificateSummaryReader, file reads timed)", "Python `cryptography`, PEM, in-process", 2.0),
        ("`mtls pin` / four-process pipeline (whole job)", "`mtls pin --format spki`, whole process", "four-process shell pipeline (20 files)", 1000.0),
        ("`mtls pin`: fast path / full X.509 parse", "`mtls pin --format spki`, whole process", "`mtls pin`, full X.509 parse (`MTLS_PIN_FULL_PARSE=1`), whole process", None),
    ]
    return workload("pin", f"pin: SPKI SHA-256 of {n} PEM leaves, ECDSA P-256 (pins/s)", "pins/s", contenders, ratios, runs=11)


def pkcs12():
    d = os.path.join(WORK, "ec")
    p12dir = os.path.join(WORK, "p12")
    os.makedirs(p12dir, exist_ok=True)
    source = f"{p12dir}/source.p12"
    subprocess.run(["openssl", "pkcs12", "-export", "-inkey", f"{d}/client.key", "-in", f"{d}/client.pem", "-certfile", f"{d}/chain.pem",
                    "-passout", "pass:bench", "-out", source], check=True)
    env = {"P12_PASSWORD": "bench"}
    reps = 10
    contenders = [
        Contender("openssl-export", ["openssl", "pkcs12", "-export", "-inkey", f"{d}/client.key", "-in", f"{d}/client.pem", "-certfile", f"{d}/chain.pem",
                                     "-passout", "env:P12_PASSWORD", "-out", f"{p12dir}/openssl.p12"], [("`openssl pkcs12 -export`", "wall")], repeat=reps, env=env),
        Contender("mtls-export", mtls("export", "--cert", f"{d}/client.pem", "--key", f"{d}/client.key", "--chain", f"{d}/chain.pem", "--out", f"{p12dir}/mtls.p12",
                                      "--password", "env:P12_PASSWORD", "--force"), [("`mtls export`", "wall")], repeat=reps, env=env),
        Contender("openssl-parse", ["openssl", "pkcs12", "-in", source, "-passin", "env:P12_PASSWORD", "-nodes", "-out", f"{p12dir}/openssl.pem"],
                  [("`openssl pkcs12 -in … -nodes`", "wall")], repeat=reps, env=env),
        Contender("mtls-import", mtls("import", source, "--password", "env:P12_PASSWORD", "--out-dir", f"{p12dir}/imported", "--force"),
                  [("`mtls import … --out-dir`", "wall")], repeat=reps, env=env),
    ]
    ratios = [
        ("write: `mtls export` / `openssl pkcs12 -export`", "`mtls export`", "`openssl pkcs12 -export`", 1.0),
        ("parse: `mtls import` / `openssl pkcs12 -in`", "`mtls import … --out-dir`", "`openssl pkcs12 -in … -nodes`", 1.0),
    ]
    notes = ["Both write AES-256-CBC/PBKDF2 (2,048 iterations) with a SHA-256 MAC (2,048 iterations); the file holds an ECDSA P-256 key, its leaf and a two-certificate chain. Whole processes, 10 per sample."]
    return workload("pkcs12", "PKCS#12: parse and write, whole process (files/s)", "files/s", contenders, ratios, notes, runs=9)


def https(key, label, ports, ca):
    plain, resuming = ports
    n_keep, n_conn = int(E.get("BENCH_KEEPALIVE", "20000")), int(E.get("BENCH_CONNECTIONS", "200"))
    base = f"https://localhost:{plain}"

    def curl_config(name, url, count):
        path = os.path.join(WORK, f"curl-{name}.cfg")
        with open(path, "w") as f:
            for _ in range(count):
                f.write(f'url = "{url}"\noutput = "/dev/null"\n')
        return path

    keep_cfg = curl_config(f"{plain}-keep", f"{base}/small", n_keep)
    full_cfg = curl_config(f"{plain}-full", f"{base}/small", n_conn)
    resumed_cfg = curl_config(f"{resuming}-resumed", f"https://localhost:{resuming}/small", n_conn)
    curl = ["curl", "-s", "--fail", "--cacert", ca]
    results = {}
    keepalive = [
        Contender("c", c("c_https", "keepalive", str(plain), ca, "/small", str(n_keep)), [("C limit (libssl, one connection)", "rate")]),
        Contender("mtls", bench("https", "keepalive", str(plain), ca, "/small", str(n_keep)), [("mtls `HTTPSClient` (in-process)", "rate")]),
        Contender("curl", [*curl, "-K", keep_cfg], [(f"curl, one process, {n_keep} URLs", "wall")], units=n_keep),
        Contender("python", py("py_https.py", "keepalive", str(plain), ca, "/small", str(n_keep)), [("Python `http.client` (in-process)", "rate")]),
        Contender("wrk", f"wrk -t1 -c1 -d2s {base}/small | awk '/Requests\\/sec/ {{print \"RESULT rate=\" $2 > \"/dev/stderr\"}}'",
                  [("wrk -t1 -c1 (no certificate check)", "rate")], shell=True),
    ]
    results["keepalive"] = workload(f"https-keepalive-{key}", f"HTTPS keep-alive small GETs, {label} ({n_keep} requests, requests/s)", "requests/s", keepalive, [
        ("mtls / C limit", "mtls `HTTPSClient` (in-process)", "C limit (libssl, one connection)", 0.9),
        ("mtls / curl", "mtls `HTTPSClient` (in-process)", f"curl, one process, {n_keep} URLs", 2.0),
        ("mtls / Python", "mtls `HTTPSClient` (in-process)", "Python `http.client` (in-process)", None),
    ], runs=9)
    close = ["-H", "Connection: close"]
    full = [
        Contender("c", c("c_https", "full", str(plain), ca, "/small", str(n_conn)), [("C limit", "rate")]),
        Contender("mtls", bench("https", "full", str(plain), ca, "/small", str(n_conn)), [("mtls `HTTPSClient`", "rate")]),
        Contender("curl", [*curl, *close, "-K", full_cfg], [(f"curl, one process, {n_conn} URLs", "wall")], units=n_conn),
        Contender("python", py("py_https.py", "full", str(plain), ca, "/small", str(n_conn)), [("Python `ssl`", "rate")]),
    ]
    results["full"] = workload(f"https-full-{key}", f"HTTPS new connection per request, full handshakes, {label} ({n_conn} connections, connections/s)", "conn/s", full, [
        ("mtls / C limit", "mtls `HTTPSClient`", "C limit", 0.95),
        ("mtls / curl", "mtls `HTTPSClient`", f"curl, one process, {n_conn} URLs", None),
    ], notes=["The server keeps no session cache and sends no tickets, so every handshake is a full one whatever the client offers."])
    resumed = [
        Contender("c", c("c_https", "resumed", str(resuming), ca, "/small", str(n_conn)), [("C limit", "rate")]),
        Contender("mtls", bench("https", "resumed", str(resuming), ca, "/small", str(n_conn)), [("mtls `HTTPSClient`", "rate")]),
        Contender("curl", [*curl, *close, "-K", resumed_cfg], [(f"curl, one process, {n_conn} URLs", "wall")], units=n_conn),
        Contender("python", py("py_https.py", "resumed", str(resuming), ca, "/small", str(n_conn)), [("Python `ssl` (session=)", "rate")]),
    ]
    results["resumed"] = workload(f"https-resumed-{key}", f"HTTPS new connection per request, resumed sessions, {label} ({n_conn} connections, connections/s)", "conn/s", resumed, [
        ("mtls / C limit resumed", "mtls `HTTPSClient`", "C limit", 0.95),
        ("mtls / curl", "mtls `HTTPSClient`", f"curl, one process, {n_conn} URLs", None),
    ])
    out = os.path.join(WORK, "download.bin")
    big, warm = "/big", "/big64"
    download = [
        Contender("c", c("c_https", "download", str(plain), ca, big, "1", out), [("C limit", "mb_s")], after=remove(out),
                  warm_cmd=c("c_https", "download", str(plain), ca, warm, "1", out)),
        Contender("mtls", bench("https", "download", str(plain), ca, big, "1", out), [("mtls `HTTPSClient` (body sink → file)", "mb_s")], after=remove(out),
                  warm_cmd=bench("https", "download", str(plain), ca, warm, "1", out)),
        Contender("curl", [*curl, "-o", out, f"{base}{big}"], [("curl -o FILE", "wall")], units=1073.741824, after=remove(out),
                  warm_cmd=[*curl, "-o", out, f"{base}{warm}"]),
        Contender("python", py("py_https.py", "download", str(plain), ca, big, "1", out), [("Python `http.client`", "mb_s")], after=remove(out),
                  warm_cmd=py("py_https.py", "download", str(plain), ca, warm, "1", out)),
    ]
    results["download"] = workload(f"https-download-{key}", f"HTTPS 1 GiB body to a file, {label} (MB/s)", "MB/s", download, [
        ("mtls / C limit", "mtls `HTTPSClient` (body sink → file)", "C limit", 0.95),
        ("mtls / curl", "mtls `HTTPSClient` (body sink → file)", "curl -o FILE", None),
    ], notes=["Warm-up with a 64 MiB body; curl's figure includes its start-up (whole process)."],
        rss_limits=[("mtls peak RSS", "mtls `HTTPSClient` (body sink → file)", 12)])
    # What a script does: one process per request, a full handshake each, certificate checked.
    reps = 10
    one = [
        Contender("mtls-probe", mtls("probe", f"{base}/small", "--anchors", ca), [("one `mtls probe URL`", "wall")], repeat=reps),
        Contender("curl-one", [*curl, "-o", "/dev/null", f"{base}/small"], [("one `curl URL`", "wall")], repeat=reps),
    ]
    results["process"] = workload(f"https-process-{key}", f"HTTPS one GET per process, {label} (processes/s)", "processes/s", one, [
        ("one `mtls probe` / one `curl`", "one `mtls probe URL`", "one `curl URL`", 1.0),
    ], notes=[f"Each sample is {reps} processes in a row; both check the certificate against the same root and make a full handshake."], runs=9)
    return results


def fleet(port, count, sample, delay):
    d = os.path.join(WORK, "ec")
    targets = os.path.join(WORK, "fleet-targets.txt")
    with open(targets, "w") as f:
        for i in range(count):
            f.write(f"https://localhost:{port}/fleet/{i}\n")
    sample_targets = os.path.join(WORK, "fleet-sample.txt")
    with open(sample_targets, "w") as f:
        for i in range(sample):
            f.write(f"https://localhost:{port}/fleet/{i}\n")
    instant = os.path.join(WORK, "fleet-instant.txt")
    with open(instant, "w") as f:
        for i in range(count):
            f.write(f"https://localhost:{port}/small?endpoint={i}\n")
    instant_sample = os.path.join(WORK, "fleet-instant-sample.txt")
    with open(instant_sample, "w") as f:
        for i in range(sample):
            f.write(f"https://localhost:{port}/small?endpoint={i}\n")
    common = ["--anchors", f"{d}/root.pem", "--json"]
    contenders = [
        Contender("c64", mtls("probe", "--targets", targets, "--concurrency", "64", *common), [(f"`mtls probe --targets` {count} endpoints, --concurrency 64", "wall")], units=count),
        Contender("c1", mtls("probe", "--targets", sample_targets, "--concurrency", "1", *common), [(f"`mtls probe --targets` one at a time ({sample}-endpoint sample)", "wall")], units=sample),
        Contender("c64-instant", mtls("probe", "--targets", instant, "--concurrency", "64", *common), [(f"no delay: {count} endpoints, --concurrency 64", "wall")], units=count),
        Contender("c1-instant", mtls("probe", "--targets", instant_sample, "--concurrency", "1", *common), [(f"no delay: one at a time ({sample}-endpoint sample)", "wall")], units=sample),
    ]
    serial = f"`mtls probe --targets` one at a time ({sample}-endpoint sample)"
    medians, table = workload("fleet", f"fleet probe: {count} loopback endpoints, each answering after {delay} ms (endpoints/s)", "endpoints/s", contenders, [
        (f"--concurrency 64 / one at a time", f"`mtls probe --targets` {count} endpoints, --concurrency 64", serial, 20.0),
        (f"no delay: --concurrency 64 / one at a time", f"no delay: {count} endpoints, --concurrency 64", f"no delay: one at a time ({sample}-endpoint sample)", None),
    ], notes=[f"One at a time is timed on the first {sample} endpoints: being serial, its rate is that of the whole list. "
              f"Each endpoint is nginx (TLS 1.3, ECDSA) in front of a loopback upstream that answers after {delay} ms, standing in for round trips and server time; "
              "with no delay at all (the last two rows, nginx answering at once) the probes are CPU-bound and two cores cap the speed-up."])
    return medians


def fanout(port, count, delay_ms):
    """Issue 39: a library user's fan-out (`count` concurrent `await client.send` in one task group,
    `mtls-bench fanout`) beside `mtls probe --targets` at `--concurrency count`, on the same
    endpoints answering `delay_ms` late; each send and each probe makes its own full handshake."""
    d = os.path.join(WORK, "ec")
    base = f"https://localhost:{port}/fleet/fanout?delay_ms={delay_ms}"
    urls = [f"{base}&i={i}" for i in range(count)]
    targets = write_lines(os.path.join(WORK, f"fanout-{count}.txt"), urls)
    out = os.path.join(WORK, "fanout-probe.jsonl")
    library = f"library: {count} concurrent `await client.send` (task group)"
    fleet = f"`mtls probe --targets`, --concurrency {count}"
    contenders = [
        Contender("fanout", bench("fanout", base, f"{d}/root.pem", str(count)), [(library, "wall")], units=count, sample=True),
        Contender("fanout-probe", mtls("probe", "--targets", targets, "--concurrency", str(count), "--anchors", f"{d}/root.pem", "--json"), [(fleet, "wall")],
                  units=count, stdout=out, sample=True, check=answered([out], urls)),
    ]
    workload("fanout", f"fan-out: {count} sends at once to loopback endpoints answering after {delay_ms} ms (requests/s)", "requests/s", contenders, [
        ("library fan-out / probe --targets", library, fleet, 0.9),
    ], thread_limits=[("library fan-out, peak threads", library, 16)], notes=[
        "Both run on the same engine: the library's async `send` awaits its socket on the engine's event loops, and `probe --targets` is a task group over "
        "`LoginSession.send`. Each send has a client of its own, so each makes a full TLS 1.3 handshake, as each probe does."], runs=-3)


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def answered(outputs, targets):
    """A check for `mtls probe --json`: every target of `targets` has exactly one JSON line in the
    files `outputs`, whose last HTTP exchange has status 200. Returns a message naming what is
    missing or wrong, or None."""
    def check(warm):
        if warm:
            return None
        seen, bad = {}, []
        for path in outputs:
            for line in open(path, errors="replace"):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    bad.append(f"not JSON: {line[:120]!r}")
                    continue
                target = obj.get("target")
                http = obj.get("http") or []
                status = http[-1].get("status") if http else None
                seen[target] = seen.get(target, 0) + 1
                if status != 200:
                    bad.append(f"{target}: status {status}, error {json.dumps(obj.get('error'))[:200]}")
        missing = [t for t in targets if t not in seen]
        twice = [t for t, n in seen.items() if n > 1]
        if not (bad or missing or twice):
            return None
        return (f"{len(targets) - len(missing) - len(bad)} of {len(targets)} endpoints answered 200; "
                f"{len(missing)} missing (first: {missing[:3]}), {len(bad)} not 200 (first: {bad[:3]}), {len(twice)} twice")
    return check


def fleet_scale(port, count, concurrency, shards, delay):
    """Issue 20 item 4: `count` slow endpoints from ONE process at `--concurrency`, against the
    targets ≤ 64 threads and ≤ 128 MiB; and the same list split with `--shard I/N` over `shards`
    processes, each at concurrency/shards."""
    d = os.path.join(WORK, "ec")
    urls = [f"https://localhost:{port}/fleet/{i}" for i in range(count)]
    targets = write_lines(os.path.join(WORK, f"fleet-scale-{count}.txt"), urls)
    warm = write_lines(os.path.join(WORK, "fleet-scale-warm.txt"), urls[:min(count, concurrency)])
    common = ["--anchors", f"{d}/root.pem", "--json"]
    out = os.path.join(WORK, "fleet-scale.jsonl")
    one = f"`mtls probe --targets`, one process, --concurrency {concurrency}"
    per = max(1, concurrency // shards)
    outs = [os.path.join(WORK, f"fleet-shard-{i}.jsonl") for i in range(1, shards + 1)]
    mtls_path = shlex.quote(os.path.join(BIN, "mtls"))

    def sharded(target_file):
        jobs = " ".join(f"{mtls_path} probe --targets {shlex.quote(target_file)} --shard {i}/{shards} --concurrency {per} --anchors {shlex.quote(d)}/root.pem --json "
                        f">{shlex.quote(outs[i - 1])} & pids=\"$pids $!\";" for i in range(1, shards + 1))
        return f"pids=; {jobs} fail=0; for pid in $pids; do wait $pid || fail=1; done; exit $fail"
    many = f"`mtls probe --targets --shard I/{shards}`, {shards} processes, --concurrency {per} each"
    contenders = [
        Contender("scale", mtls("probe", "--targets", targets, "--concurrency", str(concurrency), *common), [(one, "wall")], units=count,
                  stdout=out, warm_cmd=mtls("probe", "--targets", warm, "--concurrency", str(concurrency), *common),
                  sample=True, rss="runner", check=answered([out], urls)),
        Contender("shards", sharded(targets), [(many, "wall")], units=count, shell=True, warm_cmd=sharded(warm),
                  sample=True, rss="sum_hwm", check=answered(outs, urls)),
    ]
    ratios = [("one process / shards", one, many, None)]
    # BENCH_FLEET_BASELINE: another build of `mtls` (an earlier commit's), run alternately with this
    # one on the same list, so that "at least as fast as before" is one run's ratio, not two runs'
    # figures taken on a machine whose load changed between them.
    baseline = E.get("BENCH_FLEET_BASELINE")
    if baseline:
        label = E.get("BENCH_FLEET_BASELINE_LABEL", baseline)
        before = f"{one}, {label}"
        base_out = os.path.join(WORK, "fleet-scale-baseline.jsonl")
        base = [baseline, "probe", "--targets"]
        contenders.insert(1, Contender("scale-baseline", [*base, targets, "--concurrency", str(concurrency), *common], [(before, "wall")], units=count,
                                       stdout=base_out, warm_cmd=[*base, warm, "--concurrency", str(concurrency), *common],
                                       sample=True, rss="runner", check=answered([base_out], urls)))
        ratios.append((f"one process / {label}", one, before, 1.0))
    workload("fleet-scale", f"fleet at scale: {count:,} loopback endpoints, each answering after {delay} ms (endpoints/s)", "endpoints/s", contenders,
             ratios, rss_limits=[("one process, peak RSS", one, 128)], thread_limits=[("one process, peak threads", one, 64)], notes=[
        f"Every run is checked: {count:,} distinct URLs, each with exactly one JSON line whose last response is a 200 (the run stops otherwise). "
        f"Peak RSS of the one process is wait4's ru_maxrss; of the {shards} shards, the sum of each process's own peak (VmHWM). "
        f"Peak threads: the most threads alive at once (the sum of `Threads:` in /proc/PID/status over the command's processes, "
        f"sampled every {Watch.INTERVAL * 1000:g} ms); in brackets the processes. The warm-up probes the first {min(count, concurrency):,} endpoints."],
        runs=-int(E.get("BENCH_FLEET_SCALE_RUNS", "3")))


def fleet_peers(port, sample, testssl_sample, delay):
    """sslyze's and testssl.sh's mass-scan modes on samples of the same fleet, beside `mtls probe`
    on sslyze's sample. Neither makes one GET: each scans the TLS set-up of every endpoint, so
    their rates are those of a heavier job, reported for what a fleet operator would run instead.
    testssl.sh spends seconds of CPU on every endpoint, hence its smaller sample."""
    d = os.path.join(WORK, "ec")
    root = f"{d}/root.pem"
    urls = [f"https://localhost:{port}/fleet/{i}" for i in range(sample)]
    targets = write_lines(os.path.join(WORK, f"fleet-peers-{sample}.txt"), urls)
    out = os.path.join(WORK, "fleet-peers.jsonl")
    # sslyze scans servers (host:port), not URLs: the sample is the same server `sample` times,
    # which it scans as so many servers (it does not merge them).
    sslyze_targets = write_lines(os.path.join(WORK, f"fleet-peers-sslyze-{sample}.txt"), [f"localhost:{port}"] * sample)
    sslyze_warm = write_lines(os.path.join(WORK, "fleet-peers-sslyze-warm.txt"), [f"localhost:{port}"] * 2)
    sslyze_out = os.path.join(WORK, "fleet-sslyze.json")
    sslyze = E.get("BENCH_SSLYZE", "sslyze")

    def sslyze_cmd(target_file):
        return [sslyze, "--certinfo", f"--certinfo_ca_file={root}", "--mozilla_config=disable", "--quiet", f"--json_out={sslyze_out}", f"--targets_in={target_file}"]

    def sslyze_check(warm):
        if warm:
            return None
        results = json.load(open(sslyze_out))["server_scan_results"]
        done = [r for r in results if r.get("scan_status") == "COMPLETED"
                and (r.get("scan_result") or {}).get("certificate_info", {}).get("status") == "COMPLETED"]
        return None if len(done) == sample else f"sslyze completed {len(done)} of {sample} scans ({len(results)} results)"
    # testssl.sh: one command line per endpoint in a --file, run --parallel (MAX_PARALLEL processes
    # at once, its default 20); -S: the server's default protocol and cipher, its certificate and
    # chain checked against --add-ca, OCSP stapling, session resumption and the like.
    testssl = E.get("BENCH_TESTSSL", "testssl")
    testssl_out = os.path.join(WORK, "fleet-testssl.json")
    testssl_opts = f"--quiet --server-defaults --add-ca {root} --warnings off --color 0"
    testssl_file = write_lines(os.path.join(WORK, f"fleet-peers-testssl-{testssl_sample}.txt"), [f"{testssl_opts} {u}" for u in urls[:testssl_sample]])
    testssl_warm = write_lines(os.path.join(WORK, "fleet-peers-testssl-warm.txt"), [f"{testssl_opts} {u}" for u in urls[:2]])

    def testssl_cmd(target_file):
        # The parent gathers its children's findings into one flat JSON list.
        return f"rm -f {shlex.quote(testssl_out)}; exec {shlex.quote(testssl)} --parallel --jsonfile {shlex.quote(testssl_out)} --file {shlex.quote(target_file)} >/dev/null"

    def testssl_check(warm):
        if warm:
            return None
        findings = json.load(open(testssl_out))
        trusted = sum(1 for f in findings if f.get("id") == "cert_chain_of_trust" and f.get("severity") == "OK")
        fatal = [f for f in findings if f.get("severity") == "FATAL"]
        return None if trusted == testssl_sample and not fatal else f"testssl.sh: {trusted} of {testssl_sample} chains of trust OK, {len(fatal)} fatal: {fatal[:2]}"
    mtls_row = f"`mtls probe --targets`, {sample} endpoints, --concurrency {min(sample, 1000)} (one GET each)"
    sslyze_row = f"sslyze --certinfo, {sample} endpoints (its mass scan: 10 servers at once)"
    testssl_row = f"testssl.sh --parallel --server-defaults, {testssl_sample} endpoints ({min(testssl_sample, 20)} at once)"
    contenders = [
        Contender("mtls", mtls("probe", "--targets", targets, "--concurrency", str(min(sample, 1000)), "--anchors", root, "--json"), [(mtls_row, "wall")],
                  units=sample, stdout=out, sample=True, check=answered([out], urls)),
        Contender("sslyze", sslyze_cmd(sslyze_targets), [(sslyze_row, "wall")], units=sample, warm_cmd=sslyze_cmd(sslyze_warm),
                  sample=True, rss="peak_sum", check=sslyze_check),
        Contender("testssl", testssl_cmd(testssl_file), [(testssl_row, "wall")], units=testssl_sample, shell=True, warm_cmd=testssl_cmd(testssl_warm),
                  sample=True, rss="peak_sum", check=testssl_check),
    ]
    workload("fleet-peers", f"fleet peers: sslyze and testssl.sh on samples of the same endpoints (endpoints/s)", "endpoints/s", contenders, [
        ("mtls / sslyze", mtls_row, sslyze_row, None),
        ("mtls / testssl.sh", mtls_row, testssl_row, None),
    ], notes=[
        "Per endpoint, `mtls probe` makes one TLS 1.3 handshake, checks the chain and the name and makes one GET (answered after "
        f"{delay} ms). sslyze (`--certinfo --certinfo_ca_file ROOT --mozilla_config=disable`) makes the handshakes of its certificate "
        "scan (the chain with and without SNI, its trust stores and the given root, OCSP stapling) and no GET; its endpoints are "
        "host:port, so it scans the one server as many times. testssl.sh (`--file --parallel`, one `--server-defaults` command line per "
        "URL) runs a bash process per endpoint that starts `openssl s_client` and friends dozens of times (protocols, the server's "
        f"picks, certificate, chain against `--add-ca ROOT`, resumption, extensions) and GETs the URL for its HTTP checks. "
        "Their peak RSS and threads are the largest sums over all their processes alive at once, sampled."],
        runs=-int(E.get("BENCH_FLEET_PEERS_RUNS", "2")))


def startup():
    rounds = 5
    results = {"mtls": [], "openssl": []}
    for r in range(rounds):
        for name, cmd in ([("mtls", f"{BIN}/mtls --version"), ("openssl", "openssl version")] if r % 2 == 0 else [("openssl", "openssl version"), ("mtls", f"{BIN}/mtls --version")]):
            path = os.path.join(OUT, "hyperfine.json")
            subprocess.run(["hyperfine", "-N", "--warmup", "5", "--runs", "40", "--export-json", path, cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            data = json.load(open(path))["results"][0]
            results[name].append(statistics.median(data["times"]) * 1000)
    rows = []
    lines = ["### start-up: `mtls --version` and `openssl version`, whole process (ms, lower is better)", "",
             "| contender | median (ms) | min – max of 5 medians |", "|---|---:|---:|"]
    for name in ("mtls", "openssl"):
        values = results[name]
        rows.append({"row": name, "median": statistics.median(values), "min": min(values), "max": max(values), "values": values})
        lines.append(f"| `{'mtls --version' if name == 'mtls' else 'openssl version'}` | {statistics.median(values):.2f} | {min(values):.2f} – {max(values):.2f} |")
    ratio = statistics.median(results["mtls"]) / statistics.median(results["openssl"])
    best = min(results["mtls"]) / min(results["openssl"])
    met = ratio <= STARTUP_TARGET
    lines += ["", "| ratio | of medians | of bests | target | |", "|---|---:|---:|---:|---|", f"| `mtls --version` time / `openssl version` time | {ratio:.2f}× | {best:.2f}× | ≤ {STARTUP_TARGET:g}× | {'met' if met else '**missed**'} |",
              "", "_hyperfine -N, 40 runs after 5 warm-ups, 5 rounds alternating; the figure is the median of the round medians._", ""]
    print("\n".join(lines), flush=True)
    RESULTS.append({"key": "startup", "title": "start-up", "unit": "ms", "rows": rows,
                    "ratios": [{"ratio": "mtls/openssl time", "value": ratio, "best": best, "target": STARTUP_TARGET, "met": met, "better": "lower"}], "notes": []})


STARTUP_TARGET = 1.2


def checks(results):
    """{(workload key, check label): check} of a results.json."""
    found = {}
    for w in results["workloads"]:
        for check in w["ratios"]:
            found[(w.get("key", w["title"]), check["ratio"])] = check
    return found


def compare(baseline_path, current_path, tolerance):
    """Prints each check of CURRENT against BASELINE; returns 1 when one moved the wrong way by more
    than `tolerance` (a fraction), else 0. Only workloads that ran in CURRENT are compared."""
    baseline, current = json.load(open(baseline_path)), json.load(open(current_path))
    before, after = checks(baseline), checks(current)
    ran = {w.get("key", w["title"]) for w in current["workloads"]}
    lines = [f"### Regression check against {os.path.relpath(baseline_path)} (tolerance {tolerance:.0%})", "",
             "| workload | check | baseline | now | change | |", "|---|---|---:|---:|---:|---|"]
    failures = 0
    for (key, label), now in after.items():
        then = before.get((key, label))
        unit = now.get("unit", "×")
        if then is None:
            lines.append(f"| {key} | {label} | — | {now['value']:.2f}{unit} | | new |")
            continue
        change = now["value"] / then["value"] if then["value"] else float("inf")
        if not now.get("guarded", True):
            lines.append(f"| {key} | {label} | {then['value']:.2f}{unit} | {now['value']:.2f}{unit} | {change:.2f}× | reference, not guarded |")
            continue
        if now.get("better", "higher") == "higher":
            worse = change < 1 - tolerance
        else:
            # `slack`: an absolute allowance on top of the tolerance (thread counts).
            worse = now["value"] > then["value"] / (1 - tolerance) + max(now.get("slack", 0), then.get("slack", 0))
        failures += worse
        lines.append(f"| {key} | {label} | {then['value']:.2f}{unit} | {now['value']:.2f}{unit} | {change:.2f}× | {'**regressed**' if worse else 'ok'} |")
    for (key, label) in before:
        if key in ran and (key, label) not in after:
            lines.append(f"| {key} | {label} | {before[(key, label)]['value']:.2f} | — | | not measured now |")
    lines += ["", f"{failures} regression(s)." if failures else "No regression.", ""]
    print("\n".join(lines), flush=True)
    return 1 if failures else 0


def save_baseline(baseline_path, current_path):
    """Writes CURRENT's workloads into BASELINE, replacing those with the same key, keeping others."""
    current = json.load(open(current_path))
    try:
        baseline = json.load(open(baseline_path))
    except FileNotFoundError:
        baseline = {"workloads": []}
    keys = {w.get("key") for w in current["workloads"]}
    kept = [w for w in baseline["workloads"] if w.get("key") not in keys]
    # Only what a comparison reads: the checks (the rows stay in the run's own results.json).
    fresh = [{"key": w.get("key"), "title": w["title"], "ratios": w["ratios"]} for w in current["workloads"]]
    out = {"made": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "runs": current.get("runs"), "knobs": {k: v for k, v in E.items() if k.startswith("BENCH_") and k not in ("BENCH_OUT", "BENCH_BIN", "BENCH_WORK", "BENCH_PYTHON")},
           "workloads": kept + fresh}
    tmp = baseline_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    os.replace(tmp, baseline_path)


def main():
    if sys.argv[1:2] == ["--save-baseline"]:
        if len(sys.argv) != 4:
            raise SystemExit("usage: harness.py --save-baseline BASELINE.json CURRENT.json")
        save_baseline(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1:2] == ["--compare"]:
        if len(sys.argv) != 4:
            raise SystemExit("usage: harness.py --compare BASELINE.json CURRENT.json")
        sys.exit(compare(sys.argv[2], sys.argv[3], float(E.get("BENCH_TOLERANCE", "0.2"))))
    which = sys.argv[1:] or ["startup", "verify", "pin", "pkcs12", "https", "fleet", "fanout"]
    if "startup" in which:
        startup()
    if "pin" in which:
        pin()
    if "pkcs12" in which:
        pkcs12()
    if "verify" in which:
        verify("ec")
        verify("rsa")
    if "https" in which:
        ec_ca, rsa_ca = f"{WORK}/ec/root.pem", f"{WORK}/rsa/root.pem"
        https("tls13", "TLS 1.3, ECDSA P-256", (int(E["PORT_T13"]), int(E["PORT_T13_RESUME"])), ec_ca)
        https("tls12", "TLS 1.2, RSA-2048", (int(E["PORT_T12"]), int(E["PORT_T12_RESUME"])), rsa_ca)
    if "fleet" in which:
        port, delay = int(E["PORT_FLEET"]), int(E.get("BENCH_FLEET_DELAY_MS", "100"))
        if int(E.get("BENCH_FLEET", "1000")) > 0:
            fleet(port, int(E.get("BENCH_FLEET", "1000")), int(E.get("BENCH_FLEET_SAMPLE", "30")), delay)
        fleet_scale(port, int(E.get("BENCH_FLEET_SCALE", "10000")), int(E.get("BENCH_FLEET_CONCURRENCY", "1000")), int(E.get("BENCH_FLEET_SHARDS", "4")), delay)
        if int(E.get("BENCH_FLEET_PEERS", "500")) > 0:
            fleet_peers(port, int(E.get("BENCH_FLEET_PEERS", "500")), int(E.get("BENCH_FLEET_TESTSSL", "10")), delay)
    if "fanout" in which:
        fanout(int(E["PORT_FLEET"]), int(E.get("BENCH_FANOUT", "500")), int(E.get("BENCH_FANOUT_DELAY_MS", "200")))
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump({"runs": RUNS, "seconds": time.monotonic() - STARTED, "workloads": RESULTS}, f, indent=1)


if __name__ == "__main__":
    main()
