"""Every guarantee check exercises the registered bound it reports on.

``calcheck bound ID`` evaluates the registered function of a guarantee; a check that reports
on that guarantee must call the same function, or a broken bound could pass its check. Each
guarantee check of the quick budget is evaluated on a store simulated at 100 replicates with
its guarantee's registered function replaced by one that raises: the evaluation must fail.
Checks that by design read no registered value are listed with the reason (data, not code).
"""

import dataclasses

import pytest

from calcheck.bounds import registry
from calcheck.simulations.engine import run_experiments
from calcheck.simulations.store import ResultStore
from calcheck.theory_checks.catalog import all_checks
from calcheck.theory_checks.results.evidence import is_sure_claim
from calcheck.theory_checks.results.roles import role_of

REPS = 100
SEED = 0

#: Guarantee checks that do not evaluate their registered function, and why (data, not code).
READS_NO_REGISTERED_VALUE = {
    "gpr20.thm5.well_balanced": "a step of Theorem 5's proof (Lemma 13: every bin mass in "
    "[1/(2B), 2/B]), whose threshold is fixed by the event, not by the theorem's radius",
    "gpr20.cor1": "the trade-off claims the proof's P(width >= 1/2) >= 1 - 2 alpha, not the "
    "registered E|C| >= 1/2 - alpha (gpr20.cor1's function)",
    "gpr20.cor1.premise": "the premise (the atom-wise interval covers): a constant bound",
}

#: Guarantee checks whose registered function is evaluated inside the simulation (the
#: radius along a stream, a conditional target), with the experiment module's name for it.
CALLED_IN_THE_SIMULATION = {
    "gpr20.thm6": ("calcheck.simulations.experiments.gpr20", "gpr20", "thm6_halfwidth"),
    "gpr20.thm6.intermediate": (
        "calcheck.simulations.experiments.gpr20",
        "gpr20",
        "thm6_halfwidth_intermediate",
    ),
    "klm19.def52": ("calcheck.simulations.experiments.klm19", "klm19", "def52_conditional_mean"),
}


def _guarantee_checks():
    out = []
    for c in all_checks("quick"):
        if role_of(c) != "guarantee":
            continue
        if is_sure_claim(getattr(c, "claim", "")):
            continue  # deterministic statements: identities, counted apart
        out.append(c)
    return out


CHECKS = _guarantee_checks()


class RegisteredBoundCalled(Exception):
    """Raised by the stand-in for a guarantee's registered function."""


def _raising(*args, **kwargs):
    raise RegisteredBoundCalled("the registered bound was called")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("called") / "store.sqlite"
    with ResultStore(path) as s:
        experiments = {e.key: e for c in CHECKS for e in c.simulations()}
        run_experiments(list(experiments.values()), REPS, SEED, s)
        yield s


def _chain(error):
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_a_raising_registered_bound_fails_its_check(check, store, monkeypatch, tmp_path):
    if check.id in READS_NO_REGISTERED_VALUE:
        pytest.skip(READS_NO_REGISTERED_VALUE[check.id])
    if check.id in CALLED_IN_THE_SIMULATION:
        _raising_inside_the_simulation(check, monkeypatch, tmp_path)
        return
    g = registry.get(check.guarantee)
    monkeypatch.setitem(registry._REGISTRY, g.id, dataclasses.replace(g, function=_raising))
    with pytest.raises(Exception) as caught:  # noqa: PT011 - any error, chained or not
        check.evaluate(store, REPS, SEED)
    assert any(isinstance(e, RegisteredBoundCalled) for e in _chain(caught.value)), (
        f"{check.id} failed, but not by calling {g.id}'s registered bound: {caught.value!r}"
    )


def _raising_inside_the_simulation(check, monkeypatch, folder):
    """The registered function is the one the simulation calls, and a raising one fails it."""
    import importlib

    module_name, bounds_name, function = CALLED_IN_THE_SIMULATION[check.id]
    bounds_module = getattr(importlib.import_module(module_name), bounds_name)
    assert registry.get(check.guarantee).function is getattr(bounds_module, function)
    monkeypatch.setattr(bounds_module, function, _raising)
    experiment = check.simulations()[0]
    with ResultStore(folder / "s.sqlite") as s, pytest.raises(Exception) as caught:  # noqa: PT011
        run_experiments([experiment], REPS, SEED, s)
    assert any(isinstance(e, RegisteredBoundCalled) for e in _chain(caught.value))


def test_every_guarantee_with_a_check_is_covered():
    assert {c.guarantee for c in CHECKS} >= {"gr21.thm3", "gpr20.thm4", "klm19.def52"}
