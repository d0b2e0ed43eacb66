"""Static HTML report: the verdict table and the figures, no server and no JavaScript.

It reads the files a run writes (``results.json`` of ``calcheck run``, ``index.json`` of
``calcheck figures``), so any combination of the two renders.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

from calcheck.figures.findings import status
from calcheck.simulations.files import atomic_write_text, read_back

from ..results.roles import headline_parts, role_count_text
from .audit import AUDIT_HEADERS, audit_rows
from .doclinks import docs_base_url, guarantee_doc_url
from .files import SUMMARY_HEADERS, rate_lines, seed_text, summary_row

__all__ = ["write_html"]

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}
figure.pic{display:block;max-width:100%;margin:0.5em 0 1.5em 0;border-top:none;padding-top:0}
table{border-collapse:collapse;font-size:0.85em;margin:1em 0;display:block;overflow-x:auto}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;
overflow-wrap:break-word;max-width:28em}
td code.id{overflow-wrap:normal;word-break:normal}
td:nth-child(2){white-space:nowrap}
th{background:#f0f0f0;overflow-wrap:normal} .ok{color:#060} .fail{color:#b00;font-weight:bold}
figure{margin:2em 0;border-top:1px solid #ddd;padding-top:1em} img{max-width:100%}
code{background:#f4f4f4;padding:1px 4px} .small{font-size:0.85em;color:#555}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;padding:0.5em}
img.law{width:900px;max-width:100%} a.doc{font-size:0.85em}
"""


def _doc_link(guarantee_id: str, base: str | None) -> str:
    """A link to the guarantee's section of its paper's page on the docs site, or ''."""
    url = guarantee_doc_url(guarantee_id, base)
    if url is None:
        return ""
    return (
        f" <a class='doc' href='{html.escape(url)}' title='{html.escape(guarantee_id)} on its "
        "paper&#39;s page: statement, hypotheses, checks'>[paper]</a>"
    )


def _docs_note(base: str | None) -> str:
    if base is not None:
        return (
            f"<p class='small'>[paper] links lead to each guarantee's section of its paper's "
            f"page on the docs site (<code>{html.escape(base)}</code>).</p>"
        )
    return (
        "<p class='small'>Build the docs site (see the README) or set CALCHECK_DOCS_URL to a "
        "built site, and the report links each guarantee to its paper's page.</p>"
    )


def _check_id_html(check_id: str) -> str:
    """A check id in ``<code>``, breakable only after a dot between names.

    A narrow column otherwise broke ids mid-name (``gr21.t`` / ``hm3``); a dot inside a
    number (``times_0.7``) is no place to break either.
    """
    escaped = html.escape(check_id)
    return f"<code class='id'>{re.sub(r'[.](?![0-9])', '.<wbr>', escaped)}</code>"


def _verdict_table(results: dict, base: str | None = None) -> str:
    meta = results.get("meta", {})
    rows = []
    for c in results["checks"]:
        cls = "ok" if c["passed"] else "fail"
        cols = list(summary_row(c))
        cols[0] = _check_id_html(cols[0]) + _doc_link(c["guarantee"], base)
        cols[2] = f"<span class='{cls}'>{html.escape(cols[2])}</span>"
        cols[1:2] = [html.escape(cols[1])]
        cols[3:] = [html.escape(x) for x in cols[3:]]
        cols.append(html.escape(c["description"]))
        rows.append("<tr>" + "".join(f"<td>{v}</td>" for v in cols) + "</tr>")
    head = (*SUMMARY_HEADERS, "what")
    n_ok = sum(c["passed"] for c in results["checks"])
    return (
        f"<h2>Theory checks</h2><p>{n_ok} of {len(results['checks'])} checks as expected. Root "
        f"seed {seed_text(meta)}, {meta.get('reps')} replicates per cell, false-alarm rate "
        f"{meta.get('false_alarm')} per check (Bonferroni over its cells). Regenerate: "
        f"<code>{html.escape(str(meta.get('command', 'calcheck run')))}</code></p>"
        "<table><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr>"
        + "".join(rows)
        + "</table><p class='small'>Worst cell = smallest p-value, then smallest margin over "
        "the claim. Coverage is the fraction of replicates in which the guaranteed event "
        "held; claimed is 1 - alpha (1 - bound for expectation guarantees); the p-value is the "
        "exact one-sided binomial test of coverage >= claimed; tightness is how many times "
        "larger the bound is than the claimed-level quantile of the error; detects x k: the "
        "check would flag the bound multiplied by any factor below k at this budget.</p>"
        + _rate_fits(results)
    )


