"""The import layering of calcheck, read from the source (AST), not from a running import.

Module names are the installed ones (``calcheck.bounds.gr21``); the layer of a module is
the part after ``calcheck.``. The top-level ``calcheck`` package (the public surface) may
import every layer; nothing inside a layer imports it.

* ``bounds`` imports nothing of ours;
* ``simulations`` may import ``bounds``, never ``theory_checks`` or ``figures``;
* ``figures`` may import ``bounds`` and ``simulations``, never ``theory_checks``;
* ``theory_checks`` (the CLI and the HTML report are its front end) may import all three;
* no import cycle among modules;
* a per-paper module (``bounds/<paper>*.py``, ``simulations/experiments/<paper>*.py``,
  ``theory_checks/catalog/<paper>.py``, ``figures/<paper>/``) imports only generic modules
  and modules of its own paper;
* inside ``theory_checks`` the sub-packages import only downward, in the order of
  :data:`THEORY_CHECKS_ORDER` (``report`` and ``study`` are peers: neither imports the other),
  and no module sits at its top but ``__init__``;
* no function is longer than about 80 lines (its docstring not counted) or takes more than
  8 parameters, except the
  catalog's tables of checks (:data:`CATALOG_TABLE_LINES`) and the public functions whose
  keywords are the documented API (:data:`PUBLIC_KEYWORD_APIS`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bounds", "simulations", "theory_checks", "figures")
PAPERS = ("gr21", "gpr20", "gr22", "klm19", "nch14")
ALLOWED = {
    "bounds": set(),
    "simulations": {"bounds"},
    "theory_checks": {"bounds", "simulations", "figures"},
    "figures": {"bounds", "simulations"},
    "calcheck": {"bounds", "simulations", "theory_checks", "figures"},
}
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 8
#: A catalog module's table of checks reads as a list (one entry per guarantee and control):
#: it may run longer than a function that computes.
CATALOG_TABLE_LINES = 120
#: Functions whose keyword options are a documented API that callers name
#: (``calcheck.search(..., budget=..., n_jobs=...)``, a figure's cached experiment): their
#: parameter lists are promises; their bodies are still under the length limit.
PUBLIC_KEYWORD_APIS = {
    "calcheck.simulations.search.coordinate_refine",
    "calcheck.figures.gr21.credit.credit_experiment",
    "calcheck.theory_checks.search.driver.search",
    "calcheck.theory_checks.search.power.search_power",
    "calcheck.theory_checks.search.rates.rate_worst_law",
    "calcheck.theory_checks.running.plan.plan",
    "calcheck.theory_checks.running.verify.verify",
    "calcheck.theory_checks.running.runner.run_checks",
    "calcheck.simulations.engine.run_experiments",
    "calcheck.figures.registry.regenerate",
}
#: The sub-packages of theory_checks, lowest first: a module imports its own sub-package and
#: those of a lower rank (docs/developer.md draws the map).
THEORY_CHECKS_ORDER = {
    "results": 0,
    "checks": 1,
    "series": 2,
    "catalog": 3,
    "user": 4,
    "running": 5,
    "search": 6,
    "report": 7,
    "study": 7,
    "cli": 8,
}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in (*PACKAGES, "calcheck"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(["calcheck", *parts] if pkg != "calcheck" else parts)] = path
    return out


def _layer(name: str) -> str:
    """``calcheck.bounds.gr21`` -> ``bounds``; the top-level package is ``calcheck``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else "calcheck"


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Our modules imported by ``name`` (absolute and relative, at any depth)."""
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                stem = base[: len(base) - node.level + 1]
                mod = ".".join(stem + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from pkg import x`` imports the module pkg.x when there is one, else pkg
            targets = [
                f"{mod}.{a.name}" if f"{mod}.{a.name}" in MODULES else mod for a in node.names
            ]
        else:
            continue
        for t in targets:
            if t.split(".")[0] == "calcheck":
                # the longest prefix that is one of our modules
                parts = t.split(".")
                while parts and ".".join(parts) not in MODULES:
                    parts.pop()
                if parts:
                    found.add(".".join(parts))
    found.discard(name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _paper_of(name: str) -> str | None:
    for part in name.split(".")[2:]:
        for paper in PAPERS:
            if part == paper or part.startswith(paper + "_") or part.startswith(paper):
                return paper
    return None


@pytest.mark.parametrize("name", sorted(MODULES))
def test_layers(name):
    layer = _layer(name)
    foreign = {m for m in GRAPH[name] if _layer(m) not in ALLOWED[layer] | {layer}}
    assert not foreign, f"{name} imports {sorted(foreign)} across the layering"


def test_no_import_cycle():
    # Tarjan-free check: depth-first search with colours.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(GRAPH.get(m, ())):
            if d in MODULES and state.get(d) == 1:
                cycle = [*stack[stack.index(d) :], d]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if d in MODULES and d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m)


@pytest.mark.parametrize("name", sorted(m for m in MODULES if _paper_of(m)))
def test_paper_modules_import_only_generic_code_and_their_own_paper(name):
    own = _paper_of(name)
    other = {m for m in GRAPH[name] if _paper_of(m) not in (None, own)}
    assert not other, f"{name} ({own}) imports other papers' modules {sorted(other)}"


def test_generic_modules_import_no_paper_module():
    # Indexes (a registry of papers) are the exception: they list every paper.
    indexes = {
        "calcheck.bounds",
        "calcheck.bounds.registry",
        "calcheck.theory_checks.catalog",
        "calcheck.figures.registry",
    }
    for name in MODULES:
        if _paper_of(name) is None and name not in indexes:
            papers = {m for m in GRAPH[name] if _paper_of(m)}
            assert not papers, f"generic module {name} imports paper modules {sorted(papers)}"


def _docstring_lines(node) -> int:
    """Lines of a function's docstring: a public function's numpydoc is not code to split."""
    first = node.body[0] if node.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first.end_lineno - first.lineno + 1
    return 0


def long_functions(name: str, source: str) -> list[str]:
    """Functions of ``name`` over the length or parameter limits (see the module docstring)."""
    lines_allowed = MAX_FUNCTION_LINES
    if _sub_package(name) == "catalog":
        lines_allowed = CATALOG_TABLE_LINES
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = node.end_lineno - node.lineno + 1 - _docstring_lines(node)
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if params and params[0].arg in ("self", "cls"):
            params = params[1:]
        if length > lines_allowed:
            found.append(f"{name}.{node.name} (line {node.lineno}): {length} lines")
        if len(params) > MAX_PARAMETERS and f"{name}.{node.name}" not in PUBLIC_KEYWORD_APIS:
            found.append(f"{name}.{node.name} (line {node.lineno}): {len(params)} parameters")
    return found


@pytest.mark.parametrize("name", sorted(MODULES))
def test_functions_are_short(name):
    assert long_functions(name, MODULES[name].read_text()) == []


def test_the_function_rule_fails_when_broken():
    body = "\n".join(f"    x{i} = {i}" for i in range(81))
    source = f"def long(a, b, c, d, e, f, g, h, i):\n{body}\n"
    assert long_functions("calcheck.simulations.store", source) == [
        "calcheck.simulations.store.long (line 1): 82 lines",
        "calcheck.simulations.store.long (line 1): 9 parameters",
    ]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_through_the_calcheck_namespace(name):
    # ``import bounds`` works only in a source tree: the wheel installs ``calcheck`` alone.
    bare = []
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Import):
            bare += [a.name for a in node.names if a.name.split(".")[0] in PACKAGES]
        elif (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module
            and node.module.split(".")[0] in PACKAGES
        ):
            bare.append(node.module)
    assert not bare, f"{name} imports {bare}; write calcheck.{bare[0]}"


def _sub_package(name: str) -> str | None:
    """``calcheck.theory_checks.running.exact`` -> ``running``; None outside theory_checks."""
    parts = name.split(".")
    if parts[:2] != ["calcheck", "theory_checks"] or len(parts) < 3:
        return None
    return parts[2]


def test_theory_checks_has_only_sub_packages_at_its_top():
    top = sorted(p.name for p in (ROOT / "theory_checks").glob("*.py"))
    assert top == ["__init__.py"], f"modules at the top of theory_checks: {top}"
    subs = sorted(
        p.name for p in (ROOT / "theory_checks").iterdir() if (p / "__init__.py").is_file()
    )
    assert subs == sorted(THEORY_CHECKS_ORDER), subs


def upward_imports(graph: dict) -> list[str]:
    """Every import inside theory_checks that goes up or sideways in THEORY_CHECKS_ORDER."""
    found = []
    for name, targets in sorted(graph.items()):
        here = _sub_package(name)
        if here is None:
            continue
        for target in sorted(targets):
            there = _sub_package(target)
            if there is None or there == here:
                continue
            if THEORY_CHECKS_ORDER[there] >= THEORY_CHECKS_ORDER[here]:
                found.append(f"{name} -> {target}")
    return found


def test_theory_checks_sub_packages_import_only_downward():
    assert upward_imports(GRAPH) == []


def test_the_order_rule_fails_when_broken():
    # an import of the runner from the codec (results < running) is reported
    broken = {
        **GRAPH,
        "calcheck.theory_checks.results.export": {"calcheck.theory_checks.running.runner"},
    }
    assert upward_imports(broken) == [
        "calcheck.theory_checks.results.export -> calcheck.theory_checks.running.runner"
    ]
    # and so is one between the peers report and study
    broken = {"calcheck.theory_checks.study.files": {"calcheck.theory_checks.report.html"}}
    assert upward_imports(broken) == [
        "calcheck.theory_checks.study.files -> calcheck.theory_checks.report.html"
    ]


def _unit(name: str) -> str:
    """What a private name may not leave: a theory_checks sub-package, else a layer."""
    sub = _sub_package(name)
    return f"theory_checks.{sub}" if sub is not None else _layer(name)


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _resolve(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    stem = base[: len(base) - node.level + 1]
    return ".".join(stem + ([node.module] if node.module else []))


def private_reach(name: str, source: str, path: Path) -> list[str]:
    """Private names (``_x``, or a module ``_x``) of another unit that ``name`` uses."""
    found = []
    modules_bound = {}  # local name -> our module it names
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            source_module = _resolve(name, path, node)
            for alias in node.names:
                full = f"{source_module}.{alias.name}"
                target = full if full in MODULES else source_module
                if target not in MODULES or _unit(target) == _unit(name):
                    if full in MODULES:
                        modules_bound[alias.asname or alias.name] = full
                    continue
                parts = full.split(".")[1:]
                if any(_is_private(p) for p in parts):
                    found.append(f"{name} imports {full}")
                if full in MODULES:
                    modules_bound[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and _unit(alias.name) != _unit(name):
                    if any(_is_private(p) for p in alias.name.split(".")):
                        found.append(f"{name} imports {alias.name}")
                    if alias.asname:
                        modules_bound[alias.asname] = alias.name
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules_bound
            and _unit(modules_bound[node.value.id]) != _unit(name)
            and _is_private(node.attr)
        ):
            found.append(f"{name} uses {modules_bound[node.value.id]}.{node.attr}")
    return sorted(set(found))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_crosses_a_layer_or_sub_package(name):
    path = MODULES[name]
    assert private_reach(name, path.read_text(), path) == []


def test_the_private_rule_fails_when_broken():
    name = "calcheck.theory_checks.user.guarantees"
    path = MODULES[name]
    source = (
        "from calcheck.bounds import registry\n"
        "from calcheck.simulations.calibrators.binning import _fit\n"
        "from ..catalog import _USER_STUDIES\n"
        "registry._REGISTRY.pop('x')\n"
        "from .calibrators import _own_helper\n"  # its own sub-package: allowed
    )
    here = "calcheck.theory_checks.user.guarantees"
    assert private_reach(name, source, path) == [
        f"{here} imports calcheck.simulations.calibrators.binning._fit",
        f"{here} imports calcheck.theory_checks.catalog._USER_STUDIES",
        f"{here} uses calcheck.bounds.registry._REGISTRY",
    ]
