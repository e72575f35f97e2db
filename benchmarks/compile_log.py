"""Which Numba kernels a command compiles or loads from the cache, and how long each takes.

    python -m benchmarks.compile_log [--json FILE] -- train data.svm --solver auto ...

Runs ``loglin.cli.main(argv)`` in this process with ``Dispatcher.compile`` wrapped: every
specialization compiled (cache miss) or loaded (cache hit) is listed with its own seconds
(wall and thread CPU time inside it minus the time of kernels it compiled or loaded while typing itself).
Use an empty ``NUMBA_CACHE_DIR`` for the cold picture.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


def install_recorder():
    """Wrap numba's Dispatcher.compile; returns the list of records it fills."""
    from numba.core.dispatcher import Dispatcher
    records, stack, names = [], [], []
    original = Dispatcher.compile

    def compile(self, sig):
        known = tuple(sigutils_args(sig)) in self.overloads
        if known:
            return original(self, sig)
        hits_before = sum(self._cache_hits.values())
        parent = names[-1] if names else None
        names.append(f"{self.py_func.__module__}.{self.py_func.__qualname__}")
        stack.append((0.0, 0.0))
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            return original(self, sig)
        finally:
            total, total_cpu = time.perf_counter() - start, time.thread_time() - start_cpu
            children, children_cpu = stack.pop()
            names.pop()
            if stack:
                stack[-1] = (stack[-1][0] + total, stack[-1][1] + total_cpu)
            records.append({"kernel": f"{self.py_func.__module__}.{self.py_func.__qualname__}",
                            "signature": str(sig), "cached": sum(self._cache_hits.values()) > hits_before,
                            "self_s": total - children, "self_cpu_s": total_cpu - children_cpu, "total_s": total, "start": start, "parent": parent})

    def sigutils_args(sig):
        from numba.core import sigutils
        return sigutils.normalize_signature(sig)[0]

    Dispatcher.compile = compile
    return records


def summary(records):
    compiled = [r for r in records if not r["cached"]]
    loaded = [r for r in records if r["cached"]]
    return {"compiled": len(compiled), "compile_s": sum(r["self_s"] for r in compiled),
            "compile_cpu_s": sum(r["self_cpu_s"] for r in compiled),
            "loaded": len(loaded), "load_s": sum(r["self_s"] for r in loaded)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the records here")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the loglin arguments")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    t0 = time.perf_counter()
    records = install_recorder()
    from loglin.cli import main as loglin_main
    code = loglin_main(command)
    wall = time.perf_counter() - t0
    for r in sorted(records, key=lambda r: -r["self_s"]):
        print(f"{r['self_s']:7.2f} {r['self_cpu_s']:6.2f} {'load' if r['cached'] else 'JIT '} {r['kernel']} {r['signature']}", file=sys.stderr)
    s = summary(records)
    print(f"compiled {s['compiled']} in {s['compile_s']:.2f} s ({s['compile_cpu_s']:.2f} s CPU), loaded {s['loaded']} in {s['load_s']:.2f} s, "
          f"process wall {wall:.2f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command, "wall_s": wall, "summary": s, "records": records}, f, indent=1)
    return code


if __name__ == "__main__":
    sys.exit(main())
