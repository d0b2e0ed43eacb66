"""Mutation testing of ``bounds/``: every mutant that changes a bound must fail a unit test.

Usage::

    python docs/tools/mutate_bounds.py [--module gr21 ...] [--exclude gr22 ...] [--full gr21 ...]
        [--line N ...] [--sample K] [--seed S] [--tests tests/bounds] [--inputs K] [--jobs J]
        [--json out.json] [--list] [--verbose]

Mutants (one change each, in one module of ``bounds/``):

* ``const``: every numeric literal (int or float; not bool, not 0, not inside an f-string)
  times 0.8 and times 1.25;
* ``log``: ``np.log(x)`` (or ``math.log(x)``) becomes ``np.log((x) / 2)``;
* ``sqrt``: ``np.sqrt(x)`` (or ``math.sqrt(x)``) becomes ``(0.9 * np.sqrt(x))``;
* ``sign``: a binary ``+`` becomes ``-`` and a binary ``-`` becomes ``+`` (``ast.BinOp``;
  string concatenation is not arithmetic and is skipped).

Each mutant is written into a temporary copy of the repository, never into the working
tree (the copies are deleted at the end; a copy's file is restored after every mutant), and
the test selection runs there, with bytecode caching off:
``python -m pytest SELECTION -x -q -p no:benchmark -n 0 -p no:cacheprovider``.
A failing, erroring or timed-out selection kills the mutant.

**Equivalent mutants** (the documented rule). A mutant the selection does not kill is
*equivalent* when every registered guarantee of the built-in papers gives the same result
as the unmutated code -- bit for bit, and the same exception type where one is raised -- at
every golden reference point of ``tests/bounds/test_golden_values.py`` (``GOLDEN``) and at
``--inputs`` seeded random valid inputs per id (its ``random_valid_inputs``). Its reason says
where it sits: a validation or error-message branch, a helper no registered bound calls, or
bound code whose change is masked at valid inputs. A surviving mutant that changes a value
there is reported as *survived*: a gap in the tests.

The summary gives, per module, the mutants generated, run, killed, survived and equivalent,
then every survivor and every equivalent mutant with its reason.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_FILE = Path("tests/bounds/test_golden_values.py")
FACTORS = (0.8, 1.25)
FUNCS = {"log", "sqrt"}
VALIDATORS = ("as_", "check_", "_ratio_bounds", "_half_open_alpha", "_sup_error", "_ce_sq")
IGNORE = shutil.ignore_patterns(
    ".git",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    "_build",
    "calcheck-results",
    ".venv",
    "node_modules",
)


@dataclass
class Mutant:
    """One source change: where it is, what it replaces, and (after a run) its verdict."""

    module: str
    line: int
    col: int
    kind: str
    original: str
    replacement: str
    function: str
    context: str
    start: int
    end: int
    status: str = "not run"
    reason: str = ""
    seconds: float = 0.0


def _byte_offsets(source: bytes) -> list[int]:
    """Byte offset of the start of every line (1-based line numbers index it)."""
    starts = [0, 0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _parents(tree: ast.AST) -> dict:
    """Child node -> parent node."""
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _call_name(node: ast.AST) -> str:
    """``np.log`` -> ``log``; ``as_open_unit`` -> ``as_open_unit``; else ''."""
    func = getattr(node, "func", None)
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _where(node: ast.AST, parents: dict) -> tuple[str, str]:
    """(outermost enclosing function or '<module>', context: validation / message / code)."""
    function, context, constant = "<module>", "code", ""
    child, node = node, parents.get(node)
    while node is not None:
        if isinstance(node, ast.FunctionDef):
            function = node.name
        if isinstance(node, ast.Raise | ast.Assert):
            context = "message" if context == "code" else context
        raises = isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body)
        if raises and child is node.test:
            context = "validation"
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            constant = node.targets[0].id  # a module-level constant (kept if outside a def)
        if isinstance(node, ast.Call) and _call_name(node).startswith(VALIDATORS):
            context = "validation"
        if isinstance(node, ast.keyword) and node.arg == "minimum":  # as_integer_array's
            context = "validation"
        child, node = node, parents.get(node)
    if function.startswith(VALIDATORS):
        context = "validation"
    if function == "<module>" and constant:
        function = f"<module: {constant}>"
    return function, context


def _is_text(node: ast.AST) -> bool:
    """A string literal, an f-string, or a sum of them (concatenation, not arithmetic)."""
    if isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    ):
        return True
    return isinstance(node, ast.BinOp) and (_is_text(node.left) or _is_text(node.right))


def _operator_span(source: bytes, node: ast.BinOp, starts: list[int]) -> tuple[int, int]:
    """Byte span of the ``+`` / ``-`` of ``node`` (between its operands, comments skipped)."""
    lo = starts[node.left.end_lineno] + node.left.end_col_offset
    hi = starts[node.right.lineno] + node.right.col_offset
    text, i = source[lo:hi], 0
    while i < len(text):
        ch = text[i : i + 1]
        if ch == b"#":
            i = text.index(b"\n", i)
        elif ch in (b"+", b"-"):
            return lo + i, lo + i + 1
        i += 1
    raise ValueError(f"no operator between the operands at line {node.lineno}")


def _span(node: ast.AST, starts: list[int]) -> tuple[int, int]:
    """Byte span of a node."""
    return starts[node.lineno] + node.col_offset, starts[node.end_lineno] + node.end_col_offset


def _changes(node: ast.AST, source: bytes, starts: list[int], skipped: dict) -> list:
    """(kind, start, end, replacement) for every mutant of one node."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        if node.value == 0:
            skipped["zero constant"] = skipped.get("zero constant", 0) + 1
            return []
        lo, hi = _span(node, starts)
        return [("const", lo, hi, repr(float(node.value) * f)) for f in FACTORS]
    if isinstance(node, ast.Call) and _call_name(node) in FUNCS and len(node.args) == 1:
        base = getattr(node.func, "value", None)
        if not (isinstance(base, ast.Name) and base.id in ("np", "math")):
            return []
        if _call_name(node) == "log":
            lo, hi = _span(node.args[0], starts)
            return [("log", lo, hi, f"({source[lo:hi].decode()}) / 2")]
        lo, hi = _span(node, starts)
        return [("sqrt", lo, hi, f"(0.9 * {source[lo:hi].decode()})")]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        if _is_text(node):
            skipped["string concatenation"] = skipped.get("string concatenation", 0) + 1
            return []
        lo, hi = _operator_span(source, node, starts)
        return [("sign", lo, hi, "-" if isinstance(node.op, ast.Add) else "+")]
    return []


