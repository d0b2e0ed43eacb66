"""calcheck: verify distribution-free calibration guarantees by exact Monte Carlo.

The public surface (stable; everything else is reachable through the layers below but may
change between versions):

Checking
    :func:`verify` (a guarantee on a law), :func:`search` (the worst law of a family, at
    a :class:`SearchBudget`),
    :func:`exact_coverage` (exact coverage at constant eta, where it applies, with the
    certificate over every law beside it; at a given radius: :func:`coverage_at_radius`,
    and the smallest radius that covers: :func:`smallest_exact_eps`),
    :func:`certified_coverage` (a lower bound over every law at given sizes, gr21 Lemma 2's
    reduction), :func:`critical_factor` (the smallest multiple of a bound that still holds:
    its tightness, certified or exact),
    :func:`sharper_control` (the bound times a factor below the detectable one, on a
    fresh seed), :func:`plan` (the replicates that detect a shortfall at a power, a
    :class:`ReplicatePlan`), and :mod:`calcheck.testing` (``assert_guarantee_holds`` /
    ``assert_guarantee_violated`` / ``assert_tightness``).
Results out
    every result has ``to_dict`` / ``to_json`` / ``to_frame``; :func:`report` writes the
    report of ``calcheck run`` (JSON, Markdown, HTML) from results computed in Python.
Guarantees
    :func:`define_guarantee` (your own bound, on a method the suite simulates or on your
    own calibrator; :func:`allow_unresolved` for one whose map varies continuously),
    :func:`list_methods` (method x event pairs and the keywords they supply),
    :func:`list_guarantees`, :func:`get_guarantee`.
Laws
    :data:`LAWS` (every shipped law by name), :class:`BinaryLaw`, :class:`ScoreLaw`,
    :class:`ConditionalMean`, :func:`law_from_spec`.
Papers of your own
    :mod:`calcheck.plugin`: the names a paper plugin (the ``calcheck.papers`` entry points)
    builds its guarantees, checks, studies and figures from. They are for paper authors,
    not for checking a bound, so they live in that module rather than at the top level.

The layers are subpackages: :mod:`calcheck.bounds` (guarantees as pure functions),
:mod:`calcheck.simulations` (laws, calibrators, metrics, the engine),
:mod:`calcheck.theory_checks` (checks, verdicts, studies, CLI, reports) and
:mod:`calcheck.figures` (the papers' figures). Names are loaded on first use, so
``import calcheck.bounds`` stays light.
"""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

# In a source checkout (and an editable install) the layers live beside this folder, at the
# repository's top level; in a wheel they are inside it. Search both places, own folder first.
_HERE = Path(__file__).resolve().parent
if not (_HERE / "bounds").is_dir() and (_HERE.parent / "bounds" / "__init__.py").is_file():
    __path__.append(str(_HERE.parent))

_LAYERS = frozenset({"bounds", "simulations", "theory_checks", "figures"})


class _Alias:
    """Loader of ``bounds.x``: the module ``calcheck.bounds.x`` itself, never a second copy."""

    def __init__(self, target: str):
        self.target = target
        self.spec: ModuleSpec | None = None

    def create_module(self, spec):
        try:
            module = importlib.import_module(self.target)
        except ModuleNotFoundError as error:
            if error.name != self.target:
                raise
            raise ModuleNotFoundError(f"No module named {spec.name!r}", name=spec.name) from None
        self.spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self.spec  # module_from_spec put the alias's spec there


class _LayerAliases:
    """Import a bare-named layer's modules as the ``calcheck.*`` modules themselves.

    Where the repository root is on the path (a source tree, an editable install), ``import
    bounds`` finds the layer by its bare name; its ``__init__`` then puts ``calcheck.bounds``
    in its place in ``sys.modules``. This finder, first on ``sys.meta_path``, does the same
    for every module below a layer so aliased (``bounds.guarantee`` is
    ``calcheck.bounds.guarantee``), so no module is loaded twice. It aliases nothing else: not a
    layer's bare name itself, nor the modules of another package that happens to be called
    ``bounds``, nor anything in a wheel, where the bare names do not exist.
    """

    calcheck_layer_aliases = True

    def find_spec(self, name, path=None, target=None):
        top, dot, _ = name.partition(".")
        if not dot or top not in _LAYERS:
            return None
        parent = sys.modules.get(top)
        if parent is None or parent is not sys.modules.get(f"calcheck.{top}"):
            return None
        return ModuleSpec(name, _Alias(f"calcheck.{name}"))


if not any(getattr(finder, "calcheck_layer_aliases", False) for finder in sys.meta_path):
    sys.meta_path.insert(0, _LayerAliases())

__version__ = "0.1.0"

#: Public name -> (module, attribute), loaded on first access (PEP 562).
_EXPORTS = {
    "verify": ("calcheck.theory_checks.running.verify", "verify"),
    "search": ("calcheck.theory_checks.search.driver", "search"),
    "SearchBudget": ("calcheck.simulations.search", "SearchBudget"),
    "exact_coverage": ("calcheck.theory_checks.running.exact", "exact_coverage"),
    "coverage_at_radius": ("calcheck.simulations.exact_coverage", "exact_coverage"),
    "smallest_exact_eps": ("calcheck.simulations.exact_coverage", "smallest_exact_eps"),
    "certified_coverage": ("calcheck.simulations.certified_coverage", "certified_coverage"),
    "critical_factor": ("calcheck.theory_checks.running.tightness", "critical_factor"),
    "sharper_control": ("calcheck.theory_checks.running.controls", "sharper_control"),
    "define_guarantee": ("calcheck.theory_checks.user.guarantees", "define_guarantee"),
    "list_methods": ("calcheck.theory_checks.catalog.method_table", "method_table"),
    "allow_unresolved": (
        "calcheck.simulations.experiments.calibrator_protocol",
        "allow_unresolved",
    ),
    "list_guarantees": ("calcheck.bounds.registry", "all_guarantees"),
    "get_guarantee": ("calcheck.bounds.registry", "get"),
    "LAWS": ("calcheck.simulations.laws", "LAWS"),
    "BinaryLaw": ("calcheck.simulations.laws", "BinaryLaw"),
    "ScoreLaw": ("calcheck.simulations.laws", "ScoreLaw"),
    "ConditionalMean": ("calcheck.simulations.laws", "ConditionalMean"),
    "law_from_spec": ("calcheck.simulations.laws", "law_from_spec"),
    "report": ("calcheck.theory_checks.report.from_results", "report"),
    "plot_coverage": ("calcheck.theory_checks.report.pictures", "plot_coverage"),
    "plan": ("calcheck.theory_checks.running.plan", "plan"),
    "ReplicatePlan": ("calcheck.theory_checks.running.plan", "ReplicatePlan"),
}

#: Public submodules, imported on first access.
_SUBMODULES = ("plugin", "testing")

__all__ = sorted([*_EXPORTS, *_SUBMODULES])


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"calcheck.{name}")
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'calcheck' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})
