"""a9a, C = 4, no bias: loglin's TRON and L-BFGS against LIBLINEAR -s 0, scikit-learn's
lbfgs and SciPy's L-BFGS-B, in one run, competitors alternating.

    benchmarks/run [--quick] [--out DIR] [--repeats R] [--rows N] [--threads 1,2]

(equivalently ``python -m benchmarks.a9a ...`` from the repository root).
Writes DIR/a9a.md and DIR/a9a.json; how each number is measured is in
benchmarks/README.md and in the header of a9a.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import competitors as comp
from . import report

C = 4.0
LEVELS = (1e-2, 1e-4, 1e-6)
QUICK_LEVELS = (1e-2, 1e-4)
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results"

HOW_MEASURED = """\
How the times are measured (one process, competitors alternating in every repeat):
- **trace** (loglin tron / lbfgs, SciPy L-BFGS-B on loglin's fun_grad): one run to
  ||g|| <= 1e-10 ||g0|| (or until the solver stalls), recording training seconds and the
  objective after every iteration; time to eps = the first record with (f - P*)/P* <= eps.
  Evaluation is outside the timed region (loglin's driver; SciPy's callback cost is subtracted).
- **tolerance sweep** (LIBLINEAR -s 0, scikit-learn lbfgs; black boxes): one call per
  stopping tolerance in {tolerances}; each call's wall time is measured around
  `train()` / `fit()` only (LIBLINEAR's problem conversion is done once, untimed), the objective
  of the returned weights is recomputed by loglin's kernel, and time to eps = the fastest call
  that reached eps.
- Both clocks are read at every point: wall (time.perf_counter) and process CPU time
  (time.process_time; not shown for multi-threaded rows, where it adds up the threads).
- P* = the lowest objective any tool reached in any run (all tools ran a very tight run).
  f(w) = 1/2 ||w||^2 + C sum_i log(1 + exp(-y_i w'x_i)) (LIBLINEAR's scale; scikit-learn has
  the same optimum for the same C). Medians over repeats; (min-max) in brackets.
- loglin's Numba kernels are compiled/loaded and warmed up before any timing; first-call
  times are reported separately below. BLAS (OpenBLAS, used by NumPy/SciPy/scikit-learn) is
  limited to 1 thread for every tool; LIBLINEAR is single-threaded; loglin's rows say how many
  Numba threads its kernels used."""


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="benchmarks/run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI smoke: 1 repeat, loose levels, short sweeps")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    ap.add_argument("--repeats", type=int, default=None, help="repeats (default 3; 1 with --quick)")
    ap.add_argument("--rows", type=int, default=None, help="use only the first N training rows")
    ap.add_argument("--threads", default=None,
                    help="comma-separated Numba thread counts for loglin (default: 1 and all cores)")
    ap.add_argument("--data", type=Path, default=None, help="directory holding a9a and a9a.t")
    args = ap.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    return args


def _data_dir(arg):
    if arg is not None:
        return arg
    from loglin.data import shared_data_dir
    base = shared_data_dir()
    return None if base is None else base / "a9a"


def load(data_dir: Path, rows):
    """Training rows (the first ``rows`` if given) and test rows, with the same columns."""
    from loglin.data import read_svmlight
    X, y = read_svmlight(data_dir / "a9a")
    X_test, y_test = read_svmlight(data_dir / "a9a.t")
    n = max(X.shape[1], X_test.shape[1])        # the highest feature may be absent from one file
    X, X_test = _with_columns(X, n), _with_columns(X_test, n)
    if rows is not None:
        X, y = X[:rows], y[:rows]
    return X, y, X_test, y_test


def _with_columns(X, n):
    import scipy.sparse as sp
    return X if X.shape[1] == n else sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n))


def thread_counts(arg):
    import numba
    if arg:
        counts = [int(t) for t in arg.split(",")]
    else:
        counts = sorted({1, numba.config.NUMBA_NUM_THREADS})
    bad = [t for t in counts if not 1 <= t <= numba.config.NUMBA_NUM_THREADS]
    if bad:
        raise SystemExit(f"--threads: {bad} outside 1..{numba.config.NUMBA_NUM_THREADS} (NUMBA_NUM_THREADS)")
    return counts


def _label(solver, threads, counts):
    return solver if len(counts) == 1 and threads == 1 else f"{solver} ({threads} thr)"


def first_call_seconds(bench):
    """Time of the first fun_grad / hess_vec in this process (Numba cache load, or compile)."""
    w = np.zeros(bench.objective.n)
    t0 = time.perf_counter()
    bench.objective.fun_grad(w)
    t1 = time.perf_counter()
    bench.objective.accept()
    bench.objective.hess_vec(w)
    t2 = time.perf_counter()
    return {"fun_grad": t1 - t0, "hess_vec": t2 - t1}


_COLD = """
import json, sys, time
import numpy as np
from loglin.binary import binary_problem
from loglin.data import read_svmlight
X, y = read_svmlight(sys.argv[1])
obj = binary_problem(X[:500], y[:500], C=4.0).objective()
w = np.zeros(obj.n)
t1 = time.perf_counter(); obj.fun_grad(w); t2 = time.perf_counter()
obj.accept(); obj.hess_vec(w); t3 = time.perf_counter()
print(json.dumps({"fun_grad": t2 - t1, "hess_vec": t3 - t2}))
"""


def cold_compile_seconds(train_file):
    """First-call times in a fresh interpreter with an empty Numba cache (true JIT compile)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", _COLD, str(train_file)], env=env, capture_output=True,
                             text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def kernel_seconds(bench, calls):
    """Wall seconds of one fun_grad / hess_vec at w = 0: median and mean (the mean shows
    stalls, e.g. threads waiting for each other on a busy machine), and CPU seconds per call."""
    obj = bench.objective
    w = np.zeros(obj.n)
    obj.fun_grad(w)
    obj.accept()
    out = {}
    for name, call in (("fun_grad", lambda: obj.fun_grad(w, keep_cache=False)), ("hess_vec", lambda: obj.hess_vec(w))):
        walls = []
        cpu0 = time.process_time()
        for _ in range(calls):
            t0 = time.perf_counter()
            call()
            walls.append(time.perf_counter() - t0)
        out[name] = {"median": statistics.median(walls), "mean": statistics.fmean(walls),
                     "cpu_mean": (time.process_time() - cpu0) / calls}
    return out


def warm_up(benches, black_boxes):
    """A few iterations of every solver on every thread setting, one call of each black box."""
    import numba
    from loglin.solvers.base import minimize
    for threads, bench in benches.items():
        numba.set_num_threads(threads)
        for solver in ("tron", "lbfgs"):
            minimize(bench.objective, solver, max_iter=3)
    for tool in black_boxes:
        tool.fit(1e-1)


def loadavg():
    try:
        return Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        return None


def main(argv=None):
    args = parse_args(argv)
    try:
        import liblinear.liblinearutil  # noqa: F401
        import scipy.optimize  # noqa: F401  (loads SciPy's own OpenBLAS before we limit it)
        import sklearn.linear_model  # noqa: F401
        from threadpoolctl import threadpool_limits
    except ImportError as exc:
        raise SystemExit(f"benchmarks need the 'bench' extra ({exc}); run: pip install -e .[bench]")
    # BLAS on one thread for everybody: LIBLINEAR is single-threaded, and on a shared machine
    # OpenBLAS threads make SciPy's L-BFGS-B and scikit-learn's lbfgs up to 10x slower.
    with threadpool_limits(limits=1, user_api="blas"):
        return _main(args)


def _main(args):
    import numba
    import scipy

    data_dir = _data_dir(args.data)
    if data_dir is None or not (data_dir / "a9a").is_file():
        raise SystemExit(f"a9a not found (looked in {data_dir}); set LOGLIN_DATA or pass --data DIR")
    counts = thread_counts(args.threads)
    levels = QUICK_LEVELS if args.quick else LEVELS
    sweep = comp.QUICK_SWEEP if args.quick else comp.FULL_SWEEP
    load_before = loadavg()
    started = time.time()

    X, y, X_test, y_test = load(data_dir, args.rows)
    benches = {}
    jit = {}
    for threads in counts:
        numba.set_num_threads(threads)      # blocks are sized by the thread count at construction
        benches[threads] = comp.Bench(X, y, C)
        if not jit:
            jit["first_call_in_process"] = first_call_seconds(benches[threads])
    if not args.quick:
        jit["cold_compile_fresh_process"] = cold_compile_seconds(data_dir / "a9a")
    single = benches[min(counts)]
    black_boxes = [comp.Liblinear(single), comp.Sklearn(single)]
    warm_up(benches, black_boxes)
    kernels = {}
    for threads, bench in benches.items():
        numba.set_num_threads(threads)
        kernels[f"{threads} thread(s)"] = kernel_seconds(bench, 20 if args.quick else 200)

    # every competitor is a (label, thunk) pair; the order rotates each repeat
    jobs = []
    for threads in counts:
        for solver in ("tron", "lbfgs"):
            jobs.append((_label(solver, threads, counts), threads,
                         lambda b=benches[threads], s=solver, t=threads: comp.run_ours(b, s, _label(s, t, counts), t)))
    jobs.append(("scipy L-BFGS-B", min(counts), lambda: comp.run_scipy(single)))
    for tool in black_boxes:
        jobs.append((tool.name, 1, lambda t=tool: comp.run_sweep(t, sweep)))

    runs = {label: [] for label, _, _ in jobs}
    for rep in range(args.repeats):
        shift = rep % len(jobs)
        for label, threads, thunk in jobs[shift:] + jobs[:shift]:
            numba.set_num_threads(threads)
            runs[label].append(thunk())
            print(f"  repeat {rep + 1}/{args.repeats}: {label} done", file=sys.stderr, flush=True)

    p_opt, p_who = report.p_star(runs)
    classes = single.problem.classes
    accuracy = {label: comp.test_accuracy(rs[0].w, X_test, y_test, classes) for label, rs in runs.items()}
    summary = report.summarize(runs, levels, p_opt, accuracy)
    tron_label = _label("tron", min(counts), counts)
    checks = report.acceptance(summary, levels, tron_label)
    load_after = loadavg()

    result = {
        "benchmark": "a9a", "C": C, "bias": None, "quick": args.quick, "repeats": args.repeats,
        "levels": [report.level_key(e) for e in levels], "sweep_tolerances": list(sweep),
        "data": {"dir": str(data_dir), "rows": X.shape[0], "features": X.shape[1], "nnz": int(X.nnz),
                 "test_rows": X_test.shape[0]},
        "machine": {"cpus": os.cpu_count(), "numba_max_threads": numba.config.NUMBA_NUM_THREADS,
                    "numba_threading_layer": _threading_layer(), "loglin_threads": counts,
                    "loadavg_before": load_before, "loadavg_after": load_after,
                    "python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
                    "numba": numba.__version__, "sklearn": _version("scikit-learn"),
                    "liblinear": _version("liblinear-official")},
        "jit_seconds": jit, "kernel_seconds": kernels,
        "p_star": p_opt, "p_star_found_by": p_who,
        "tools": summary, "acceptance": checks, "wall_seconds": time.time() - started,
        "curves": {label: [[_point(p) for p in r.points] for r in rs] for label, rs in runs.items()},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    md = render_markdown(result, summary, levels, sweep)
    (args.out / "a9a.md").write_text(md)
    (args.out / "a9a.json").write_text(json.dumps(result, indent=1, default=_json_default))
    print(md)
    print(f"wrote {args.out / 'a9a.md'} and {args.out / 'a9a.json'}", file=sys.stderr)
    return 0


def render_markdown(result, summary, levels, sweep):
    d, m = result["data"], result["machine"]
    tol_text = ", ".join(f"{t:.0e}" for t in sweep)
    lines = [
        f"# a9a benchmark (C = {C:g}, no bias{', QUICK' if result['quick'] else ''})", "",
        f"{d['rows']} training rows, {d['features']} features, {d['nnz']} non-zeros; test: {d['test_rows']} rows. "
        f"Repeats: {result['repeats']}. P* = {result['p_star']:.12f} (found by {result['p_star_found_by']}). "
        f"Load average before {m['loadavg_before']}, after {m['loadavg_after']} ({m['cpus']} CPUs).", "",
        "## Wall-clock seconds to (f − P*)/P* ≤ ε", "",
        report.time_table(summary, levels, "wall"), "",
        "## CPU seconds (process time; immune to other jobs, single-threaded rows only)", "",
        report.time_table(summary, levels, "cpu"), "",
        "## Final objective (tightest run) and test accuracy", "",
        report.final_table(summary), "",
        HOW_MEASURED.format(tolerances=tol_text), "",
        "## Acceptance (loglin TRON, 1 thread, vs LIBLINEAR -s 0)", "",
    ]
    for name, check in result["acceptance"].items():
        value = check["value"]
        shown = "n/a" if value is None else f"{value:.3g}"
        lines.append(f"- {name}: {shown} — {'PASS' if check['pass'] else 'FAIL'}")
    lines += ["", "## Numba JIT and kernels", ""]
    for key, val in result["jit_seconds"].items():
        lines.append(f"- {key.replace('_', ' ')}: fun_grad {val['fun_grad']:.3f} s, hess_vec {val['hess_vec']:.3f} s")
    for key, val in result["kernel_seconds"].items():
        lines.append(f"- one call, {key}: " + "; ".join(
            f"{name} {1e3 * v['median']:.3f} ms median, {1e3 * v['mean']:.3f} ms mean wall, "
            f"{1e3 * v['cpu_mean']:.3f} ms CPU" for name, v in val.items()))
    lines += ["", "## Runs (first repeat)", ""]
    for tool, entry in summary.items():
        info = entry["info"][0]
        lines.append(f"- {tool}: " + ", ".join(f"{k} {_short(v)}" for k, v in info.items() if k != "tolerances"))
    lines += ["", f"Numba {m['numba']} ({m['numba_threading_layer']} layer), NumPy {m['numpy']}, "
              f"SciPy {m['scipy']}, scikit-learn {m['sklearn']}, liblinear-official {m['liblinear']}, "
              f"Python {m['python']}. Total wall time {result['wall_seconds']:.0f} s.", ""]
    return "\n".join(lines)


def _point(point):
    """(wall, cpu, objective, tolerance) for JSON: times to the microsecond, objective in full."""
    wall, cpu, f, tol = point
    return [round(wall, 6), None if cpu is None else round(cpu, 6), f, tol]


def _short(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _threading_layer():
    import numba
    try:
        return numba.threading_layer()
    except ValueError:
        return "not initialized"


def _version(dist):
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _json_default(obj):
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj)}")


if __name__ == "__main__":
    sys.exit(main())