def _audit(results: dict) -> str:
    """The audit table: what each verdict rests on (``calcheck audit``)."""
    if "headline" not in results:  # a results.json written before the check protocol
        return ""
    rows = []
    for r in audit_rows(results):
        bad = r["role"] == "guarantee" and r["caught"] is False
        cells = [
            html.escape(
                "-"
                if r[h] is None
                else ("yes" if r[h] is True else "NO")
                if isinstance(r[h], bool)
                else str(r[h])
            )
            for h in AUDIT_HEADERS
        ]
        cells[0] = _check_id_html(str(r[AUDIT_HEADERS[0]]))
        rows.append(
            f"<tr class='{'fail' if bad else ''}'>"
            + "".join(f"<td>{c}</td>" for c in cells)
            + "</tr>"
        )
    return (
        "<h2>Audit</h2><p>What each verdict rests on: the same-path mutant (the claim "
        "tightened on the same draws) and whether the check caught it, its power (the "
        "smallest wrong claim it would have caught), its powerless cells and the check that "
        "implies it on the same draws. <code>calcheck audit</code> prints the same rows.</p>"
        "<table><tr>"
        + "".join(f"<th>{html.escape(h)}</th>" for h in AUDIT_HEADERS)
        + "</tr>"
        + "".join(rows)
        + "</table>"
    )


def _printed_claims(results: dict, base: str | None = None) -> str:
    """The report's first section: a paper's statements, checked as printed, that fail."""
    claims = results.get("printed_claims") or []
    if not claims:
        return ""
    items = []
    for p in claims:
        cls, head = ("ok", "fails as printed") if p["fails"] else ("fail", "NO LONGER FAILS")
        valid = ""
        if p["valid_form"]:
            v = p["valid_form"]
            verdict = f": {html.escape(v['verdict'])}" if v["verdict"] else ""
            valid = (
                f"<br>Valid form: <a href='#{html.escape(v['guarantee'])}'><code>"
                f"{html.escape(v['guarantee'])}</code></a> ({html.escape(v['label'])}: "
                f"{html.escape(v['statement'])}){verdict}"
            )
        items.append(
            f"<li><a href='#{html.escape(p['guarantee'])}'><code>"
            f"{html.escape(p['guarantee'])}</code></a>{_doc_link(p['guarantee'], base)}, "
            f"{html.escape(p['label'])}: <i>{html.escape(p['statement'])}</i><br>"
            f"<span class='{cls}'>{head}</span> "
            f"on {html.escape(p['where'])}: {html.escape(p['numbers'])}. "
            f"Evidence: {html.escape(p['evidence'])}.{valid}</li>"
        )
    return (
        "<h2>Printed claims that fail</h2><p>Statements of the papers, checked as printed, "
        "that the simulations contradict (check role <i>counterexample</i>; the run fails if "
        "one stops failing).</p><ul>" + "".join(items) + "</ul>"
    )


def _summary(results: dict) -> str:
    """What held and what did not, before any table."""
    checks = results["checks"]
    wrong = [c for c in checks if not c["passed"]]
    verdict = "ok" if not wrong else "fail"
    lines = [
        f"<p class='{verdict}'><b>{len(checks) - len(wrong)} of {len(checks)} checks as "
        "expected.</b></p><ul>",
        *(
            f"<li>{html.escape(part)}</li>"
            for part in headline_parts(
                results["headline"]["text"] if "headline" in results else role_count_text(checks)
            )
        ),
    ]
    if wrong:
        items = ", ".join(
            f"<a href='#{html.escape(c['guarantee'])}'><code>{html.escape(c['id'])}</code></a> "
            f"({html.escape(c['verdict'])}, expected {html.escape(c['expect'])}"
            + (f"; {html.escape(c['vacuity'])}" if c.get("vacuity") else "")
            + ")"
            for c in wrong
        )
        lines.append(f"<li class='fail'>not as expected: {items}</li>")
    return "<h2>Summary</h2>" + "".join(lines) + "</ul>"


def _pictures(results: dict, folder: Path, rel: str, base: str | None = None) -> str:
    reps = results.get("meta", {}).get("reps")
    parts = []
    seen = []
    for c in results["checks"]:
        gid = c["guarantee"]
        png = folder / f"{gid.replace('.', '_')}.png"
        if gid in seen or not png.is_file():
            continue
        seen.append(gid)
        ids = [x["id"] for x in results["checks"] if x["guarantee"] == gid]
        parts.append(
            f"<figure id='{html.escape(gid)}' class='pic'><img src='{html.escape(rel + png.name)}'"
            f" alt='{html.escape(gid)}' loading='lazy'><figcaption class='small'><code>"
            f"{html.escape(gid)}</code>{_doc_link(gid, base)}: {reps} replicates per point; checks "
            f"{html.escape(', '.join(ids))}</figcaption></figure>"
        )
    if not parts:
        return ""
    return (
        "<h2>Per guarantee</h2><p class='small'>One panel per alpha: the failure rate of the "
        "guaranteed event (1 - coverage, log scale) against n. In red, with 95% "
        "Clopper-Pearson bars and named, the law holding the worst cell (smallest p-value): "
        "it must stay below the dashed allowed rate (1 - claimed: alpha for a 1 - alpha "
        "guarantee; for a lower-bound event such as an impossibility the event is 'the "
        "statistic exceeds the bound' and the claim its probability); the other laws faint "
        "grey; no failure at all is drawn at half a replicate; grey crosses, the negative "
        "controls, which must lie above their allowance. Right: the tightness, the bound over "
        "the claimed-level quantile of the error (1: the bound is exactly what this law "
        "needs; below 1 it fails), the law the bound fits most closely in blue.</p>"
        + "".join(parts)
    )


