"""The state a solver needs to continue exactly where it stopped (``--resume``), kept next to the model.

A resumed run that starts from the weights alone restarts L-BFGS without its (s, y) pairs and TRON
with a fresh trust region, so it takes different (more) iterations than a run that was never
stopped. A :class:`SolverCheckpoint` passed to :func:`loglin.training.train` (``checkpoint=``) is
filled by the solvers of :data:`RESUMABLE` after every outer iteration and, when it already holds
their state, makes them start from it: k iterations, a stop, and m resumed iterations give the
iterates of k + m uninterrupted ones.

On disk it is a plain ``.npz`` of arrays (loaded with ``allow_pickle=False``), written atomically
next to the model (:func:`checkpoint_path`) with the digest of the model's weights: a checkpoint
whose model file has changed since is not used.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from ..errors import InvalidInputError
from ..outputs import atomic_write

RESUMABLE = ("lbfgs", "tron")      # the solvers that record and restore their state
FORMAT = "loglin-solver-state"


def checkpoint_path(model_path) -> Path:
    """Where the solver state of the model file ``model_path`` lives: ``NAME.solver.npz`` beside it."""
    path = Path(model_path)
    stem = path.name[:-4] if path.name.endswith(".npz") else path.name
    return path.with_name(stem + ".solver.npz")


def weights_digest(w) -> str:
    return hashlib.sha256(np.ascontiguousarray(w, dtype=np.float64).tobytes()).hexdigest()


class SolverCheckpoint:
    """``solver`` (name), ``arrays`` (the iterate ``w`` and the solver's vectors) and ``scalars`` of the
    last completed outer iteration; empty (``solver`` None) until a resumable solver has recorded."""

    def __init__(self, solver: str | None = None, arrays: dict | None = None, scalars: dict | None = None):
        self.solver = solver
        self.arrays = dict(arrays or {})
        self.scalars = dict(scalars or {})

    def holds(self, solver: str) -> bool:
        """True when this is the state of ``solver`` (a run of another solver starts afresh)."""
        return self.solver == solver and "w" in self.arrays

    def record(self, solver: str, arrays: dict, scalars: dict) -> None:
        """After an outer iteration: the arrays are kept by reference (the solver does not change them
        until its next iteration is complete), so ``w`` must be a copy when the solver updates it in place
        before it can fail (a lost shard in TRON's ``accept``)."""
        self.solver, self.arrays, self.scalars = solver, arrays, scalars

    def restore(self, solver: str, n: int, arrays: tuple) -> dict:
        """The arrays named ``arrays`` (copies) and the scalars, checked against a problem of n weights."""
        out = {}
        for name in arrays:
            a = np.array(self.arrays[name], dtype=np.float64)
            if a.shape[-1] != n and name != "rho":
                raise InvalidInputError(f"the {solver} checkpoint holds vectors of length {a.shape[-1]}, "
                                        f"the problem has {n} weights")
            out[name] = a
        return {**out, **self.scalars}

    def save(self, path, model_w) -> None:
        """Write atomically to ``path`` with the digest of the model's weights ``model_w``."""
        payload = {f"array_{k}": np.asarray(v) for k, v in self.arrays.items()}
        payload.update({f"scalar_{k}": np.asarray(v) for k, v in self.scalars.items()})
        payload.update(format=np.asarray(FORMAT), solver=np.asarray(self.solver),
                       model_digest=np.asarray(weights_digest(model_w)))
        with atomic_write(Path(path)) as fh:
            np.savez(fh, **payload)

    @classmethod
    def load(cls, path, model_w) -> "SolverCheckpoint | None":
        """The checkpoint at ``path`` if it exists and was written with the model whose weights are
        ``model_w``; else None."""
        path = Path(path)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["format"]) != FORMAT or str(data["model_digest"]) != weights_digest(model_w):
                    return None
                arrays = {k[6:]: data[k] for k in data.files if k.startswith("array_")}
                scalars = {k[7:]: data[k].item() for k in data.files if k.startswith("scalar_")}
                return cls(str(data["solver"]), arrays, scalars)
        except (OSError, ValueError, KeyError):
            return None


def keep_solver_state(output, checkpoint, converged: bool, model_w) -> None:
    """Beside the model file ``output``: the solver state when the run stopped before converging (Ctrl-C, a
    lost shard, an iteration or time limit); a converged run removes a state left by an earlier one."""
    if not Path(output).is_file():      # a model written to a device or a pipe has no "beside"
        return
    path = checkpoint_path(output)
    if checkpoint is not None and checkpoint.solver is not None and not converged:
        checkpoint.save(path, model_w)
    elif path.is_file():
        os.remove(path)
