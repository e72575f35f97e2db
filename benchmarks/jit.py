"""Compilation cost: first call with an empty Numba cache vs cached start-up, in fresh processes,
from the source tree and from an installed (non-editable) copy of the package.

    benchmarks/run --only jit

Each measurement is a new interpreter that imports loglin, builds a 2,000-row a9a problem
and a 300-sentence slice of the bundled CoNLL-2000 Maxent problem, and times (wall) the
first call of what a user runs first: LR fun_grad + hess_vec, ``minimize(..., "tron")``
and ``"cddual"`` on LR, and ``"tron"`` on Maxent (each compiles or loads its own kernels).
* cold: NUMBA_CACHE_DIR = a new empty directory (true JIT compile, cache written);
* cached: the same NUMBA_CACHE_DIR again (what every later process start costs);
* installed: ``pip install --no-deps --no-build-isolation --target TMP .`` (a regular,
  non-editable install), then two consecutive processes with PYTHONPATH=TMP and no
  NUMBA_CACHE_DIR - Numba must write its cache next to the installed modules
  (``__pycache__``) in the first and load it in the second.

Then, per command (benchmarks/compile_log.py in a fresh process, empty NUMBA_CACHE_DIR, then the
same cache again): which kernels the first ``loglin train`` of an svmlight file compiles (a9a:
binary; news20: multi-class, the default solver each) and ``loglin demo``, with each kernel's own
compile seconds (wall and CPU). Last, the cached start-up of every command: ``--help`` and a tiny
real run (wall and CPU of the whole process, median of 3), which bound what a command costs before
its work begins.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import common

PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import loglin
from loglin.binary import binary_problem
from loglin.data import read_svmlight
from loglin.solvers.base import minimize
t1 = time.perf_counter()
out = {"import_s": t1 - t0, "loglin_file": loglin.__file__}
X, y = read_svmlight(sys.argv[1], n_features=123)
obj = binary_problem(X[:2000], y[:2000], C=4.0).objective()
w = np.zeros(obj.n)
def clock(name, f):
    s = time.perf_counter(); f(); out[name] = time.perf_counter() - s
clock("lr_fun_grad_hess_vec", lambda: (obj.fun_grad(w), obj.accept(), obj.hess_vec(w)))
clock("lr_tron", lambda: minimize(obj, "tron", max_iter=3))
clock("lr_cddual", lambda: minimize(obj, "cddual", max_iter=2, eps=0.0, report_dual=False))
from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
from loglin.data import read_conll2000
p = build_dataset("conll2000-pos", data_dir=bundled_conll2000_small()[0].parent).problem
mobj = p.objective(10.0)
clock("maxent_tron", lambda: minimize(mobj, "tron", max_iter=2))
out["total_first_calls_s"] = sum(v for k, v in out.items() if k.startswith(("lr_", "maxent_")))
print(json.dumps(out))
"""


def probe(env, cwd, a9a):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROBE, str(a9a)], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = time.perf_counter() - t0
    return out


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def compile_list(env, argv, json_path):
    """benchmarks/compile_log.py on one command: its summary and the loglin kernels by compile time."""
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run([sys.executable, "-m", "benchmarks.compile_log", "--json", str(json_path), "--", *argv],
                          env=env, cwd=common.ROOT, capture_output=True, text=True, timeout=1800)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode != 0 or not Path(json_path).exists():
        return {"error": proc.stderr[-2000:]}
    log = json.loads(Path(json_path).read_text())
    own = {}
    for r in log["records"]:
        if r["kernel"].startswith("loglin") and not r["cached"]:
            k = own.setdefault(r["kernel"], {"signatures": 0, "self_s": 0.0, "self_cpu_s": 0.0})
            k["signatures"] += 1
            k["self_s"] += r["self_s"]
            k["self_cpu_s"] += r["self_cpu_s"]
    return {**log["summary"], "process_wall_s": wall, "process_cpu_s": cpu,
            "kernels": dict(sorted(own.items(), key=lambda kv: -kv[1]["self_cpu_s"]))}


def startup_times(env, argv, repeats=3):
    """Median wall and CPU seconds of whole `loglin ...` processes (cached kernels)."""
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), _children_cpu()
        proc = subprocess.run([sys.executable, "-m", "loglin.cli", *argv], env=env, cwd=common.ROOT,
                              capture_output=True, text=True, timeout=600)
        walls.append(time.perf_counter() - t0)
        cpus.append(_children_cpu() - c0)
        if proc.returncode != 0:
            return {"error": proc.stderr[-500:]}
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}


def _tiny_inputs(tmp, data_dir):
    """Small real inputs for the start-up runs: 200 a9a rows, 300 lines of the bundled CoNLL-2000 slice, 20
    Spanish CoNLL-X sentences (None where the data is missing)."""
    from loglin.tagging.datasets import bundled_conll2000_small
    out = {}
    a9a = data_dir / "a9a" / "a9a"
    if a9a.exists():
        out["svm"] = tmp / "tiny.svm"
        out["svm"].write_text("".join(a9a.open().readlines()[:200]))
    out["conll"] = tmp / "tiny.conll"
    out["conll"].write_text("".join(Path(bundled_conll2000_small()[0]).open().readlines()[:300]) + "\n")
    esp = data_dir / "conll2007-esp" / "esp.train"
    if esp.exists():
        blocks = esp.read_text().split("\n\n")[:20]
        out["conllx"] = tmp / "tiny.conllx"
        out["conllx"].write_text("\n\n".join(blocks) + "\n\n")
    return out


