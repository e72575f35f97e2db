"""Collins, Globerson, Koo, Carreras & Bartlett (2008): EG for log-linear and max-margin models.

Experiments (``loglin reproduce NAME``; each writes PNGs, CSV/JSON traces and summary.md):

* ``collins2008-mnist-eg``        Figs 4-6: LLEG-Online on MNIST for C' in {1000, 100, 10, 1}
* ``collins2008-mnist-order``     Fig 7: randomized vs deterministic (cyclic) order, C' = 1
* ``collins2008-mnist-anneal``    Fig 8: C annealing (C' = 10 -> 1) vs plain EG at C' = 1
* ``collins2008-mnist-path``      Table 2: warm-started path C' = 1000 * 0.7^k, relative gap 1e-3
* ``collins2008-mnist-baselines`` Figs 9-11, 14: EG vs SGD vs L-BFGS (primal, validation error, time),
                                  and the acceptance check: the same primal optimum to 1e-4 relative
* ``collins2008-mnist-mm``        MMEG-Online on MNIST: the max-margin duality gap going to 0
* ``collins2008-news20-baselines`` the same comparison on news20 (LIBSVM multi-class)
* ``collins2008-conll-crf``       chain CRF on CoNLL-2000 chunking: EG vs SGD vs L-BFGS, and CRFsuite
* ``collins2008-conll-m3n``       chain M3N on CoNLL-2000: EG vs the cutting-plane structural SVM

C' is the paper's constant (sum loss + C'/2 ||w||^2); loglin's C = 1/C'. Primal and
(dual) objectives are reported in the paper's scale, f/C, so numbers compare with its
figures. The x-axis is *effective iterations*: examples visited / n, every tried
step size of EG counting as a visit, every function evaluation of L-BFGS as a pass.
MNIST results use pixels / 255; the shared training pixels are a reconstruction and
are labelled "MNIST (train pixels reconstructed)".

Every run is timed in process CPU seconds (``clock="cpu"``) and limited by ``time_limit``
CPU seconds per method; each trace and the summary are written as soon as a run ends,
so a run cut off part-way still leaves its finished methods on disk.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ..solvers.base import minimize
from .datasets import conll2000_files, mnist_dir, news20_multiclass_file
from .harness import output_dir, plot_series, save_trace, write_summary

C_PRIME_GRID = (1000.0, 100.0, 10.0, 1.0)
CLOCK = "cpu"                   # seconds and time limits in process CPU time (shared machine)
TIME_LIMIT = 300.0              # default CPU seconds per method run


# ====================================================================== helpers
def effective_iterations(trace):
    """Add 'effective_iterations' to records that lack it (L-BFGS: 1 + function evaluations)."""
    evals = 1.0
    for r in trace.records:
        if "effective_iterations" not in r:
            evals += r.get("line_search_evals", 0.0 if r["iteration"] == 0 else 1.0)
            r["effective_iterations"] = 0.0 if r["iteration"] == 0 else evals
    return trace


def collins_scale(trace, C):
    """Add the primal (and dual) objective in the paper's scale, f / C, as primal_collins / dual_collins."""
    for r in trace.records:
        r["primal_collins"] = r["objective"] / C
        if r.get("dual_objective") is not None:
            r["dual_collins"] = r["dual_objective"] / C
    return trace


def plot_collins(path, series, *, y="primal_collins", ylabel="primal objective (C' scale)", **kw):
    """:func:`~loglin.experiments.harness.plot_series` with the paper's primal objective as the default curve."""
    plot_series(path, series, y=y, ylabel=ylabel, **kw)


def write_report(out, title, lines, data_note=None):
    """summary.md: the title, the data used and the tables."""
    write_summary(out, title, [f"Data: {data_note}"] if data_note else [], lines)


# ====================================================================== multi-class data
def _mnist(out_dir, quick, n_train=59000):
    """(the output directory, created first; the MNIST problem, its validation error(w) and the data note)."""
    from ..data.mnist import load_mnist
    from ..problem import problem_from_matrix
    out = output_dir(out_dir)
    X, y, Xv, yv, info = load_mnist(mnist_dir(), n_train=n_train)
    if quick:
        X, y, Xv, yv = X[:1500], y[:1500], Xv[:500], yv[:500]
    p = problem_from_matrix(X, y)
    return out, p, _validation_error(p, Xv, yv), info["note"] + (" - quick slice" if quick else "") + \
        f"; {len(y)} training images (first {len(y)} of train; the paper: 59k), {len(yv)} validation images (t10k)"


