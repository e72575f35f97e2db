"""The training trace: one record per outer iteration, as data.

Columns every solver fills: iteration, seconds (training time only),
objective (primal, in the scale of ``-C``), grad_norm, rel_grad
(||grad|| / ||grad f(0)||), metric (held-out, if asked). Dual solvers add
dual_objective and duality_gap; others add their own counters (exp/log
operations, Newton and line-search steps, CG iterations, ...).
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path


class Trace:
    def __init__(self, solver: str = "", meta: dict | None = None):
        self.solver = solver
        self.meta = dict(meta or {})
        self.records: list[dict] = []

    def add(self, **fields) -> dict:
        record = {k: v for k, v in fields.items() if v is not None}
        self.records.append(record)
        return record

    def __len__(self):
        return len(self.records)

    def __iter__(self):
        return iter(self.records)

    def column(self, name, default=math.nan):
        return [r.get(name, default) for r in self.records]

    @property
    def columns(self) -> list[str]:
        seen = {}
        for r in self.records:
            for k in r:
                seen.setdefault(k, None)
        return list(seen)

    def to_csv(self, path):
        path = Path(path)
        cols = self.columns
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=["solver"] + cols)
            writer.writeheader()
            for r in self.records:
                writer.writerow({"solver": self.solver, **r})

    def to_dict(self) -> dict:
        return {"solver": self.solver, "meta": self.meta, "records": self.records}

    def to_json(self, path):
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, default=float))

    @classmethod
    def from_json(cls, path) -> "Trace":
        data = json.loads(Path(path).read_text())
        t = cls(data.get("solver", ""), data.get("meta"))
        t.records = list(data.get("records", []))
        return t

    def save(self, path):
        """Write CSV or JSON according to the file extension."""
        if str(path).lower().endswith(".json"):
            self.to_json(path)
        else:
            self.to_csv(path)