def commands(tmp, data_dir):
    """(name, argv) of the first-train compile lists and (name, argv) of the start-up runs."""
    tiny = _tiny_inputs(tmp, data_dir)
    first = []
    if (data_dir / "a9a" / "a9a").exists():
        first.append(("loglin train a9a (binary)", ["train", str(data_dir / "a9a" / "a9a"), "-o", str(tmp / "a.npz"),
                                                    "--quiet"]))
    if (data_dir / "news20" / "news20.bz2").exists():
        first.append(("loglin train news20 (20 classes, 3 iterations)",
                      ["train", str(data_dir / "news20" / "news20.bz2"), "-o", str(tmp / "n.npz"), "--max-iter", "3",
                       "--quiet"]))
    first.append(("loglin demo", ["demo", "--out", str(tmp / "demo"), "--quiet"]))
    start = [("loglin --help", ["--help"]), ("loglin train --help", ["train", "--help"]),
             ("loglin tag train --help", ["tag", "train", "--help"]),
             ("loglin parse train --help", ["parse", "train", "--help"])]
    if "svm" in tiny:
        start += [("loglin train (200 a9a rows)", ["train", str(tiny["svm"]), "-o", str(tmp / "t.npz"), "--quiet"]),
                  ("loglin predict (200 a9a rows)", ["predict", str(tmp / "t.npz"), str(tiny["svm"]), "-o",
                                                      str(tmp / "t.out")])]
    start.append(("loglin tag train (300 lines, chunk, 2 it.)", ["tag", "train", str(tiny["conll"]), "--task", "chunk",
                                                                 "--max-iter", "2", "-o", str(tmp / "c.npz"), "--quiet"]))
    if "conllx" in tiny:
        start.append(("loglin parse train (20 sentences, 2 it.)", ["parse", "train", str(tiny["conllx"]), "--max-iter",
                                                                   "2", "-o", str(tmp / "p.npz"), "--quiet"]))
    return first, start