def find_mutants(path: Path, skipped: dict | None = None) -> list[Mutant]:
    """Every mutant of one module, in source order.

    Parameters
    ----------
    path : Path
        A module of ``bounds/``.
    skipped : dict, optional
        Counts of sites deliberately not mutated (zero constants, string concatenation,
        numbers inside f-strings), updated in place.

    Returns
    -------
    list of Mutant
    """
    skipped = {} if skipped is None else skipped
    source = path.read_bytes()
    tree = ast.parse(source)
    parents, starts = _parents(tree), _byte_offsets(source)
    in_fstring = {
        id(n) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for n in ast.walk(f)
    }
    out = []
    for node in ast.walk(tree):
        if id(node) in in_fstring and isinstance(node, ast.Constant):
            if type(node.value) in (int, float):
                skipped["number in an f-string"] = skipped.get("number in an f-string", 0) + 1
            continue
        for kind, lo, hi, new in _changes(node, source, starts, skipped):
            function, context = _where(node, parents)
            out.append(
                Mutant(
                    path.stem,
                    node.lineno,
                    node.col_offset,
                    kind,
                    source[lo:hi].decode(),
                    new,
                    function,
                    context,
                    lo,
                    hi,
                )
            )
    return sorted(out, key=lambda m: (m.start, m.kind, m.replacement))


def apply_mutant(source: bytes, mutant: Mutant) -> bytes:
    """The module's source with the one change of ``mutant``."""
    return source[: mutant.start] + mutant.replacement.encode() + source[mutant.end :]


def registered_reach(bounds_dir: Path) -> set[str]:
    """Names (functions, constants) that the code of some registered guarantee may use.

    A name-based call graph (over-approximate: same-named helpers of two modules are one
    node), closed from the functions named in the modules' ``Guarantee(...)`` records; the
    result holds the functions reached and every name their bodies mention.
    """
    calls: dict[str, set[str]] = {}
    roots: set[str] = set()
    for path in sorted(bounds_dir.glob("*.py")):
        tree = ast.parse(path.read_bytes())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                calls.setdefault(node.name, set()).update(names)
            named = isinstance(node, ast.Call) and _call_name(node) == "Guarantee"
            if named and len(node.args) > 1 and isinstance(node.args[1], ast.Name):
                roots.add(node.args[1].id)
    reach, todo, used = set(), list(roots), set(roots)
    while todo:
        name = todo.pop()
        if name in reach or name not in calls:
            continue
        reach.add(name)
        used |= calls[name]
        todo.extend(calls[name])
    return reach | used