def _rate_fits(results: dict) -> str:
    lines = rate_lines(results)
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(x)}</li>" for x in lines)
    return (
        "<h3>Rate fits</h3><p class='small'>Rate checks measure the threshold n* (coverage "
        "1 - delta) on grids of n; the verdict is the slope of log n* on log h. Exponents "
        "against the varied parameter, 95% bootstrap intervals:</p><ul class='small'>"
        + items
        + "</ul>"
    )


def _findings(found) -> str:
    if not found:
        return ""
    items = []
    for f in found:
        st = status(f)
        cls = {"holds": "ok", "does not hold": "fail"}.get(st, "small")
        mark = f"<span class='{cls}'>{st}</span>"
        value = html.escape(json.dumps(f["value"]))
        why = (
            f" <span class='small'>explanation: {html.escape(f['explanation'])}</span>"
            if f.get("explanation")
            else ""
        )
        items.append(
            f"<li>{html.escape(f['claim'])}: {mark} <span class='small'>({value})</span>{why}</li>"
        )
    return "<ul>" + "".join(items) + "</ul>"


def _figures(index: dict, rel: str) -> str:
    parts = ["<h2>Figures</h2>"]
    for f in index["figures"]:
        png = next((x for x in f["files"] if x.endswith(".png")), None)
        img = f"<img src='{html.escape(rel + png)}' alt='{html.escape(f['id'])}'>" if png else ""
        parts.append(
            f"<figure id='{html.escape(f['id'])}'><h3>{html.escape(f['id'])}</h3>{img}"
            f"<figcaption>{html.escape(f['caption'])}<br><span class='small'>module "
            f"<code>{html.escape(f['module'])}</code>, {f.get('reps')} repetitions, seed "
            f"{f.get('seed')}; regenerate: <code>{html.escape(f['command'])}</code></span>"
            f"</figcaption>{_findings(f.get('findings'))}</figure>"
        )
    return "".join(parts)


def write_html(
    page, *, results_json=None, figures_index=None, pictures=None, searches=None, title=None
) -> Path | None:
    """Write a static report page from whichever of the two inputs exist.

    Parameters
    ----------
    page : path
        The HTML file to write.
    results_json, figures_index : path, optional
        ``results.json`` of a run and ``index.json`` of the figures.
    pictures : path, optional
        Folder of the per-guarantee pictures (:mod:`calcheck.theory_checks.report.pictures`).
    searches : path, optional
        ``index.json`` of the stored searches (:mod:`calcheck.theory_checks.search.report`).
    title : str, optional
        The page's title and heading (default "calcheck report").

    Returns
    -------
    Path or None
        The page, or None when neither input exists.
    """
    page = Path(page)
    body = []
    # (files of earlier commands, perhaps edited by hand: an error names the file)
    if results_json and Path(results_json).is_file():
        with read_back(results_json, "a run's results"):
            results = json.loads(Path(results_json).read_text())
            base = docs_base_url()
            body.append(_printed_claims(results, base))  # findings first
            body.append(_summary(results))
            body.append(_docs_note(base))
            body.append(_verdict_table(results, base))
            body.append(_audit(results))
            if pictures is not None:
                rel = os.path.relpath(Path(pictures), page.parent)
                body.append(_pictures(results, Path(pictures), rel + "/", base))
    if figures_index and Path(figures_index).is_file():
        with read_back(figures_index, "the figures' index"):
            index = json.loads(Path(figures_index).read_text())
            rel = os.path.relpath(Path(figures_index).parent, page.parent)
            body.append(_figures(index, "" if rel == "." else rel + "/"))
    if searches and Path(searches).is_file():
        from ..search.report import search_section

        with read_back(searches, "the index of stored searches"):
            rel = os.path.relpath(Path(searches).parent, page.parent)
            body.append(search_section(searches, "" if rel == "." else rel + "/"))
    if not body:
        return None
    page.parent.mkdir(parents=True, exist_ok=True)
    heading = html.escape("calcheck report" if title is None else title)
    atomic_write_text(
        page,
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{heading}</title><style>{_STYLE}</style></head><body><h1>{heading}</h1>"
        + "".join(body)
        + "</body></html>",
    )
    return page