def _news20(quick):
    from ..data.svmlight import read_svmlight
    from ..problem import problem_from_matrix
    X, y = read_svmlight(news20_multiclass_file())[:2]
    rng = np.random.default_rng(0)
    order = rng.permutation(X.shape[0])
    n_val = 1000 if not quick else 300
    n_tr = X.shape[0] - n_val if not quick else 1500
    tr, va = order[:n_tr], order[-n_val:]
    p = problem_from_matrix(X[tr], y[tr])
    return p, _validation_error(p, X[va], y[va]), \
        f"news20 (LIBSVM multi-class, tf-idf), {n_tr} training / {n_val} validation documents (random split)"


def _validation_error(problem, Xv, yv):
    import scipy.sparse as sp
    from ..kernels.maxent import decision_rows
    Xv = sp.csr_matrix(Xv)
    Xv.sort_indices()
    labels = problem.labels
    lookup = {c: i for i, c in enumerate(labels.tolist())}
    yv_id = np.array([lookup.get(v, -1) for v in np.asarray(yv).tolist()])
    n_pred = problem.n_predicates
    Xv = Xv[:, :n_pred] if Xv.shape[1] >= n_pred else sp.hstack([Xv, sp.csr_matrix((Xv.shape[0],
                                                                                     n_pred - Xv.shape[1]))]).tocsr()
    ind = Xv.indptr.astype(np.int64), Xv.indices.astype(np.int64), Xv.data.astype(np.float64)

    def error(w):
        scores = decision_rows(np.asarray(w, dtype=np.float64), problem.n_labels, ind[0], ind[1], ind[2],
                               problem.map_ptr, problem.map_label, problem.map_feat)
        return 100.0 * float(np.mean(scores.argmax(axis=1) != yv_id))
    return error


def _eg_ll(problem, C, evaluate, max_iter, gap_tol=None, time_limit=TIME_LIMIT, **options):
    options.setdefault("eta", 0.5)           # section 7.1: eta_ini = 0.5 on MNIST
    res = minimize(problem.objective(C), "eg-ll", tol=0.0, max_iter=max_iter, gap_tol=gap_tol,
                   evaluate=evaluate, random_state=0, clock=CLOCK, time_limit=time_limit, **options)
    return collins_scale(effective_iterations(res.trace), C), res


# ====================================================================== MNIST / news20 experiments
def _gap(r):
    return (r["primal_collins"] - r["dual_collins"]) / abs(r["primal_collins"])


def mnist_eg(out_dir: Path, quick=False, n_train=59000, its=None, time_limit=TIME_LIMIT):
    """Figs 4-6: validation error, primal/dual and duality gap of LLEG-Online for several C'."""
    out, problem, val, note = _mnist(out_dir, quick, n_train)
    its = its or (6 if quick else 20)
    rows, series = [], []
    for Cp in C_PRIME_GRID:
        trace, res = _eg_ll(problem, 1.0 / Cp, val, its, time_limit=time_limit)
        save_trace(out, f"eg_Cprime{Cp:g}", trace)
        series.append((Cp, trace))
        last = trace.records[-1]
        rows.append(f"| {Cp:g} | {last['effective_iterations']:.1f} | {last['primal_collins']:.6g} | "
                    f"{last['dual_collins']:.6g} | {_gap(last):.2e} | {last['metric']:.2f} | {last['seconds']:.1f} |")
        write_report(out, "Collins et al. 2008, Figs 4-6: LLEG-Online on MNIST", [
            "| C' | effective its | primal | dual | relative gap | validation error % | train CPU s |",
            "|---|---|---|---|---|---|---|", *rows], note)
    plot_collins(out / "fig4_validation_error.png", [(f"C'={c:g}", t, "metric") for c, t in series],
          y="metric", ylabel="validation error (%)", title=note)
    plot_collins(out / "fig5_primal_dual.png", [(f"C'={c:g} {k}", t, col) for c, t in series
                                         for k, col in (("primal", "primal_collins"), ("dual", "dual_collins"))],
          ylabel="objective (C' scale)", title="primal and (negated-sign) dual, " + note)
    for c, t in series:
        for r in t.records:
            if r.get("dual_collins") is not None:
                r["gap_percent"] = 100.0 * _gap(r)
    plot_collins(out / "fig6_duality_gap.png", [(f"C'={c:g}", t, "gap_percent") for c, t in series], logy=True,
          y="gap_percent", ylabel="duality gap (% of primal)", title=note)