def command_costs(base, repeats=3):
    """First-train compile lists (cold, then cached) and the cached start-up of every command."""
    from loglin.data import shared_data_dir
    env = dict(base, PYTHONPATH=os.pathsep.join([str(common.ROOT / "src"), str(common.ROOT)]))
    out = {"first_run": {}, "startup": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        first, start = commands(tmp, shared_data_dir())
        for name, argv in first:
            cache = tmp / f"cache-{len(out['first_run'])}"
            env1 = dict(env, NUMBA_CACHE_DIR=str(cache))
            out["first_run"][name] = {"cold": compile_list(env1, argv, tmp / "cold.json"),
                                      "cached": compile_list(env1, argv, tmp / "cached.json")}
        env2 = dict(env, NUMBA_CACHE_DIR=str(tmp / "cache-startup"))
        for name, argv in start:            # once to fill the cache, then the timed runs
            startup_times(env2, argv, repeats=1)
            out["startup"][name] = startup_times(env2, argv, repeats=repeats)
    return out


def _last_error(text):
    lines = [ln.strip() for ln in text.splitlines() if "error" in ln.lower()]
    return lines[0][:160] if lines else "unknown error"


def main(args):
    from loglin.data import shared_data_dir
    a9a = shared_data_dir() / "a9a" / "a9a"
    load0 = common.loadavg()
    base = dict(os.environ, NUMBA_NUM_THREADS="1")
    base.pop("NUMBA_CACHE_DIR", None)
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "numba-cache"
        env = dict(base, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(common.ROOT / "src"))     # this checkout
        res["source tree, cold (empty NUMBA_CACHE_DIR)"] = probe(env, common.ROOT, a9a)
        res["source tree, cached (same NUMBA_CACHE_DIR)"] = probe(env, common.ROOT, a9a)
        if not args.quick:
            target = Path(tmp) / "site"
            pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                                  "--no-index", "--target", str(target), str(common.ROOT)], capture_output=True, text=True,
                                 timeout=900)
            if pip.returncode != 0:
                # the venv's setuptools may be older than pyproject's build requirement and --no-index
                # cannot fetch a newer one: lay the package out as a wheel install would (a plain copy of
                # src/loglin without caches, outside the source tree) and say so
                import shutil
                from importlib.metadata import version
                res["installed copy, how"] = (f"pip install failed offline (build backend: this environment's "
                                              f"setuptools {version('setuptools')}, pyproject requires >= 77; "
                                              f"{_last_error(pip.stderr)}); the package directory was copied to "
                                              "a temporary site dir instead (what a wheel install lays out)")
                shutil.copytree(common.ROOT / "src" / "loglin", target / "loglin",
                                ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
            else:
                res["installed copy, how"] = "pip install --no-deps --no-build-isolation --target (non-editable)"
            if (target / "loglin").is_dir():
                env2 = dict(base, PYTHONPATH=str(target))
                res["installed copy, 1st process"] = probe(env2, tmp, a9a)
                res["installed copy, 2nd process"] = probe(env2, tmp, a9a)
                caches = list((target / "loglin").rglob("*.nbi"))
                res["installed copy, cache index files written"] = len(caches)
    costs = command_costs(base, repeats=1 if args.quick else 3)
    result = {"benchmark": "jit", "quick": args.quick, "results": res, "commands": costs, "machine": common.machine(),
              "loadavg_before": load0, "loadavg_after": common.loadavg()}
    common.write("jit", render(result), result, args.out)
    return result


def render(res):
    cols = ("import_s", "lr_fun_grad_hess_vec", "lr_tron", "lr_cddual", "maxent_tron", "total_first_calls_s",
            "process_wall_s")
    lines = [f"# Compilation cost: cold JIT vs cached start-up{' (QUICK)' if res['quick'] else ''}", "",
             f"Fresh processes, wall seconds, 1 Numba thread. Load average before {res['loadavg_before']}, after "
             f"{res['loadavg_after']} (2 CPUs; wall times on this shared machine are inflated by other jobs).", "",
             "| process | import loglin | LR fun_grad + hess_vec | LR tron (3 it.) | LR cddual (2 it.) | Maxent tron (2 it.) | "
             "all first calls | whole process | loglin loaded from |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in res["results"].items():
        if not isinstance(r, dict):
            continue
        if "error" in r:
            lines.append(f"| {name} | error: {r['error'][-200:]!r} |")
            continue
        lines.append(f"| {name} | " + " | ".join(f"{r[c]:.2f}" for c in cols) + f" | {r['loglin_file']} |")
    pairs = (("source tree, cold (empty NUMBA_CACHE_DIR)", "source tree, cached (same NUMBA_CACHE_DIR)"),
             ("installed copy, 1st process", "installed copy, 2nd process"))
    for cold, warm in pairs:
        a, b = res["results"].get(cold), res["results"].get(warm)
        if isinstance(a, dict) and isinstance(b, dict) and "error" not in a and "error" not in b:
            lines.append(f"| compile cost = {cold.split(',')[0]}: 1st − 2nd | " +
                         " | ".join(f"{a[c] - b[c]:.2f}" for c in cols) + " | |")
    lines += ["", "The first-call columns include the calls' own work (the Maxent TRON column: ~8 s of real "
              "Newton-CG work on the slice, its first step runs many CG iterations), so the compile cost is the "
              "difference row. The cached start-up of a process that trains LR is the import plus well under a "
              "second of kernel loading."]
    how = res["results"].get("installed copy, how")
    if how:
        lines += ["", f"Installed copy: {how}."]
    n = res["results"].get("installed copy, cache index files written")
    if n is not None:
        lines += ["", f"Numba cache index files (*.nbi) written next to the installed modules: {n}."]
    lines += render_commands(res.get("commands"))
    lines += ["", "How measured: benchmarks/jit.py docstring. 'cold' compiles every kernel the calls need; 'cached' "
              "and '2nd process' load them from Numba's on-disk cache (cache=True).", ""]
    return "\n".join(lines)


def render_commands(costs):
    if not costs:
        return []
    lines = ["", "## What the first run of a command compiles (empty Numba cache) and loads (cached)", "",
             "| command | cache | kernels compiled | compile s (wall) | compile s (CPU) | loaded | load s | "
             "whole process s (wall) | CPU s |", "|---|---|---|---|---|---|---|---|---|"]
    for name, runs in costs["first_run"].items():
        for cache, r in runs.items():
            if "error" in r:
                lines.append(f"| {name} | {cache} | error: {r['error'][-160:]!r} |")
                continue
            lines.append(f"| {name} | {cache} | {r['compiled']} | {r['compile_s']:.2f} | {r['compile_cpu_s']:.2f} | "
                         f"{r['loaded']} | {r['load_s']:.2f} | {r['process_wall_s']:.2f} | {r['process_cpu_s']:.2f} |")
    for name, runs in costs["first_run"].items():
        kernels = runs["cold"].get("kernels") or {}
        if kernels:
            lines += ["", f"{name}, cold: loglin kernels by own compile CPU seconds (numba's own helpers are the "
                          "rest of the total)", ""]
            lines += [f"- {k}: {v['self_cpu_s']:.2f} s CPU ({v['self_s']:.2f} wall)"
                      + (f", {v['signatures']} signatures" if v["signatures"] > 1 else "") for k, v in kernels.items()
                      if v["self_cpu_s"] >= 0.1]
    lines += ["", "## Cached start-up of every command (whole process, median of 3)", "",
              "| command | wall s | CPU s |", "|---|---|---|"]
    for name, r in costs["startup"].items():
        lines.append(f"| {name} | error: {r['error'][-160:]!r} |" if "error" in r else
                     f"| {name} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} |")
    return lines
