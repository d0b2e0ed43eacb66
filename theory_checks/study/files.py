"""Study files: check a registered guarantee on laws of one's own, without Python.

A study is a TOML file::

    guarantee = "gr21.thm4.marginal"   # a studiable guarantee (see `calcheck list`)
    id = "beta25"                      # optional; results are named "study:<id>"
    reps = 2000                        # optional; default: the budget's
    alphas = [0.1, 0.05]               # optional; default: the budget's
    false_alarm = 1e-3                 # optional

    [law]                              # or [[laws]] several times, or laws = ["two_atoms"]
    name = "beta25_platt"
    scores = { kind = "beta", a = 2.0, b = 5.0 }     # uniform | beta | atoms | mixture
    eta = { kind = "logistic", slope = 2.0, intercept = -0.5 }

    [grid]                             # the guarantee's grid parameters
    n = [500, 2000]
    n_bins = [10]

Law tables follow :func:`calcheck.simulations.laws.law_from_spec` (binary, linear_shift, top_label,
dirichlet_affine and binned_model families). Rate claims (klm19 Theorems 5.3, 5.4) and
Definition 5.2 run their own controls (:mod:`.catalog.klm19_studies`). The method and the
event are those of the suite's own check of that guarantee; guarantees whose law the
theorem fixes are refused with the reason. Every table rejects unknown keys.

A guarantee of your own needs no Python session: name its bound as ``"module:function"``
(importable: an installed package, or a module beside the study file) with the method and
the event it is claimed for (``calcheck list --methods``); a calibrator of your own is
``method = "module:Class"`` (constructed with ``method_options``)::

    guarantee = "mine.thm1"
    bound = "my_bounds:radius"         # radius(n, n_bins, alpha) -> eps
    method = "umd"                     # or "my_calibrators:MyBinning"
    method_options = { n_bins = 10 }   # optional: keywords of the calibrator's constructor
    event = "conditional"
    controls = [0.75]                  # optional: the bound times each factor, expected flagged

A ``[search]`` table asks ``calcheck search --study FILE`` for the worst law of a family
instead (one search per grid cell and alpha; :func:`load_search_study`)::

    [search]
    family = "beta_piecewise"          # see `calcheck search --help`
    options = { k = 5 }                # optional family options
    target = "gr21.thm3.times_0.8"     # optional; default: the guarantee's stated bound
    budget = "quick"                   # optional: quick | full
    evaluations = 500                  # optional: about this many evaluations in all
    reps = 100                         # optional: replicates per evaluation
    criterion = "mean_ratio"           # optional: failure | soft_failure | tightness | mean_ratio
    seed = 0                           # optional

Every key, its type, default and meaning: :data:`STUDY_SCHEMA` and :data:`SEARCH_SCHEMA`
(the parser rejects any other key, listing these; the docs' table is generated from them by
:func:`schema_markdown`).

A command's flag that sets what a key sets wins over the file's key, and the command says so
in one line before any work (``calcheck: --criterion tightness overrides the study file's
criterion = failure``): the ``replace`` arguments of :func:`load_study` and
:func:`load_search_study`. Flags that name something else to check (``run --checks``,
``search TARGET --family``) are refused with ``--study``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from calcheck.simulations.laws import law_from_spec
from calcheck.simulations.memory import check_experiments_fit
from calcheck.simulations.search_budget import MIN_EVALUATIONS

from ..catalog import for_law, studiable
from ..checks.budgets import BUDGETS, DEFAULT_FALSE_ALARM
from .imports import import_object

__all__ = [
    "SEARCH_SCHEMA",
    "STUDY_SCHEMA",
    "StudyKey",
    "load_search_study",
    "load_study",
    "schema_markdown",
]


@dataclass(frozen=True)
class StudyKey:
    """One key of a study file: its TOML type, its default and what it means."""

    type: str
    default: str
    meaning: str


_OPTIONAL = "none"
#: The miscoverage levels of a study without ``alphas``: a run's, and a search's.
RUN_ALPHAS = (0.1, 0.05)
SEARCH_ALPHAS = (0.1,)
#: The top-level keys of a study file (the parser rejects any other, listing these).
STUDY_SCHEMA = {
    "guarantee": StudyKey(
        "string",
        "required",
        "the guarantee checked: a studiable id "
        "(`calcheck list`), or the id of your own (`<paper>.<label>`) "
        "defined by `bound`, `method` and `event`",
    ),
    "id": StudyKey("string", "the guarantee", "results are named `study:<id>`"),
    "reps": StudyKey(
        "integer >= 1",
        "the run budget's (" + ", ".join(f"{k} {b.reps}" for k, b in BUDGETS.items()) + ")",
        "replicates per cell of `calcheck run` (whole blocks of 100); `--reps` (or, without "
        "it, a given `--budget`) replaces it",
    ),
    "alphas": StudyKey(
        "list of numbers in (0, 1)",
        f"{list(RUN_ALPHAS)}; a search: {list(SEARCH_ALPHAS)}",
        "miscoverage levels: one cell (or one search) per alpha; a search's `--alpha` "
        "replaces them",
    ),
    "false_alarm": StudyKey(
        "number in (0, 1)",
        f"{DEFAULT_FALSE_ALARM:g}",
        "false-alarm rate of each check's verdict; `--false-alarm` replaces it",
    ),
    "law": StudyKey(
        "table",
        _OPTIONAL,
        "a law of your own (the law tables below); `law` or `laws` is required by `calcheck run`",
    ),
    "laws": StudyKey(
        "list of tables or law names",
        _OPTIONAL,
        "several laws (`[[laws]]` tables, or names from `calcheck list`); not with `law`",
    ),
    "grid": StudyKey(
        "table of non-empty lists of integers >= 1",
        "required",
        "the guarantee's grid parameters, one cell per combination (the grid table below); "
        "a search's `--n`, `--n-bins` and `--grid KEY=VALUE` replace one list each",
    ),
    "search": StudyKey(
        "table",
        _OPTIONAL,
        "a search for the worst law of a family "
        "(`calcheck search --study`; the `[search]` keys below)",
    ),
    "bound": StudyKey(
        "string `module:function`",
        _OPTIONAL,
        "the bound of your own guarantee, called with the keywords its method "
        "and event supply, e.g. `radius(n, n_bins, alpha) -> eps` "
        "(`calcheck list --methods`); its module is importable or beside the "
        "study file",
    ),
    "method": StudyKey(
        "string",
        "required with `bound`",
        "the method your bound is claimed "
        "for (`calcheck list --methods`), or a calibrator of your own "
        "`module:Class`",
    ),
    "method_options": StudyKey("table", "{}", "keywords of your calibrator's constructor"),
    "event": StudyKey(
        "string",
        "required with `bound`",
        "the event your bound is claimed for (`conditional`, `marginal`, `ece`, ...)",
    ),
    "statement": StudyKey("string", '""', "what your guarantee says (shown in the reports)"),
    "controls": StudyKey(
        "list of numbers in (0, 1)",
        "[]",
        "negative controls: the stated "
        "bound times each factor, on the same simulations, expected flagged",
    ),
}
#: The keys of a ``[search]`` table (the parser rejects any other, listing these).
SEARCH_SCHEMA = {
    "family": StudyKey(
        "string", "required", "the law family searched (`calcheck search --help` lists them)"
    ),
    "options": StudyKey(
        "table",
        "{}",
        "the family's options, e.g. `{ k = 5 }`; `--family-opt KEY=VALUE` replaces one",
    ),
    "target": StudyKey(
        "string",
        "the guarantee",
        "what is searched: the guarantee's stated "
        "bound, `<guarantee>.times_<f>` (the bound times f) or a catalog "
        "control that changes the bound",
    ),
    "budget": StudyKey(
        "string: quick or full",
        '"quick"',
        "the search's budget (`calcheck search --help`); `--budget` replaces it",
    ),
    "evaluations": StudyKey(
        f"integer >= {MIN_EVALUATIONS}",
        "the budget's",
        "about this many evaluations in all, shared as in the budget; `--evaluations` replaces it",
    ),
    "reps": StudyKey(
        "integer >= 1", "the budget's", "replicates per evaluation; `--reps` replaces it"
    ),
    "criterion": StudyKey(
        "string",
        '"failure"',
        "what the search maximises: failure, "
        "soft_failure, tightness or mean_ratio (`calcheck.search`); `--criterion` replaces it",
    ),
    "seed": StudyKey(
        "integer >= 0",
        "0",
        "root seed of the search's common random numbers (the re-check uses seed + 1); "
        "`--seed` replaces it",
    ),
}
_OWN = ("bound", "method", "method_options", "event", "statement")


def schema_markdown() -> str:
    """The keys of :data:`STUDY_SCHEMA` and :data:`SEARCH_SCHEMA` as two Markdown tables."""
    out = []
    for title, schema in (("Top-level keys", STUDY_SCHEMA), ("`[search]` keys", SEARCH_SCHEMA)):
        out += [f"**{title}**", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        out += [
            f"| `{name}` | {key.type} | {key.default} | {key.meaning} |"
            for name, key in schema.items()
        ]
        out.append("")
    return "\n".join(out)


def _unknown(keys, schema, where: str) -> None:
    unknown = sorted(set(keys) - set(schema))
    if unknown:
        raise ValueError(f"unknown keys in {where}: {unknown}; allowed: {list(schema)}")


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _unit(value, name):
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 < value < 1):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def _define_own(data: dict, folder: Path) -> None:
    """Define the file's own guarantee (keys ``bound``, ``method``, ``event``) when given."""
    given = [k for k in _OWN if k in data]
    if not given:
        return
    if "bound" not in data or "method" not in data or "event" not in data:
        raise ValueError(
            f"a guarantee of your own needs bound, method and event; the file gives {given}"
        )
    from ..user.guarantees import define_guarantee

    bound = import_object(data["bound"], "bound", folder)
    method = data["method"]
    options = data.get("method_options", {})
    if not isinstance(options, dict):
        raise ValueError(f"method_options must be a table, got {options!r}")
    if isinstance(method, str) and ":" in method:
        factory = import_object(method, "method", folder)
        try:
            method = factory(**options) if callable(factory) else factory
        except TypeError as exc:
            raise ValueError(f"method {data['method']!r} with {options!r}: {exc}") from None
        except Exception as exc:  # the user's constructor failed
            raise ValueError(
                f"method {data['method']!r} with {options!r}: constructing it raised "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from None
    elif options:
        raise ValueError("method_options applies to a calibrator given as 'module:Class'")
    define_guarantee(
        data["guarantee"],
        bound,
        method=method,
        event=data["event"],
        statement=str(data.get("statement", "")),
    )


def _controls(data: dict, check) -> list:
    factors = data.get("controls", [])
    if not isinstance(factors, list) or not all(
        not isinstance(f, bool) and isinstance(f, int | float) and 0 < f < 1 for f in factors
    ):
        raise ValueError(f"controls must be a list of factors in (0, 1), got {factors!r}")
    from ..checks.check import with_sharper_controls

    return [c for f in factors for c in with_sharper_controls([check], {check.id: float(f)})[1:]]


def load_study(path, replace: dict | None = None, on_replace=None) -> tuple:
    """Parse a study file into a check and run options.

    Parameters
    ----------
    path : str or Path
        The TOML study file.
    replace : dict, optional
        Values a command's flags give in place of the file's: ``reps`` (an integer >= 1)
        and ``false_alarm`` (``calcheck run --reps``, ``--false-alarm``).
    on_replace : callable, optional
        Called as ``on_replace(key, file_value)`` for each key of ``replace`` that the file
        also sets, before anything runs (the command says that its flag overrides it).

    Returns
    -------
    check : Check
    options : dict
        ``reps``, ``false_alarm`` and ``alphas`` when the file (or ``replace``) gives them,
        and ``controls``: the checks of the stated bound times each factor of ``controls``
        (expected violated; same simulations).
    """
    unknown = sorted(set(replace or {}) - {"reps", "false_alarm"})
    if unknown:
        raise ValueError(f"replace takes reps and false_alarm, got {unknown}")
    data = _read(path)
    if "search" in data and "law" not in data and "laws" not in data:
        raise ValueError(
            f"study file {str(path)!r} has a [search] table and no law: run "
            f"`calcheck search --study {path}`"
        )
    check, options = _study_check(data)
    check_experiments_fit(
        check.simulations(), reps=options.get("reps"), what=f"study file {str(path)!r}"
    )
    for key, value in (replace or {}).items():
        if key == "reps":
            _positive_int(value, "reps")
        if key in data and on_replace is not None:
            on_replace(key, data[key])
        options[key] = value
    return check, options


def _read(path) -> dict:
    data = _parse(path)
    _unknown(data, STUDY_SCHEMA, f"study file {str(path)!r}")
    if "guarantee" not in data:
        raise ValueError(
            f'study file {str(path)!r} has no guarantee key: add guarantee = "<id>" '
            "(`calcheck list` shows the studiable ones)"
        )
    if not isinstance(data["guarantee"], str) or not data["guarantee"]:
        raise ValueError(
            f"study file {str(path)!r}: guarantee must be a guarantee id (a string), "
            f"got {data['guarantee']!r}"
        )
    if "reps" in data:
        _positive_int(data["reps"], f"study file {str(path)!r}: reps")
    _define_own(data, Path(path).resolve().parent)
    return data


def _parse(path) -> dict:
    """The study file's TOML, or one ValueError naming the file and what is wrong with it."""
    p = Path(path)
    where = f"study file {str(path)!r}"
    if p.is_dir():
        inside = sorted(q.name for q in p.glob("*.toml") if q.is_file())[:3]
        hint = f" (it holds {', '.join(inside)})" if inside else ""
        raise ValueError(f"{where} is a folder, not a file{hint}: give the TOML file itself")
    if not p.exists():
        raise ValueError(f"study file not found: {str(path)!r}")
    if not p.is_file():  # a device, a pipe
        raise ValueError(f"{where} is not a regular file")
    try:
        raw = p.read_bytes()
    except OSError as exc:  # no permission, an I/O error
        raise ValueError(f"{where} cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (some editors write one) is dropped
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"{where} is not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); TOML "
            "files are UTF-8: save it as UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where} is not valid TOML: {exc}") from None
    except RecursionError:  # arrays or tables nested thousands deep
        raise ValueError(f"{where} is not valid TOML: nested too deeply") from None


def _study_check(data: dict, laws_needed: bool = True):
    gid = data.get("guarantee")
    adapters = studiable()
    if gid not in adapters:
        # for_law names the reason for refused guarantees and lists the studiable ones
        for_law(str(gid), (), grid={}, alphas=(0.1,))
    adapter = adapters[gid]
    options = {}
    if "reps" in data:
        options["reps"] = _positive_int(data["reps"], "reps")
    if "false_alarm" in data:
        options["false_alarm"] = _unit(data["false_alarm"], "false_alarm")
    if "alphas" in data:
        alphas = data["alphas"]
        if not isinstance(alphas, list) or not alphas:
            raise ValueError(f"alphas must be a non-empty list, got {alphas!r}")
        options["alphas"] = tuple(_unit(a, "alpha") for a in alphas)
    if "law" in data and "laws" in data:
        raise ValueError("give either [law] or laws / [[laws]], not both")
    if "laws" in data and not isinstance(data["laws"], list):
        # a string would be read letter by letter as law names
        raise ValueError(
            f"laws must be a list ([[laws]] tables or laws = [names]), got {data['laws']!r}"
        )
    tables = data.get("laws", [data["law"]] if "law" in data else None)
    if not laws_needed:
        return gid, _grid(data, adapter), options
    if not tables:
        raise ValueError("a study needs a [law] table (or [[laws]] tables, or laws = [names])")
    laws = []
    for i, table in enumerate(tables):
        if isinstance(table, dict):
            table = dict(table)
            laws.append(law_from_spec(table, str(table.pop("name", f"law{i}"))))
        else:
            laws.append(law_from_spec(table))
    clean = _grid(data, adapter)
    sid = data.get("id", gid)
    if not isinstance(sid, str) or not sid:
        raise ValueError(f"id must be a non-empty string, got {sid!r}")
    check = for_law(
        gid, laws, grid=clean, alphas=options.get("alphas", RUN_ALPHAS), check_id=f"study:{sid}"
    )
    if hasattr(adapter, "controls"):  # a study with its own controls (klm19 rate claims)
        if "controls" in data:
            raise ValueError(
                f"{gid}'s study runs its own negative controls; controls (bound factors) "
                "apply to a stated bound only"
            )
        options["controls"] = adapter.controls(check)
    else:
        options["controls"] = _controls(data, check)
    return check, options


def _grid(data, adapter) -> dict:
    grid = data.get("grid")
    if not isinstance(grid, dict):
        raise ValueError(f"a study needs a [grid] table with {list(adapter.grid_keys)}")
    clean = {}
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid {key} must be a non-empty list, got {values!r}")
        clean[key] = [_positive_int(v, f"grid {key}") for v in values]
    return clean


def load_search_study(path, replace: dict | None = None, on_replace=None) -> list[dict]:
    """The searches of a study file's ``[search]`` table: keyword arguments of each.

    One search per grid cell (the product of the grid lists) and alpha; each dict has
    ``target``, ``family`` (name), ``family_options``, ``grid``, ``alpha``, ``budget``,
    ``criterion``, ``seed``, ``evaluations`` and ``reps`` (None where the table has none).
    The keys are :data:`SEARCH_SCHEMA`'s.

    Parameters
    ----------
    path : str or Path
        The TOML study file.
    replace : dict, optional
        Values a command's flags give in place of the file's, by the key's dotted TOML
        name: ``search.budget``, ``search.criterion``, ``search.seed``,
        ``search.evaluations``, ``search.reps``, ``search.options.<option>`` (a family
        option), ``alphas`` (a list) and ``grid.<parameter>`` (a list). The file's own
        values are checked first; these are taken as given.
    on_replace : callable, optional
        Called as ``on_replace(key, file_value)`` for each key of ``replace`` that the file
        also sets, before anything runs (the command says that its flag overrides it).
    """
    import itertools

    data = _read(path)
    table = _search_table(data, path)
    gid, grid, options = _study_check(data, laws_needed=False)
    settings = {
        "search": {**table, "options": dict(table.get("options", {}))},
        "grid": grid,
        "alphas": list(options.get("alphas", SEARCH_ALPHAS)),
    }
    for dotted, value in (replace or {}).items():
        table_name, _, key = dotted.rpartition(".")
        if dotted not in _REPLACEABLE and not (key and f"{table_name}.*" in _REPLACEABLE):
            raise ValueError(
                f"replace takes {list(_REPLACEABLE)} (* any key of that table), got {dotted!r}"
            )
        *tables, key = dotted.split(".")
        node = settings
        for name in tables:
            node = node[name]
        said = _file_value(data, dotted)
        if said is not _ABSENT and on_replace is not None:
            on_replace(dotted, said)
        node[key] = value
    search, grid = settings["search"], settings["grid"]
    keys = sorted(grid)
    return [
        {
            "target": str(search.get("target", gid)),
            "family": search["family"],
            "family_options": dict(search["options"]),
            "grid": dict(zip(keys, cell, strict=True)),
            "alpha": alpha,
            "budget": search.get("budget", "quick"),
            "criterion": search.get("criterion", "failure"),
            "seed": search.get("seed", 0),
            "evaluations": search.get("evaluations"),
            "reps": search.get("reps"),
        }
        for cell in itertools.product(*(grid[k] for k in keys))
        for alpha in settings["alphas"]
    ]


#: The keys of a study file that a search's flags replace (dotted; ``*``: any key of the table).
_REPLACEABLE = (
    "alphas",
    "grid.*",
    "search.budget",
    "search.criterion",
    "search.seed",
    "search.evaluations",
    "search.reps",
    "search.options.*",
)
#: A key the study file does not set (:func:`_file_value`).
_ABSENT = object()


def _file_value(data: dict, dotted: str):
    """The value the file writes at a dotted key (``search.criterion``), else :data:`_ABSENT`."""
    node = data
    for name in dotted.split("."):
        if not isinstance(node, dict) or name not in node:
            return _ABSENT
        node = node[name]
    return node


def _search_table(data: dict, path) -> dict:
    """The file's ``[search]`` table, each of its keys checked (one ValueError naming it)."""
    table = data.get("search")
    if table is None:
        raise ValueError(f"study file {str(path)!r} has no [search] table")
    if not isinstance(table, dict):
        raise ValueError(
            f"study file {str(path)!r}: search must be a [search] table, got {table!r}"
        )
    _unknown(table, SEARCH_SCHEMA, "[search]")
    if not isinstance(table.get("family"), str):
        raise ValueError(f"[search] needs family = a family name, got {table.get('family')!r}")
    if not isinstance(table.get("options", {}), dict):
        raise ValueError(f"[search] options must be a table, got {table['options']!r}")
    seed = table.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"[search] seed must be a non-negative integer, got {seed!r}")
    for key, least in (("evaluations", MIN_EVALUATIONS), ("reps", 1)):
        value = table.get(key, least)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"[search] {key} must be an integer >= {least}, got {value!r}")
    from calcheck.simulations.search import SEARCH_BUDGETS

    from ..search.driver import CRITERIA

    for key, allowed, default in (
        ("budget", tuple(SEARCH_BUDGETS), "quick"),
        ("criterion", CRITERIA, "failure"),
    ):
        if table.get(key, default) not in allowed:
            raise ValueError(f"[search] {key} must be one of {list(allowed)}, got {table[key]!r}")
    if not isinstance(table.get("target", ""), str):
        raise ValueError(f"[search] target must be a string, got {table['target']!r}")
    return table
