"""Pages of the docs site generated from calcheck's registries at build time.

Nothing here is typed by hand: the per-paper tables of guarantees and checks, the counts of
checks per role and budget, the figures with their recorded findings, and the not-covered
tables come from :mod:`calcheck.bounds.registry`, :mod:`calcheck.theory_checks.catalog`,
:mod:`calcheck.figures.registry`, ``figures/findings_status.json`` and ``docs/coverage.md``,
so the site cannot drift from the code. The generated Markdown goes to ``docs/_generated/``
(ignored by git) and is included by the hand-written pages.

Anchors: every guarantee has the label ``guarantee-<id with dots as dashes>`` on its paper's
page (``papers/gr21.html#guarantee-gr21-thm3``); the HTML run report links to them
(:func:`calcheck.theory_checks.report.doclinks.guarantee_doc_anchor`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
OUT = HERE / "_generated"
PAPER_TITLES = {
    "gr21": "Gupta & Ramdas (ICML 2021): histogram binning without sample splitting",
    "gpr20": "Gupta, Podkopaev & Ramdas (NeurIPS 2020): distribution-free binary classification",
    "gr22": "Gupta & Ramdas (ICLR 2022): top-label calibration and M2B reductions",
    "klm19": "Kumar, Liang & Ma (NeurIPS 2019): verified uncertainty calibration",
    "nch14": "Naeini, Cooper & Hauskrecht (2014): binary classifier calibration",
}
ROLE_ORDER = ("guarantee", "control", "counterexample", "hypothesis", "identity")
ROLE_NAMES = {
    "guarantee": "guarantee checks",
    "control": "negative controls",
    "counterexample": "printed claims that fail",
    "hypothesis": "dropped hypotheses",
    "identity": "identities (hold by construction)",
}


def _cell(text) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _anchor(guarantee_id: str) -> str:
    from calcheck.theory_checks.report.doclinks import guarantee_doc_anchor

    return guarantee_doc_anchor(guarantee_id)


def _checks(budget: str) -> list:
    from calcheck.theory_checks.catalog import all_checks

    return all_checks(budget)


def counts() -> dict:
    """Substitutions for the pages: checks per role and budget, guarantees, papers."""
    from calcheck.bounds import registry
    from calcheck.theory_checks.results.roles import role_of

    out = {"n_papers": str(len(PAPER_TITLES)), "n_guarantees": str(len(registry.all_guarantees()))}
    for budget in ("quick", "full"):
        checks = _checks(budget)
        roles = Counter(role_of(c) for c in checks)
        out[f"n_checks_{budget}"] = str(len(checks))
        out[f"n_times_controls_{budget}"] = str(
            sum(re.search(r"\.control\.times_[0-9.]+$", c.id) is not None for c in checks)
        )
        for role in ROLE_ORDER:
            out[f"n_{role}_{budget}"] = str(roles.get(role, 0))
    return out


def _recorded_run() -> dict:
    """The recorded quick run (``docs/measurements/quick.json``), or an empty dict."""
    path = HERE / "measurements" / "quick.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _guarantee_section(g, checks_of: dict, refused: dict, studiable) -> list[str]:
    from calcheck.theory_checks.results.roles import role_of

    lines = [f"({_anchor(g.id)})=", f"### `{g.id}`: {g.label}", "", _cell(g.statement), ""]
    lines.append(f"- **Quantifier**: {g.quantifier}")
    if g.hypotheses:
        lines.append("- **Hypotheses**: " + "; ".join(g.hypotheses))
    if g.variant_of:
        lines.append(f"- **Variant of**: `{g.variant_of}` (a corrected or proof-valid form)")
    module = getattr(g.function, "__module__", "")
    if module.startswith("calcheck.bounds.") and "<" not in g.function.__qualname__:
        lines.append(f"- **Function**: {{py:func}}`{module}.{g.function.__name__}`")
    if g.id in studiable:
        lines.append("- **Study on your own law**: yes (see {doc}`/user_guide/studies`)")
    elif g.id in refused:
        lines.append(f"- **Study on your own law**: refused: {_cell(refused[g.id])}")
    mine = checks_of.get(g.id, [])
    if mine:
        head = "| check (quick budget) | type | role | expects | event | bound | experiments |"
        lines += ["", head]
        lines.append("|---|---|---|---|---|---|---|")
        for c in mine:
            lines.append(
                f"| `{c.id}` | {type(c).__name__} | {role_of(c)} | {c.expect} | "
                f"{_cell(c.metric)} | {_cell(c.bound_mode)} | {len(c.law_specs())} |"
            )
        run = _recorded_run()
        rows = [run["check_rows"][c.id] for c in mine if c.id in run.get("check_rows", {})]
        if rows:
            lines += [
                "",
                f"Measured in the recorded quick run ({run['date_utc']} UTC, commit "
                f"`{run['commit']}`, seed {run['seed']}, {run['reps']} replicates per cell, "
                f"false-alarm rate {run['false_alarm']}; {{doc}}`/user_guide/budgets`):",
                "",
                "| check | verdict | cells | worst cell | coverage [95% CP] | claimed | "
                "p-value | tightness | detects |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            keys = ("verdict", "cells", "worst cell", "coverage [95% CP]", "claimed")
            keys += ("p-value", "tightness", "detects")
            for r in rows:
                cells = " | ".join(_cell(r[k]) for k in keys)
                lines.append(f"| `{r['check']}` | {cells} |")
        described = [c for c in mine if c.description]
        if described:
            lines.append("")
            for c in described:
                lines.append(f"- `{c.id}`: {_cell(c.description)}")
    else:
        lines += ["", "*No check of its own at the quick budget* (see the coverage table)."]
    return [*lines, ""]


def guarantees_page(paper: str) -> str:
    """The generated guarantees-and-checks section of one paper's page."""
    from calcheck.bounds import registry
    from calcheck.theory_checks.catalog import refused, studiable

    checks_of: dict = {}
    for c in _checks("quick"):
        checks_of.setdefault(c.guarantee, []).append(c)
    refusals, studies = refused(), set(studiable())
    lines = []
    for g in registry.all_guarantees():
        if g.paper == paper:
            lines += _guarantee_section(g, checks_of, refusals, studies)
    return "\n".join(lines)