# ------------------------------------------------------------------ evaluation (in a copy)
def _load_golden(root: Path):
    """The golden-value test module of ``root``, imported from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_golden_values", root / GOLDEN_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(guarantee, kwargs) -> str:
    """A guarantee's value at ``kwargs`` as exact text (floats by repr), or what it raised."""
    import numpy as np

    try:
        value = guarantee(**kwargs)
    except Exception as exc:  # the type of what it raised is part of its behaviour
        return f"raise {type(exc).__name__}"
    if isinstance(value, tuple):
        return json.dumps([np.asarray(v, dtype=float).tolist() for v in value])
    return json.dumps(np.asarray(value, dtype=float).tolist())


def evaluate(out: Path, inputs: int, seed: int) -> None:
    """Write every built-in guarantee's results at its golden and random points to ``out``.

    Run inside a copy of the repository (its ``calcheck`` is the one imported): the same
    points for the unmutated and every mutated copy, so the files compare line by line.
    """
    import numpy as np

    from calcheck.bounds import registry

    golden = _load_golden(Path.cwd())
    rows = {"__module__": registry.__file__}
    for g in registry.all_guarantees():
        if g.paper not in registry.PAPERS or registry.is_user_defined(g.id):
            continue
        rng = np.random.default_rng([seed, zlib.crc32(g.id.encode())])
        points = [case[0] for case in golden.GOLDEN.get(g.id, ())]
        points += [golden.random_valid_inputs(g.id, rng) for _ in range(inputs)]
        rows[g.id] = [_result(g, p) for p in points]
    out.write_text(json.dumps(rows))


