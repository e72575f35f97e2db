"""Reproductions of the papers' experiments, one function per figure or table.

Each module defines ``REPRODUCE = {name: function(out_dir, quick=False)}``;
this package merges them for ``loglin reproduce NAME``.
"""
import importlib

_MODULES = ("huang2010", "yu2011", "collins2008", "collins2008_parsing")


def _collect():
    found = {}
    for name in _MODULES:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        found.update(getattr(mod, "REPRODUCE", {}))
    return found


REPRODUCE = _collect()
