"""Reports of a RAGAS run (:meth:`citewise.evaluation.ragas.RagasReport.to_dict`): JSON, Markdown
or a self-contained HTML page (inline CSS and SVG, no scripts): the means with a bar per metric,
the diagnosis table (metric range → likely cause → action, :mod:`citewise.evaluation.diagnosis`),
the noise-sensitivity flags, the notes, and one row per question with the judge's decisions."""

from __future__ import annotations

import html
import json
from pathlib import Path

from citewise.core import CitewiseError
from citewise.evaluation.ragas import METRICS
from citewise.evaluation.reports import _CSS

FORMATS = ("json", "md", "html")


def _v(x) -> str:
    return "—" if x is None else f"{x:.3f}"


def to_markdown(d: dict) -> str:
    lines = [
        f"# RAGAS: {d['dataset']}",
        "",
        f"{d['rows']} rows ({d['rows_with_ground_truth']} with ground truth), judge {d['judge'] or 'none'}, "
        f"embedder {d['embedder'] or 'none'}.",
        "",
        "| metric | mean | rows |",
        "|---|---:|---:|",
    ]
    lines += [f"| {m} | {_v(d['means'][m]['mean'])} | {d['means'][m]['n']} |" for m in METRICS]
    lines += ["", "## Diagnosis", ""]
    if d["diagnosis"]:
        lines += ["| metric | range | value | likely cause | action |", "|---|---|---:|---|---|"]
        lines += [
            f"| {x['metric']} | {x['range']} | {x['value']:.3f} | {x['symptom']} | {x['action']} |"
            for x in d["diagnosis"]
        ]
    else:
        lines.append("No metric measured: nothing to diagnose.")
    if d["noise_flagged"]:
        lines += ["", f"Noise sensitivity above {d['noise_flag']}: " + ", ".join(d["noise_flagged"])]
    if d["notes"]:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in d["notes"]]
    return "\n".join(lines) + "\n"


def _bars(means: dict) -> str:
    w, bar, gap, h, top, left = 0, 28, 22, 140, 12, 30
    shown = [m for m in METRICS if means[m]["mean"] is not None]
    w = left + len(shown) * (bar + gap) + 10
    y = lambda v: top + h * (1 - max(0.0, min(1.0, v)))  # noqa: E731
    parts = [f'<svg width="{max(w, 120)}" height="{top + h + 70}" role="img" aria-label="metric means">']
    for t in (0, 0.5, 1):
        parts.append(
            f'<line x1="{left}" x2="{w - 10}" y1="{y(t):.1f}" y2="{y(t):.1f}" class="grid"/>'
            f'<text x="{left - 4}" y="{y(t) + 4:.1f}" class="ax" text-anchor="end">{t:g}</text>'
        )
    for i, m in enumerate(shown):
        v = means[m]["mean"]
        x = left + gap / 2 + i * (bar + gap)
        parts.append(
            f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bar}" height="{top + h - y(v):.1f}" fill="#4C78A8">'
            f"<title>{html.escape(m)}: {v:.3f}</title></rect>"
        )
        lx = x + bar / 2
        parts.append(
            f'<text x="{lx:.1f}" y="{top + h + 12}" class="ax" text-anchor="end" '
            f'transform="rotate(-35 {lx:.1f} {top + h + 12})">{html.escape(m)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def to_html(d: dict) -> str:
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>citewise RAGAS: {e(d['dataset'])}</title><style>{_CSS}</style></head><body>",
        f"<h1>RAGAS: {e(d['dataset'])}</h1>",
        f"<p>{d['rows']} rows ({d['rows_with_ground_truth']} with ground truth, {d['abstentions']} abstentions, "
        f"{d['mean_contexts']} contexts per row); judge <b>{e(d['judge'] or 'none')}</b>, embedder "
        f"{e(d['embedder'] or 'none')}. Context precision is relevant retrieved / retrieved; the rank-weighted "
        f"form is context_precision_ranked.</p>",
        _bars(d["means"]),
        "<table><tr><th>metric</th><th>mean</th><th>rows</th></tr>",
    ]
    out += [
        f"<tr><td>{e(m)}</td><td>{_v(d['means'][m]['mean'])}</td><td>{d['means'][m]['n']}</td></tr>" for m in METRICS
    ]
    out.append("</table><h2>Diagnosis</h2>")
    if d["diagnosis"]:
        out.append("<table><tr><th>metric</th><th>range</th><th>value</th><th>likely cause</th><th>action</th></tr>")
        out += [
            f"<tr><td>{e(x['metric'])}</td><td>{e(x['range'])}</td><td>{x['value']:.3f}</td>"
            f"<td style='text-align:left'>{e(x['symptom'])}</td><td style='text-align:left'>{e(x['action'])}</td></tr>"
            for x in d["diagnosis"]
        ]
        out.append("</table>")
    else:
        out.append("<p>No metric measured: nothing to diagnose.</p>")
    if d["noise_flagged"]:
        out.append(f'<p class="fail">Noise sensitivity above {d["noise_flag"]}: {e(", ".join(d["noise_flagged"]))}</p>')
    if d["notes"]:
        out.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in d["notes"]) + "</ul>")
    out.append(
        "<h2>Rows</h2><table><tr><th>id</th><th>question</th>"
        + "".join(f"<th>{e(m)}</th>" for m in METRICS)
        + "<th>judge notes</th></tr>"
    )
    for r in d["per_row"]:
        notes = "; ".join((r.get("judgments") or {}).get("notes", []) + (r.get("noise") or {}).get("notes", []))
        out.append(
            f"<tr><td>{e(r['id'])}</td><td style='text-align:left'>{e(r['question'])}</td>"
            + "".join(f"<td>{_v(r['scores'].get(m))}</td>" for m in METRICS)
            + f"<td style='text-align:left'><small>{e(notes)}</small></td></tr>"
        )
    out.append("</table></body></html>")
    return "\n".join(out)


def render(d: dict, fmt: str) -> str:
    """``d`` (a RAGAS report dict) as ``json`` | ``md`` | ``html``.

    Raises:
        CitewiseError: unknown format (the message lists the valid ones).
    """
    fmt = {"markdown": "md", "htm": "html"}.get(fmt.lower().lstrip("."), fmt.lower().lstrip("."))
    if fmt == "json":
        return json.dumps(d, indent=2)
    if fmt == "md":
        return to_markdown(d)
    if fmt == "html":
        return to_html(d)
    raise CitewiseError(f"unknown report format '{fmt}' (valid: {', '.join(FORMATS)})")


def write(path: str | Path, d: dict) -> Path:
    """Write ``d`` to ``path`` in the format of its suffix (.json, .md, .html).

    Raises:
        CitewiseError: unknown suffix or an unwritable path.
    """
    path = Path(path)
    text = render(d, path.suffix or "json")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise CitewiseError(f"{path}: cannot write report: {e.strerror or e}") from None
    return path