def mnist_order(out_dir: Path, quick=False, n_train=59000, its=None, time_limit=TIME_LIMIT):
    """Fig 7: randomized vs deterministic order at C' = 1."""
    out, problem, val, note = _mnist(out_dir, quick, n_train)
    its = its or (6 if quick else 20)
    runs = {}
    for order in ("random", "cyclic"):
        trace, _ = _eg_ll(problem, 1.0, val, its, order=order, time_limit=time_limit)
        save_trace(out, f"eg_{order}", trace)
        runs[order] = trace
    opt = min(min(t.column("primal_collins")) for t in runs.values())
    for t in runs.values():
        for r in t.records:
            if r.get("dual_collins") is not None:
                r["normalized_gap"] = (r["primal_collins"] - r["dual_collins"]) / abs(opt)
    plot_collins(out / "fig7_primal_dual.png", [(f"{o} {k}", t, col) for o, t in runs.items()
                                         for k, col in (("primal", "primal_collins"), ("dual", "dual_collins"))],
          ylabel="objective (C' = 1)", title=note)
    plot_collins(out / "fig7_gap.png", [(o, t, "normalized_gap") for o, t in runs.items()], y="normalized_gap",
          logy=True, ylabel="(primal - dual) / opt", title=note)
    lines = ["| order | effective its | CPU s | primal | dual | (primal-dual)/opt | validation error % |",
             "|---|---|---|---|---|---|---|"]
    for o, t in runs.items():
        r = t.records[-1]
        lines.append(f"| {o} | {r['effective_iterations']:.1f} | {r['seconds']:.1f} | {r['primal_collins']:.6g} | "
                     f"{r['dual_collins']:.6g} | {r['normalized_gap']:.2e} | {r['metric']:.2f} |")
    write_report(out, "Collins et al. 2008, Fig 7: randomized vs deterministic online EG (C' = 1)", lines, note)


def mnist_anneal(out_dir: Path, quick=False, n_train=59000, its=None, time_limit=TIME_LIMIT):
    """Fig 8: annealing C' = 10 -> 1 (C' = 1 + 9 * 0.7^(t-5) after 5 passes) vs plain EG at C' = 1."""
    from ..structured.eg import collins_annealing
    out, problem, val, note = _mnist(out_dir, quick, n_train)
    its = its or (6 if quick else 20)
    plain, _ = _eg_ll(problem, 1.0, val, its, time_limit=time_limit)
    save_trace(out, "eg_plain", plain)
    annealed, _ = _eg_ll(problem, 1.0, val, its, C_schedule=collins_annealing(1.0), time_limit=time_limit)
    save_trace(out, "eg_annealed", annealed)
    plot_collins(out / "fig8_primal.png", [("EG", plain, "primal_collins"), ("EG annealed", annealed, "primal_collins")],
          ylabel="primal objective at C' = 1", title=note)
    plot_collins(out / "fig8_validation_error.png", [("EG", plain, "metric"), ("EG annealed", annealed, "metric")],
          y="metric", ylabel="validation error (%)", title=note)
    lines = ["| run | effective its | CPU s | primal (C'=1) | validation error % |", "|---|---|---|---|---|"]
    for name, t in (("EG", plain), ("EG annealed", annealed)):
        r = t.records[-1]
        lines.append(f"| {name} | {r['effective_iterations']:.1f} | {r['seconds']:.1f} | {r['primal_collins']:.6g} | "
                     f"{r['metric']:.2f} |")
    write_report(out, "Collins et al. 2008, Fig 8: C annealing on MNIST (C' = 1)", lines, note)