# ---------------------------------------------------------------------------- running
def _env(copy: Path) -> dict:
    """The environment of a run in ``copy``: its calcheck first, no bytecode written."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CALCHECK_PLUGINS="0")
    env["PYTHONPATH"] = os.pathsep.join([str(copy), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def run_tests(copy: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    """Run the selection in ``copy``: ('passed' | 'failed' | 'timeout', seconds)."""
    args = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-p", "no:benchmark"]
    args += ["-n", "0", "-p", "no:cacheprovider"]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            args, cwd=copy, env=_env(copy), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0
    status = "passed" if done.returncode == 0 else "failed"
    if done.returncode == 5:  # no tests collected: a wrong selection, not a kill
        raise RuntimeError(f"no tests collected by {tests}: {done.stdout.decode()[-500:]}")
    return status, time.perf_counter() - t0


def results_in(copy: Path, inputs: int, seed: int, timeout: float) -> dict | None:
    """The results of :func:`evaluate` in ``copy`` (None if the evaluation itself failed)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "values.json"
        args = [sys.executable, str(copy / "docs/tools/mutate_bounds.py"), "--evaluate", str(out)]
        args += ["--inputs", str(inputs), "--seed", str(seed)]
        try:
            subprocess.run(
                args, cwd=copy, env=_env(copy), capture_output=True, timeout=timeout, check=True
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            return None
        return json.loads(out.read_text())


def _reason(mutant: Mutant, reach: set[str], n_points: int) -> str:
    """Why an unkilled mutant with unchanged results is equivalent."""
    where = {
        "validation": "in argument validation (refuses no valid input it accepted)",
        "message": "in an error message",
    }.get(mutant.context)
    name = mutant.function
    if name.startswith("<module: "):  # a module-level constant: is it used?
        name = name.removeprefix("<module: ").removesuffix(">")
    if where is None and name != "<module>" and name not in reach:
        where = f"in {name}, which no registered bound uses"
    if where is None:
        where = f"in {mutant.function}: the change is masked at every valid input tried"
    return f"{where}; identical results at {n_points} points (golden and random)"


def judge(mutant: Mutant, copy: Path, settings: dict) -> None:
    """Run one mutant in ``copy`` (restoring the file afterwards) and set its verdict."""
    path = copy / "bounds" / f"{mutant.module}.py"
    original = path.read_bytes()
    try:
        path.write_bytes(apply_mutant(original, mutant))
        status, mutant.seconds = run_tests(copy, settings["tests"], settings["timeout"])
        if status != "passed":
            mutant.status, mutant.reason = "killed", status
            return
        values = results_in(copy, settings["inputs"], settings["seed"], settings["timeout"])
        baseline = settings["baseline"]
        if values is None:
            mutant.status, mutant.reason = "survived", "evaluation of the bounds failed"
            return
        diff = [g for g in baseline if g != "__module__" and values.get(g) != baseline[g]]
        if diff:
            mutant.status = "survived"
            mutant.reason = f"changes {', '.join(diff[:4])}{' ...' if len(diff) > 4 else ''}"
        else:
            mutant.status = "equivalent"
            mutant.reason = _reason(mutant, settings["reach"], settings["n_points"])
    finally:
        path.write_bytes(original)


# ------------------------------------------------------------------------- the driver
def _module_name(text: str) -> str:
    """``bounds/gr21.py`` / ``gr21.py`` / ``calcheck.bounds.gr21`` -> ``gr21``."""
    name = Path(text.replace("calcheck.bounds.", "")).stem
    if not (ROOT / "bounds" / f"{name}.py").is_file():
        raise SystemExit(f"mutate_bounds: no module bounds/{name}.py")
    return name


def select_mutants(args) -> tuple[list[Mutant], int, dict]:
    """(the mutants to run, how many were generated, skipped sites) for the options."""
    modules = [_module_name(m) for m in args.module] or sorted(
        p.stem for p in (ROOT / "bounds").glob("*.py")
    )
    modules = [m for m in modules if m not in {_module_name(x) for x in args.exclude}]
    full = {_module_name(m) for m in args.full}
    skipped: dict = {}
    generated = [
        m for name in modules for m in find_mutants(ROOT / "bounds" / f"{name}.py", skipped)
    ]
    if args.line:  # only the mutants on these lines (of the modules selected)
        generated = [m for m in generated if m.line in args.line]
    always = [m for m in generated if m.module in full]
    rest = [m for m in generated if m.module not in full]
    if args.sample is not None and args.sample < len(rest):
        rest = random.Random(args.seed).sample(rest, args.sample)
    chosen = sorted(always + rest, key=lambda m: (m.module, m.start, m.kind, m.replacement))
    return chosen, len(generated), skipped


def _copies(n: int, tmp: Path) -> list[Path]:
    """``n`` copies of the repository under ``tmp`` (no git data, no caches)."""
    copies = []
    for i in range(n):
        dest = tmp / f"copy{i}"
        shutil.copytree(ROOT, dest, ignore=IGNORE)
        copies.append(dest)
    return copies


def _baseline(copy: Path, args) -> dict:
    """Check the unmutated copy passes the selection; return its results and timing."""
    status, seconds = run_tests(copy, args.tests, args.timeout or 600)
    if status != "passed":
        raise SystemExit(f"mutate_bounds: the unmutated selection {args.tests} does not pass")
    values = results_in(copy, args.inputs, args.seed, 600)
    if values is None or not values["__module__"].startswith(str(copy)):
        raise SystemExit("mutate_bounds: the evaluation did not import the copy's calcheck")
    return {"values": values, "seconds": seconds}


def run_all(mutants: list[Mutant], args) -> dict:
    """Judge every mutant on ``args.jobs`` copies; return the run's settings."""
    with tempfile.TemporaryDirectory(prefix="mutate_bounds_") as tmp:
        copies = _copies(max(1, args.jobs), Path(tmp))
        base = _baseline(copies[0], args)
        settings = {
            "tests": args.tests,
            "timeout": args.timeout or max(60.0, 10 * base["seconds"]),
            "inputs": args.inputs,
            "seed": args.seed,
            "baseline": base["values"],
            "reach": registered_reach(ROOT / "bounds"),
            "n_points": sum(len(v) for k, v in base["values"].items() if k != "__module__"),
        }
        free: queue.Queue = queue.Queue()
        for c in copies:
            free.put(c)

        def one(mutant):
            """Judge one mutant on a free copy."""
            copy = free.get()
            try:
                judge(mutant, copy, settings)
            finally:
                free.put(copy)
            return mutant

        with concurrent.futures.ThreadPoolExecutor(len(copies)) as pool:
            for i, m in enumerate(pool.map(one, mutants), 1):
                if args.verbose:
                    print(f"[{i}/{len(mutants)}] {_label(m)}: {m.status}", file=sys.stderr)  # noqa: T201
    return {"baseline_seconds": base["seconds"], "timeout": settings["timeout"]}


def _label(m: Mutant) -> str:
    """``module.py:line:col kind 'original' -> 'replacement'``."""
    return f"{m.module}.py:{m.line}:{m.col} {m.kind} {m.original!r} -> {m.replacement!r}"


def summarize(mutants: list[Mutant], generated: int, skipped: dict) -> dict:
    """Counts per module and in total."""
    table: dict = {}
    for m in mutants:
        row = table.setdefault(m.module, {"run": 0, "killed": 0, "survived": 0, "equivalent": 0})
        row["run"] += 1
        row[m.status] = row.get(m.status, 0) + 1
    total = {
        k: sum(r.get(k, 0) for r in table.values())
        for k in ("run", "killed", "survived", "equivalent")
    }
    return {"generated": generated, "skipped_sites": skipped, "by_module": table, "total": total}


def report_text(summary: dict, mutants: list[Mutant], run: dict) -> str:
    """The printed summary: counts per module, then survivors and equivalent mutants."""
    lines = [
        f"generated {summary['generated']} mutants; ran {summary['total']['run']} "
        f"(baseline selection {run['baseline_seconds']:.1f} s, timeout {run['timeout']:.0f} s)",
        f"sites not mutated: {summary['skipped_sites']}",
        f"{'module':16s} {'run':>5s} {'killed':>7s} {'survived':>9s} {'equivalent':>11s}",
    ]
    rows = {**summary["by_module"], "total": summary["total"]}
    for name, r in rows.items():
        lines.append(
            f"{name:16s} {r['run']:5d} {r.get('killed', 0):7d} {r.get('survived', 0):9d} "
            f"{r.get('equivalent', 0):11d}"
        )
    for status in ("survived", "equivalent"):
        chosen = [m for m in mutants if m.status == status]
        lines.append(f"\n{status} ({len(chosen)}):")
        lines += [f"  {_label(m)} [{m.function}]: {m.reason}" for m in chosen]
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--module", action="append", default=[], help="a module of bounds/ (repeat)")
    p.add_argument("--exclude", action="append", default=[], help="leave out a module (repeat)")
    p.add_argument(
        "--full",
        action="append",
        default=[],
        help="run all of this module's mutants even with --sample (repeat)",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=None,
        help="run a seeded sample of K mutants (of the modules not --full)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the sample and of the random inputs"
    )
    p.add_argument("--line", type=int, action="append", default=[], help="only this line (repeat)")
    p.add_argument("--tests", nargs="+", default=["tests/bounds"], help="pytest selection")
    p.add_argument("--inputs", type=int, default=20, help="random valid inputs per guarantee")
    p.add_argument("--jobs", type=int, default=1, help="mutants run at once (one copy each)")
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per mutant (default: 10x the baseline, >= 60)",
    )
    p.add_argument("--json", type=Path, default=None, help="write every mutant and the counts here")
    p.add_argument("--list", action="store_true", help="list the mutants and stop")
    p.add_argument("--verbose", action="store_true", help="one line per mutant on stderr")
    p.add_argument("--evaluate", type=Path, default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None) -> int:
    """Generate, run and report (or, with ``--evaluate``, the evaluation step in a copy)."""
    args = parse_args(argv)
    if args.evaluate is not None:
        evaluate(args.evaluate, args.inputs, args.seed)
        return 0
    mutants, generated, skipped = select_mutants(args)
    if args.list:
        print("\n".join(f"{_label(m)} [{m.function}, {m.context}]" for m in mutants))  # noqa: T201
        return 0
    t0 = time.perf_counter()
    run = run_all(mutants, args)
    run["wall_seconds"] = time.perf_counter() - t0
    summary = summarize(mutants, generated, skipped)
    print(report_text(summary, mutants, run))  # noqa: T201 (a script: it reports what it found)
    if args.json is not None:
        record = {"command": " ".join(sys.argv), **run, **summary}
        record["mutants"] = [asdict(m) for m in mutants]
        args.json.write_text(json.dumps(record, indent=1))
    return 1 if summary["total"].get("survived", 0) else 0


if __name__ == "__main__":
    sys.exit(main())