def roles_table(paper: str) -> str:
    """Checks of one paper per role at each budget."""
    from calcheck.theory_checks.results.roles import role_of

    lines = ["| budget | checks | " + " | ".join(ROLE_NAMES[r] for r in ROLE_ORDER) + " |"]
    lines.append("|---|---|" + "---|" * len(ROLE_ORDER))
    for budget in ("quick", "full"):
        mine = [c for c in _checks(budget) if c.guarantee.split(".")[0] == paper]
        roles = Counter(role_of(c) for c in mine)
        cells = " | ".join(str(roles.get(r, 0)) for r in ROLE_ORDER)
        lines.append(f"| {budget} | {len(mine)} | {cells} |")
    return "\n".join(lines)


def audit_page(paper: str) -> str:
    """The audit rows of the paper's checks in the recorded quick run (``calcheck audit``)."""
    run = _recorded_run()
    rows = [r for r in run.get("audit", []) if r["check"].split(".")[0] == paper]
    if not rows:
        return (
            "*The recorded quick run predates the audit* (`docs/tools/record_run.py quick` "
            "records it).\n"
        )
    head = run.get("headline", {}).get("text", "")
    lines = [
        f"From the recorded quick run ({run['date_utc']} UTC, commit `{run['commit']}`; the "
        f"whole run: {_cell(head)}). One row per check: the same-path mutant (the claim "
        "tightened on the same draws) and whether the check caught it, its power (the "
        "smallest wrong claim it would have caught), its powerless cells and the check that "
        "implies it on the same draws ({doc}`/user_guide/checks`).",
        "",
        "| check | role | kind | verdict | mutant | caught | power | powerless | implied by |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        caught = "-" if r["caught"] is None else ("yes" if r["caught"] else "**NO**")
        lines.append(
            f"| `{r['check']}` | {r['role']} | {r['kind']} | {r['verdict']} | "
            f"{_cell(r['mutant'] or '-')} | {caught} | {_cell(r['power'])} | "
            f"{r['powerless']} | {_cell(r['implied by'] or '-')} |"
        )
    return "\n".join(lines) + "\n"


def counterexamples_page(paper: str) -> str:
    """The paper's printed claims that fail, as the catalog describes them."""
    from calcheck.bounds import registry
    from calcheck.theory_checks.catalog.valid_forms import VALID_FORMS
    from calcheck.theory_checks.results.roles import role_of

    mine = [
        c
        for c in _checks("quick")
        if c.guarantee.split(".")[0] == paper and role_of(c) == "counterexample"
    ]
    lines = []
    if not mine:
        lines.append("No theorem of this paper is checked as a counterexample.")
    for c in mine:
        g = registry.get(c.guarantee)
        valid = VALID_FORMS.get(c.guarantee)
        tail = f" Valid form, checked beside it: `{valid}`." if valid else ""
        evidence = _cell(c.description).rstrip(".")
        lines.append(
            f"- **{{ref}}`{c.guarantee} <{_anchor(c.guarantee)}>`**, {_cell(g.label)}: "
            f"“{_cell(g.statement)}”. Check `{c.id}`: {evidence}.{tail}"
        )
    status = json.loads((HERE.parent / "figures" / "findings_status.json").read_text())
    failing = [
        (fid, claim, record.get("explanations", {}).get(claim, ""))
        for fid, record in status.items()
        if fid.split(".")[0] == paper
        for claim, state in record["statuses"].items()
        if state == "does not hold"
    ]
    if len(failing) > 8:  # many: one line per figure, the details in the figure's section
        per_figure = Counter(fid for fid, _, _ in failing)
        lines += [
            "",
            f"{len(failing)} stated findings of the paper's figures and tables do not hold when "
            "calcheck regenerates them (recorded in `figures/findings_status.json`; each with "
            "its explanation in the figure's section below):",
            "",
        ]
        lines += [
            f"- [`{fid}`](#{fid.replace('.', '-').replace('_', '-')}): {k} finding"
            f"{'s' if k > 1 else ''}"
            for fid, k in per_figure.items()
        ]
    elif failing:
        lines += [
            "",
            "Stated findings of the paper's figures and tables that do not hold when calcheck "
            "regenerates them (recorded in `figures/findings_status.json`, with the "
            "explanation found):",
            "",
            "| figure | stated finding | why it does not hold |",
            "|---|---|---|",
        ]
        lines += [f"| `{fid}` | {_cell(claim)} | {_cell(why)} |" for fid, claim, why in failing]
    else:
        lines += ["", "Every stated finding of its regenerated figures holds or is not judged."]
    return "\n".join(lines) + "\n"


def _value(value) -> str:
    """A finding's value, short: floats to 4 significant digits, long lists cut."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        items = [_value(v) for v in value[:8]]
        return "[" + ", ".join(items) + (", ...]" if len(value) > 8 else "]")
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_value(v)}" for k, v in list(value.items())[:8])
    return str(value)


def figures_page(paper: str) -> str:
    """The paper's figures: caption, the command, and each stated finding's recorded status."""
    from calcheck.figures.registry import figure_modules, get_figure, unavailable

    status = json.loads((HERE.parent / "figures" / "findings_status.json").read_text())
    snap_index = HERE / "_static" / "figures" / "index.json"
    snapshots = json.loads(snap_index.read_text()) if snap_index.is_file() else {}
    lines = []
    for fid in figure_modules():
        if fid.split(".")[0] != paper:
            continue
        mod = get_figure(fid)
        lines += [f"### `{fid}`", "", _cell(" ".join(mod.CAPTION.split())), ""]
        lines += [f"Regenerate: `calcheck figures {fid}`", ""]
        snap = snapshots.get(fid)
        record = status.get(fid)
        if snap is not None:
            lines += [
                f"```{{figure}} ../_static/figures/{snap['png']}",
                f":alt: {fid} as regenerated by calcheck",
                ":width: 100%",
                "",
                f"{fid} as regenerated by calcheck ({snap['reps']} repetitions, seed "
                f"{snap['seed']}, code {snap['code']}, {snap['date']}).",
                "```",
                "",
            ]
            if snap["findings"]:
                lines += ["| stated finding | found | status | explanation |", "|---|---|---|---|"]
                for f in snap["findings"]:
                    lines.append(
                        f"| {_cell(f['claim'])} | {_cell(_value(f['value']))} | {f['status']} "
                        f"| {_cell(f['explanation'])} |"
                    )
                lines.append("")
        elif record and record["statuses"]:
            lines += ["| stated finding | status | explanation |", "|---|---|---|"]
            for claim, state in record["statuses"].items():
                why = record.get("explanations", {}).get(claim, "")
                lines.append(f"| {_cell(claim)} | {state} | {_cell(why)} |")
            lines += ["", f"Recorded at {record['reps']} repetitions, seed {record['seed']}.", ""]
    missing = {k: v for k, v in unavailable().items() if k.split(".")[0] == paper}
    if missing:
        lines += ["### Not regenerated", "", "| figure | why |", "|---|---|"]
        lines += [f"| `{fid}` | {_cell(why)} |" for fid, why in missing.items()]
        lines.append("")
    return "\n".join(lines)


def not_covered_page(paper: str) -> str:
    """The paper's rows of ``docs/coverage.md`` that are not covered, with their reasons."""
    text = (HERE / "coverage.md").read_text()
    section = re.search(rf"^## {paper}\b.*?(?=^## |\Z)", text, flags=re.M | re.S)
    if section is None:
        return "The coverage table has no section for this paper.\n"
    rows = [
        line
        for line in section.group(0).splitlines()
        if line.startswith("|") and "| not covered |" in line
    ]
    if not rows:
        return "Every catalog item of this paper is checked or reproduced.\n"
    return "\n".join(["| # | item | status | reason |", "|---|---|---|---|", *rows]) + "\n"


def _load_averages(machine: dict) -> str:
    """The 1/5/15-minute load averages recorded with a run (older records: at its end only)."""
    said = [
        f"load average at the {when} {machine[key]}"
        for when, key in (("start", "load_average_at_start"), ("end", "load_average_at_end"))
        if key in machine
    ]
    return ", ".join(said)


def measurements_page() -> str:
    """The measured runs of ``docs/measurements/*.json`` (``docs/tools/record_run.py``)."""
    files = sorted((HERE / "measurements").glob("*.json"))
    if not files:
        return "No run has been recorded yet (`docs/tools/record_run.py`).\n"
    lines = []
    for path in files:
        m = json.loads(path.read_text())
        machine = m["machine"]
        lines += [
            f"### `{m['name']}`: `{m['command']}`",
            "",
            f"- **When, where**: {m['date_utc']} UTC, commit `{m['commit']}`, "
            f"{machine['cpus']} CPUs ({machine['cpu_model']}), Python {machine['python']}, "
            f"{_load_averages(machine)}",
            *(
                [f"- **Loaded**: not a measurement of calcheck alone ({m['loaded_because']})"]
                if m.get("loaded")
                else []
            ),
            f"- **Wall time**: {m['wall_seconds'] / 60:.1f} min ({m['wall_seconds']:.0f} s); "
            f"peak resident memory of a process {m['peak_rss_mb']} MB",
            f"- **Checks**: {m['as_expected']} of {m['checks']} as expected ({m['roles']}); "
            f"budget {m['budget']}, {m['reps']} replicates per cell; exit status "
            f"{m['exit_status']}",
        ]
        if m.get("jobs"):
            lines.append(f"- **Workers**: {m['jobs']}")
        estimate = m.get("estimate") or {}
        if estimate.get("expected_total_seconds"):
            said = [e + left for e, _, left in estimate.get("progress_lines", [])]
            lines.append(
                f"- **The run's own estimate**: {estimate['expected_total_seconds']:.0f} s in all "
                f"at {estimate['estimated_at_seconds']:.0f} s (simulation "
                f"{estimate['simulation_estimate_seconds']:.0f} s, report "
                f"{estimate['report_estimate_seconds']:.0f} s)"
                + (
                    f"; elapsed + time left at its {len(said)} progress lines: "
                    f"{min(said):.0f}-{max(said):.0f} s"
                    if said
                    else ""
                )
            )
        cpu = m.get("cpu") or {}
        if cpu.get("main_process_seconds") is not None:
            lines.append(
                f"- **Main process**: {cpu['main_process_seconds']:.1f} CPU-s of its own (its "
                f"main thread {cpu['main_thread_seconds']:.1f}); checks evaluated in "
                f"{cpu['evaluation_processes'] or 'the main'} process(es), "
                f"{cpu['evaluation_seconds']:.1f} CPU-s; side processes (evaluations, pictures) "
                f"{cpu['side_processes_seconds']:.1f} CPU-s"
            )
        kinds = m.get("cpu_seconds_by_experiment_kind") or {}
        if kinds:
            total = sum(v["cpu_seconds"] for v in kinds.values())
            lines += ["", f"Simulation CPU time {total:.0f} s:", ""]
            lines += ["| experiment kind | blocks | CPU s | share |", "|---|---|---|---|"]
            for kind, v in sorted(kinds.items(), key=lambda kv: -kv[1]["cpu_seconds"]):
                share = v["cpu_seconds"] / total if total else 0.0
                lines.append(f"| {kind} | {v['blocks']} | {v['cpu_seconds']:.0f} | {share:.0%} |")
        lines.append("")
    return "\n".join(lines)


def search_power_page() -> str:
    """The search's measured power: ``docs/measurements/search/power.json``.

    Copied from a ``calcheck search --power`` run's ``search/power.json``.
    """
    path = HERE / "measurements" / "search" / "power.json"
    if not path.is_file():
        return "No power run has been recorded yet (`calcheck search --power`).\n"
    rows = json.loads(path.read_text())
    # the family and cell go under the table, grouped: seven columns overflow the page
    lines = [
        "| target | worst case: exact failure | flagged | reached (above) | stated holds | s |",
        "|---|---|---|---|---|---|",
    ]
    cells: dict = {}
    for r in rows:
        cells_of = r["row"].strip().strip("|").split("|")
        worst, flagged, reached, stated, secs = (c.strip() for c in cells_of[2:])
        worst = worst.replace(" (at the weights found)", "")  # said in the page's text
        lines.append(f"| {r['target']} | {worst} | {flagged} | {reached} | {stated} | {secs} |")
        grid = ", ".join(f"{k}={v}" for k, v in r["grid"].items())
        cells.setdefault(f"{r['family']} ({grid}), alpha = {r['alpha']:g}", []).append(r["target"])
    lines.append("")
    for cell, targets in cells.items():
        lines.append(f"- {cell}: {', '.join(f'`{t}`' for t in targets)}")
    meta = HERE / "measurements" / "search" / "power_run.json"
    if meta.is_file():
        m = json.loads(meta.read_text())
        lines += [
            "",
            f"Measured {m['date_utc']} UTC at commit `{m['commit']}` with `{m['command']}` "
            f"({m['wall_seconds'] / 60:.0f} min wall on {m['cpus']} CPUs).",
        ]
    return "\n".join(lines) + "\n"


def refused_page() -> str:
    """Guarantees refused as studies, with the catalog's reason."""
    from calcheck.theory_checks.catalog import refused

    lines = ["| guarantee | why not a study |", "|---|---|"]
    lines += [f"| `{gid}` | {_cell(why)} |" for gid, why in sorted(refused().items())]
    return "\n".join(lines) + "\n"


def study_schema_page() -> str:
    """Every key of a study file and of its ``[search]`` table (the parser's own schema)."""
    from calcheck.theory_checks.study.files import schema_markdown

    return schema_markdown()


def write_pages(app=None) -> None:
    """Write every generated page (idempotent; only changed files are rewritten)."""
    OUT.mkdir(exist_ok=True)
    pages = {}
    for paper in PAPER_TITLES:
        pages[f"{paper}_guarantees.md"] = guarantees_page(paper)
        pages[f"{paper}_roles.md"] = roles_table(paper)
        pages[f"{paper}_audit.md"] = audit_page(paper)
        pages[f"{paper}_counterexamples.md"] = counterexamples_page(paper)
        pages[f"{paper}_figures.md"] = figures_page(paper)
        pages[f"{paper}_not_covered.md"] = not_covered_page(paper)
    pages["measurements.md"] = measurements_page()
    pages["refused.md"] = refused_page()
    pages["study_schema.md"] = study_schema_page()
    pages["search_power.md"] = search_power_page()
    for name, text in pages.items():
        path = OUT / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def setup(app):
    """Sphinx entry point: generate the pages before the sources are read."""
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