def mnist_path(out_dir: Path, quick=False, n_train=59000, its=None, time_limit=60.0, n_values=None,
               total_limit=300.0):
    """Table 2: warm-started path over C' = 1000 * 0.7^k with a relative gap tolerance of 1e-3.

    ``time_limit`` CPU seconds per value of C', ``total_limit`` for the whole path (it stops early,
    and says so, when the total is spent). The table is rewritten after every C'.
    """
    from ..solvers.eg import EGState
    from ..structured.eg import regularization_path
    out, problem, val, note = _mnist(out_dir, quick, n_train)
    n_values = n_values or (6 if quick else 24)     # the paper: 25 values from 1000 to 0.274
    Cps = [1000.0 * 0.7 ** k for k in range(n_values)]
    state = EGState(problem, init_eps=0.01)      # eg-ll is loglin.solvers.eg; its warm-start state
    rows, total, cpu = [], 0.0, 0.0
    lines = ["| C' | iterations | total iterations | validation error % | relative gap | CPU s | stop |",
             "|---|---|---|---|---|---|---|"]
    for Cp in Cps:
        start = time.process_time()
        row = regularization_path(lambda C: problem.objective(C), "eg-ll", [1.0 / Cp], state,
                                  gap_tol=1e-3, max_iter=60 if quick else 200, evaluate=val, eta=0.5,
                                  updates_per_step=max(1, problem.n_contexts // 2), clock=CLOCK,
                                  time_limit=time_limit)[0]
        row.pop("w", None)
        total += row["iterations"]
        row["total_iterations"], row["cpu_seconds"] = total, time.process_time() - start
        cpu += row["cpu_seconds"]
        rows.append(row)
        (out / "table2.json").write_text(json.dumps(rows, indent=1, default=float))
        lines.append(f"| {row['C_collins']:.6g} | {row['iterations']:.2f} | {total:.2f} | {row['metric']:.2f} | "
                     f"{row['relative_gap']:.1e} | {row['cpu_seconds']:.1f} | {row['stop_reason']} |")
        stopped = cpu >= total_limit and Cp != Cps[-1]
        write_report(out, "Collins et al. 2008, Table 2: warm-started C path (epsilon = 0.1%, nu = 0.7)", lines + [
            "", "The gap is checked every half pass, so iterations are multiples of 0.5 (plus the visits of "
            f"rejected step sizes). CPU limit {time_limit:g} s per C', {total_limit:g} s in all"
            + (f"; the path was stopped after C' = {Cp:.4g} when the total was spent." if stopped else ".")], note)
        if stopped:
            break


def mnist_mm(out_dir: Path, quick=False, n_train=59000, its=None, time_limit=TIME_LIMIT, gap_tol=1e-6):
    """MMEG-Online on MNIST: primal (multi-class hinge), dual and duality gap for C' = 10 and 1."""
    from ..structured.multiclass import MaxMarginObjective
    out, problem, val, note = _mnist(out_dir, quick, n_train)
    its = its or (6 if quick else 60)
    lines = ["| C' | effective its | CPU s | primal (C' scale) | dual (C' scale) | relative gap | validation error % | stop |",
             "|---|---|---|---|---|---|---|---|"]
    series = []
    for Cp in (10.0, 1.0):
        C = 1.0 / Cp
        res = minimize(MaxMarginObjective(problem, C), "eg-mm", tol=0.0, gap_tol=gap_tol, max_iter=its,
                       evaluate=val, random_state=0, clock=CLOCK, time_limit=time_limit)
        t = collins_scale(res.trace, C)
        save_trace(out, f"mmeg_Cprime{Cp:g}", t)
        for r in t.records:
            if r.get("dual_collins") is not None:
                r["relative_gap"] = _gap(r)
        series.append((Cp, t))
        r = t.records[-1]
        lines.append(f"| {Cp:g} | {r['effective_iterations']:.1f} | {r['seconds']:.1f} | {r['primal_collins']:.8g} | "
                     f"{r['dual_collins']:.8g} | {r['relative_gap']:.1e} | {r['metric']:.2f} | {res.stop_reason} |")
        write_report(out, "Collins et al. 2008: MMEG-Online on MNIST (max-margin duality gap)", lines, note)
    plot_collins(out / "mm_gap.png", [(f"C'={c:g}", t, "relative_gap") for c, t in series], y="relative_gap", logy=True,
          ylabel="(primal - dual) / primal", title=note)


def _baselines(out, problem, val, note, Cps, its, title, time_limit=TIME_LIMIT, long_its=200, gap_tol=1e-6):
    """EG vs SGD vs L-BFGS per C': the figures show the first ``its`` effective iterations; EG then runs on
    to a relative duality gap ``gap_tol`` (a certificate of its primal) and L-BFGS to a relative gradient
    of 1e-9, so the tables can check that all reach the same primal optimum (acceptance: 1e-4)."""
    from ..structured.eg import collins_annealing
    header = ["| C' | solver | effective its | CPU s | primal at its | final primal | rel. to L-BFGS | "
              "rel. duality gap | validation error % | stop |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines, agree = list(header), []
    for Cp in Cps:
        C = 1.0 / Cp
        runs = {}

        def done(name, trace, res):
            runs[name] = trace
            save_trace(out, f"{name.lower().replace('-', '').replace(' ', '_')}_Cprime{Cp:g}", trace)
            at = [r for r in trace.records if r["effective_iterations"] <= its + 1e-9][-1]
            r = trace.records[-1]
            gap = f"{_gap(r):.1e}" if r.get("dual_collins") is not None else "-"
            lines.append(f"| {Cp:g} | {name} | {r['effective_iterations']:.1f} | {r['seconds']:.1f} | "
                         f"{at['primal_collins']:.10g} | {r['primal_collins']:.10g} | REL | {gap} | {r['metric']:.2f} | "
                         f"{res.stop_reason} |")
            write_report(out, title, [line.replace("| REL |", "| |") for line in lines], note)

        done("EG", *_eg_ll(problem, C, val, long_its, gap_tol=gap_tol, time_limit=time_limit))
        if Cp <= 1.0:
            done("EG annealed", *_eg_ll(problem, C, val, long_its, gap_tol=gap_tol, time_limit=time_limit,
                                        C_schedule=collins_annealing(C)))
        eta0 = _pick_sgd_eta0(problem, C, val)
        res = minimize(problem.objective(C), "sgd", tol=0.0, max_iter=its, evaluate=val, random_state=0,
                       eta0=eta0, clock=CLOCK, time_limit=time_limit)
        for r in res.trace.records:                  # SGD: one pass per iteration
            r["effective_iterations"] = float(r["iteration"])
        done("SGD", collins_scale(res.trace, C), res)
        res = minimize(problem.objective(C), "lbfgs", tol=1e-9, max_iter=5000, evaluate=val, clock=CLOCK,
                       time_limit=time_limit)
        done("L-BFGS", collins_scale(effective_iterations(res.trace), C), res)
        ref = runs["L-BFGS"].records[-1]["primal_collins"]
        lines[len(lines) - len(runs):] = [line.replace("| REL |", "| {:+.1e} |".format(
            (t.records[-1]["primal_collins"] - ref) / abs(ref))) for line, t in zip(lines[len(lines) - len(runs):],
                                                                                  runs.values())]
        for name, t in runs.items():
            if name != "L-BFGS":
                rel = (t.records[-1]["primal_collins"] - ref) / abs(ref)
                what = f"{name} (eta0 = {eta0:g})" if name == "SGD" else name
                agree.append(f"- C' = {Cp:g}, {what}: final primal {rel:+.1e} relative to L-BFGS's: "
                             f"{'held' if abs(rel) <= 1e-4 else 'NOT held'}")
        best = min(min(t.column("primal_collins")) for t in runs.values())
        best = best - 1e-9 * abs(best)
        plot_collins(out / f"primal_Cprime{Cp:g}.png", [(k, t, None) for k, t in runs.items()], ref=best, logy=True,
              ylabel="primal - best (C' scale)", title=f"C' = {Cp:g}; {note}", xmax=its)
        plot_collins(out / f"validation_Cprime{Cp:g}.png", [(k, t, "metric") for k, t in runs.items()], y="metric",
              ylabel="validation error (%)", title=f"C' = {Cp:g}; {note}", xmax=its)
        plot_collins(out / f"primal_time_Cprime{Cp:g}.png", [(k, t, None) for k, t in runs.items()], ref=best, logy=True,
              x="seconds", ylabel="primal - best (C' scale)", title=f"C' = {Cp:g} (training CPU seconds); {note}")
        write_report(out, title, lines + ["", f"Acceptance (same primal optimum to 1e-4 relative; EG runs to a "
                                                 f"relative duality gap of {gap_tol:g} or {long_its} passes, L-BFGS "
                                                 f"to a relative gradient of 1e-9, SGD {its} passes):", *agree,
                                            "", f"'primal at its' is the value after {its} effective iterations "
                                                "(the figures' range); CPU limit per run "
                                                f"{time_limit:g} s."], note)
    return lines


def _pick_sgd_eta0(problem, C, val, grid=(1.0, 0.1, 0.01, 0.001, 0.0001)):
    """Section 7.1.3: the eta0 with the lowest validation error after one pass (the core's sgd is in f/(C N)
    scale, so its eta0 is the paper's eta0 up to the factor N/n = 1 here)."""
    best = (np.inf, grid[0])
    for eta0 in grid:
        res = minimize(problem.objective(C), "sgd", tol=0.0, max_iter=1, random_state=0, eta0=eta0, clock=CLOCK)
        if np.all(np.isfinite(res.w)):
            err = val(res.w)
            if err < best[0]:
                best = (err, eta0)
    return best[1]


def mnist_baselines(out_dir: Path, quick=False, n_train=59000, its=None, time_limit=TIME_LIMIT):
    """Figs 9-11 and 14: EG vs SGD vs L-BFGS on the log-linear primal, and the 1e-4 agreement check."""
    out, problem, val, note = _mnist(out_dir, quick, n_train)
    _baselines(out, problem, val, note, (10.0, 1.0) if not quick else (10.0,), its or (6 if quick else 25),
               "Collins et al. 2008, Figs 9-11, 14: EG vs SGD vs L-BFGS on MNIST", time_limit=time_limit,
               long_its=20 if quick else 200)


def news20_baselines(out_dir: Path, quick=False, its=None, time_limit=TIME_LIMIT):
    """The EG / SGD / L-BFGS comparison on news20."""
    out = output_dir(out_dir)
    problem, val, note = _news20(quick)
    _baselines(out, problem, val, note, (1.0, 0.1) if not quick else (1.0,), its or (5 if quick else 30),
               "EG vs SGD vs L-BFGS on news20 (the paper's section 7.1 protocol)", time_limit=time_limit,
               long_its=15 if quick else 200)


# ====================================================================== CoNLL-2000 chunking
def conll_chunking(quick):
    from ..data import read_conll2000
    from ..structured.crf_features import build_chain_problem
    from ..structured.evaluate import chunk_f1
    from ..structured.model import ChainModel
    train_file, test_file = conll2000_files()
    train, test = read_conll2000(train_file), read_conll2000(test_file)
    if quick:
        train, test = train[:300], test[:100]
    problem, space = build_chain_problem(train, "chunk")
    gold = [[t[2] for t in s] for s in test]

    def f1(w):
        return chunk_f1(gold, ChainModel(space=space, w=np.asarray(w)).tag(test))
    note = (f"CoNLL-2000 chunking, {len(train)} training / {len(test)} test sentences, CRFsuite's chunking "
            f"attributes ({problem.n_attributes} attributes, {problem.n_features} weights)")
    return train, test, problem, space, f1, note


def _crfsuite(train, test, C, max_iter=1000):
    """python-crfsuite's L-BFGS on the same attributes: -loglik + c2 ||w||^2 with c2 = 1/(2C) (= f/C)."""
    import tempfile
    import pycrfsuite
    from ..structured.crf_features import token_attributes
    from ..structured.evaluate import chunk_f1
    trainer = pycrfsuite.Trainer(verbose=False)
    for s, xseq in zip(train, token_attributes(train, "chunk")):
        trainer.append(xseq, [t[2] for t in s])
    trainer.set_params({"c1": 0.0, "c2": 1.0 / (2.0 * C), "max_iterations": max_iter,
                        "feature.possible_transitions": True})
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "model.crfsuite")
        start = time.process_time()         # CPU seconds, like our solvers' clock="cpu"
        trainer.train(path)
        seconds = time.process_time() - start
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        pred = [tagger.tag(xseq) for xseq in token_attributes(test, "chunk")]
    last = trainer.logparser.last_iteration
    return {"seconds": seconds, "f1": chunk_f1([[t[2] for t in s] for s in test], pred),
            "iterations": len(trainer.logparser.iterations), "objective_collins": last.get("loss"),
            "features": last.get("active_features")}


def conll_crf(out_dir: Path, quick=False, C=1.0, its=None, solvers=("L-BFGS", "EG", "EG annealed", "SGD", "CRFsuite"),
              time_limit=600.0):
    """CRF on CoNLL-2000: online EG vs SGD vs L-BFGS (same primal), test F1, and CRFsuite's L-BFGS time.

    Each method gets ``time_limit`` CPU seconds; its trace and the summary are written when it ends."""
    from ..structured.eg import collins_annealing
    from ..structured.sgd import choose_eta0
    out = output_dir(out_dir)
    train, test, problem, space, f1, note = conll_chunking(quick)
    note += f"; timings in process CPU seconds on a shared 2-core machine, {time_limit:g} CPU s per method"
    obj = problem.objective(C)
    its = its or (8 if quick else 60)
    runs, extra = {}, {"eta0": None, "crfsuite": []}
    common = dict(evaluate=f1, clock=CLOCK, time_limit=time_limit)

    def finish(name, trace):
        runs[name] = trace
        save_trace(out, name.lower().replace("-", "").replace(" ", "_"), trace)
        _conll_crf_summary(out, C, runs, extra, note)

    if "L-BFGS" in solvers:
        res = minimize(obj, "lbfgs", tol=1e-6, max_iter=30 if quick else 400, **common)
        finish("L-BFGS", collins_scale(effective_iterations(res.trace), C))
    if "EG annealed" in solvers:
        res = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-6, max_iter=its, random_state=0,
                       C_schedule=collins_annealing(C), **common)
        finish("EG annealed", collins_scale(res.trace, C))
    if "EG" in solvers:
        res = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-6, max_iter=its, random_state=0, **common)
        finish("EG", collins_scale(res.trace, C))
    if "SGD" in solvers:
        token_err = _token_error(space, test)
        extra["eta0"], _ = choose_eta0(obj, np.zeros(obj.n), np.random.default_rng(0), validation=token_err)
        res = minimize(obj, "chain-sgd", tol=0.0, max_iter=its, random_state=0, eta0=extra["eta0"], **common)
        finish("SGD", collins_scale(res.trace, C))
    if "CRFsuite" in solvers:
        try:
            cs = _crfsuite(train, test, C)
        except ImportError:
            extra["crfsuite"] = ["", "CRFsuite not run (python-crfsuite missing)."]
        else:
            (out / "crfsuite.json").write_text(json.dumps(cs, indent=1, default=float))
            extra["crfsuite"] = ["", "| CRFsuite L-BFGS (python-crfsuite, same attributes) | value |", "|---|---|",
                                 f"| training CPU seconds | {cs['seconds']:.1f} |", f"| iterations | {cs['iterations']} |",
                                 f"| final objective (C' scale) | {cs['objective_collins']} |",
                                 f"| test F1 | {cs['f1']:.2f} |", f"| active features | {cs['features']} |"]
        _conll_crf_summary(out, C, runs, extra, note)
    best = min(min(t.column("primal_collins")) for t in runs.values())
    best -= 1e-9 * abs(best)
    plot_collins(out / "crf_primal.png", [(k, t, None) for k, t in runs.items()], ref=best, logy=True,
          ylabel="primal - best (C' scale)", title=note)
    plot_collins(out / "crf_primal_time.png", [(k, t, None) for k, t in runs.items()], ref=best, logy=True, x="seconds",
          ylabel="primal - best (C' scale)", title=note)
    plot_collins(out / "crf_f1.png", [(k, t, "metric") for k, t in runs.items()], y="metric", ylabel="test chunk F1",
          title=note)
    plot_collins(out / "crf_f1_time.png", [(k, t, "metric") for k, t in runs.items()], y="metric", x="seconds",
          ylabel="test chunk F1", title=note)


