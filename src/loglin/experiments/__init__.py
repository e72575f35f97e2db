"""Reproductions of the papers' experiments, as configuration over one harness.

* :mod:`.harness` - racing solvers, the reference optimum, times to a level, claims with verdicts,
  summaries and convergence plots (what every experiment shares);
* :mod:`.datasets` - the papers' data sets as the experiments use them (a missing one raises
  :class:`loglin.errors.DataUnavailable`);
* one module per paper figure group, each defining ``REPRODUCE = {name: function(out_dir, quick=False,
  **options)}``; this package merges them for ``loglin reproduce NAME`` (outputs go to ``runs/NAME``).
"""
import importlib

_MODULES = ("huang2010", "huang2010_fig2", "yu2011", "yu2011_fig3", "collins2008", "collins2008_parsing")


def _collect():
    found = {}
    for name in _MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        found.update(mod.REPRODUCE)
    return found


REPRODUCE = _collect()
