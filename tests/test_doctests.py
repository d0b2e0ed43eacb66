"""The docstring examples of the public surface run as doctests (the docs show them)."""

import doctest
import importlib

import pytest

# the modules whose docstrings document calcheck's public surface (calcheck.__all__)
PUBLIC_MODULES = (
    "calcheck.theory_checks.running.verify",
    "calcheck.theory_checks.running.exact",
    "calcheck.theory_checks.search.driver",
    "calcheck.theory_checks.running.controls",
    "calcheck.theory_checks.user.guarantees",
    "calcheck.testing",
    "calcheck.theory_checks.running.plan",
    "calcheck.theory_checks.report.from_results",
    "calcheck.theory_checks.report.pictures",
    "calcheck.theory_checks.results.export",
    "calcheck.simulations.exact_coverage",
    "calcheck.plugin",
    "calcheck.bounds.registry",
    "calcheck.simulations.laws.spec",
    "calcheck.simulations.laws.eta",
    "calcheck.simulations.laws.binary",
)


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_docstring_examples(module):
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder(exclude_empty=True)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    runner = doctest.DocTestRunner(optionflags=flags)
    tests = [t for t in finder.find(mod, module) if t.examples]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} doctest example(s) of {module} failed"


def test_every_public_function_has_an_example():
    import calcheck

    missing = []
    for name in calcheck.__all__:
        obj = getattr(calcheck, name)
        if name in ("LAWS", "testing"):
            continue
        if "Examples\n" not in (obj.__doc__ or ""):
            missing.append(name)
    assert not missing, f"public names without an Examples section: {missing}"
