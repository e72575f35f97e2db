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
"""
from __future__ import annotations

import json
import os
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
        env = dict(base, NUMBA_CACHE_DIR=str(cache))
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
    result = {"benchmark": "jit", "quick": args.quick, "results": res, "machine": common.machine(),
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
    lines += ["", "How measured: benchmarks/jit.py docstring. 'cold' compiles every kernel the calls need; 'cached' "
              "and '2nd process' load them from Numba's on-disk cache (cache=True).", ""]
    return "\n".join(lines)