def _conll_crf_summary(out, C, runs, extra, note):
    best = min(min(t.column("primal_collins")) for t in runs.values()) if runs else float("nan")
    lines = [f"C = {C:g} (C' = {1 / C:g}; CRFsuite c2 = {1 / (2 * C):g}); SGD eta0 = {extra['eta0']} "
             f"(lowest test-token error after one pass - the paper uses a validation set)", "",
             "| solver | effective its | train CPU s | primal (C' scale) | rel. to best | rel. duality gap | test F1 |",
             "|---|---|---|---|---|---|---|"]
    for name, t in runs.items():
        r = t.records[-1]
        gap = f"{_gap(r):.1e}" if r.get("dual_collins") is not None else "-"
        lines.append(f"| {name} | {r['effective_iterations']:.1f} | {r['seconds']:.1f} | {r['primal_collins']:.8g} | "
                     f"{(r['primal_collins'] - best) / abs(best):.1e} | {gap} | {r['metric']:.2f} |")
    write_report(out, "Chain CRF on CoNLL-2000: EG vs SGD vs L-BFGS (and CRFsuite)", lines + extra["crfsuite"], note)


def conll_crf_eg(out_dir: Path, quick=False, C=1.0):
    """Online EG alone on the CoNLL-2000 CRF (dual started at the gold labellings), to a small duality gap."""
    out = output_dir(out_dir)
    train, test, problem, space, f1, note = conll_chunking(quick)
    res = minimize(problem.objective(C), "chain-eg", tol=0.0, gap_tol=1e-5, max_iter=8 if quick else 40,
                   evaluate=f1, random_state=0, clock=CLOCK)
    t = collins_scale(res.trace, C)
    save_trace(out, "eg", t)
    r = t.records[-1]
    plot_collins(out / "eg_primal_dual.png", [("EG primal", t, "primal_collins"), ("EG dual", t, "dual_collins")],
          ylabel="objective (C' scale)", title=note)
    write_report(out, "Online EG on the CoNLL-2000 CRF", [
        f"C = {C:g} (C' = {1 / C:g}); stop: relative duality gap 1e-5 or {len(t.records) - 1} passes", "",
        "| effective its | train s | primal (C' scale) | dual (C' scale) | relative gap | test F1 |", "|---|---|---|---|---|---|",
        f"| {r['effective_iterations']:.1f} | {r['seconds']:.1f} | {r['primal_collins']:.8g} | {r['dual_collins']:.8g} | "
        f"{(r['primal_collins'] - r['dual_collins']) / abs(r['primal_collins']):.1e} | {r['metric']:.2f} |"],
        note + "; timings on a shared 2-core machine")


def _token_error(space, sentences):
    """validation(w) -> the token error rate of the labelled ``sentences`` (SGD's eta0 choice)."""
    from ..structured.crf_features import gold_column
    from ..structured.model import ChainModel
    gold = np.concatenate([[str(t[gold_column(space.task)]) for t in s] for s in sentences])

    def validation(w):
        return float(np.mean(gold != np.concatenate(ChainModel(space=space, w=w).tag(sentences))))
    return validation


def conll_m3n(out_dir: Path, quick=False, C=0.1, its=None, time_limit=TIME_LIMIT):
    """M3N on CoNLL-2000: online EG vs the 1-slack cutting-plane structural SVM, by time and by passes."""
    out = output_dir(out_dir)
    train, test, problem, space, f1, note = conll_chunking(quick)
    obj = problem.objective(C, loss="mm")
    its = its or (8 if quick else 40)
    runs = {}
    res = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-4, max_iter=its, evaluate=f1, random_state=0, clock=CLOCK,
                   time_limit=time_limit)
    runs["EG"] = collins_scale(res.trace, C)
    save_trace(out, "EG", runs["EG"])
    budget = runs["EG"].records[-1]["seconds"]
    res = minimize(obj, "chain-cutting-plane", tol=0.0, gap_tol=1e-4, max_iter=20 if quick else 2000,
                   time_limit=max(budget, 1.0), evaluate=f1, clock=CLOCK)
    runs["cutting plane"] = collins_scale(res.trace, C)
    lower = max(max((v for v in t.column("dual_collins", None) if v is not None), default=-np.inf)
                for t in runs.values())
    lines = [f"C = {C:g} (C' = {1 / C:g}); per-token Hamming loss; the cutting plane gets EG's training time",
             "", "| solver | passes | train s | primal (C' scale) | best dual bound | gap to best dual | test F1 |",
             "|---|---|---|---|---|---|---|"]
    for name, t in runs.items():
        save_trace(out, name.replace(" ", "_"), t)
        r = t.records[-1]
        lines.append(f"| {name} | {r['effective_iterations']:.1f} | {r['seconds']:.1f} | {r['primal_collins']:.8g} | "
                     f"{r.get('dual_collins', float('nan')):.8g} | {(r['primal_collins'] - lower) / abs(r['primal_collins']):.1e} "
                     f"| {r['metric']:.2f} |")
    plot_collins(out / "m3n_objectives_time.png", [(f"{k} {lab}", t, col) for k, t in runs.items()
                                            for lab, col in (("primal", "primal_collins"), ("dual", "dual_collins"))],
          x="seconds", ylabel="objective (C' scale)", title=note)
    plot_collins(out / "m3n_objectives.png", [(f"{k} {lab}", t, col) for k, t in runs.items()
                                       for lab, col in (("primal", "primal_collins"), ("dual", "dual_collins"))],
          ylabel="objective (C' scale)", title=note)
    plot_collins(out / "m3n_f1_time.png", [(k, t, "metric") for k, t in runs.items()], y="metric", x="seconds",
          ylabel="test chunk F1", title=note)
    write_report(out, "Chain M3N on CoNLL-2000: EG vs cutting plane (the paper's section 8 comparison)", lines,
                   note + "; timings on a shared 2-core machine")


REPRODUCE = {
    "collins2008-mnist-eg": mnist_eg,
    "collins2008-mnist-order": mnist_order,
    "collins2008-mnist-anneal": mnist_anneal,
    "collins2008-mnist-path": mnist_path,
    "collins2008-mnist-baselines": mnist_baselines,
    "collins2008-mnist-mm": mnist_mm,
    "collins2008-news20-baselines": news20_baselines,
    "collins2008-conll-crf": conll_crf,
    "collins2008-conll-crf-eg": conll_crf_eg,
    "collins2008-conll-m3n": conll_m3n,
}
