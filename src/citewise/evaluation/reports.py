"""Reports of a :class:`~citewise.evaluation.compare.Comparison` (and optionally a gate result).

Three formats, same content:

* ``md`` — one table per slice: every arm's mean and 95% CI per metric, then each arm's
  difference to the baseline with its CI and paired randomisation p-value; gate breaches last.
* ``json`` — :meth:`Comparison.to_dict` plus the gate result (what ``--json`` prints).
* ``html`` — a self-contained page (inline CSS and SVG, no scripts, fonts or other external
  assets): the same tables, plus one bar chart per slice (a bar per arm and metric, CI
  whiskers, floors drawn as red ticks).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Sequence

from citewise.core import CitewiseError
from citewise.evaluation.compare import Comparison
from citewise.evaluation.gate import Breach, Floors

FORMATS = ("md", "json", "html")
_COLOURS = ("#4C78A8", "#F58518", "#54A24B", "#B279A2", "#E45756", "#72B7B2", "#9D755D", "#BAB0AC")


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _gate_dict(floors: Floors | None, breaches: Sequence[Breach] | None) -> dict | None:
    if floors is None:
        return None
    return {"passed": not breaches, "floors": floors.floors, "breaches": [str(b) for b in breaches or ()]}


def to_json(c: Comparison, floors: Floors | None = None, breaches: Sequence[Breach] | None = None) -> str:
    """JSON text: the comparison's :meth:`~Comparison.to_dict` with ``gate`` added when given."""
    data = c.to_dict()
    gate = _gate_dict(floors, breaches)
    if gate is not None:
        data["gate"] = gate
    return json.dumps(data, indent=2, sort_keys=False)


def to_markdown(c: Comparison, floors: Floors | None = None, breaches: Sequence[Breach] | None = None) -> str:
    """Markdown: one section per slice (means with CIs, then deltas vs the baseline)."""
    lines = [f"# Retrieval evaluation: {c.name}", ""]
    s = c.settings
    lines.append(
        f"Baseline **{c.baseline}**; 95% percentile bootstrap CIs ({s.get('resamples')} resamples), "
        f"two-sided paired randomisation test ({s.get('permutations')} permutations), seed {s.get('seed')}."
    )
    lines.append("")
    for slice_name, qids in c.slices.items():
        lines += [f"## {slice_name} ({len(qids)} queries)", ""]
        lines.append("| arm | " + " | ".join(c.metrics) + " |")
        lines.append("|---|" + "---:|" * len(c.metrics))
        for arm in c.arms:
            cells = []
            for m in c.metrics:
                lo, hi = c.ci[arm][slice_name][m]
                cells.append(f"{c.means[arm][slice_name][m]:.3f} [{lo:.3f}, {hi:.3f}]")
            lines.append(f"| {arm} | " + " | ".join(cells) + " |")
        for arm in c.arms[1:]:
            cells = []
            for m in c.metrics:
                d = c.deltas[arm][slice_name][m]
                cells.append(f"{d['delta']:+.3f} [{d['ci'][0]:+.3f}, {d['ci'][1]:+.3f}] p={_p(d['p'])}")
            lines.append(f"| {arm} − {c.baseline} | " + " | ".join(cells) + " |")
        lines.append("")
    gate = _gate_dict(floors, breaches)
    if gate is not None:
        lines.append(
            "## Gate: " + ("passed" if gate["passed"] else f"FAILED ({len(gate['breaches'])} floors breached)")
        )
        lines.append("")
        lines += [f"- {b}" for b in gate["breaches"]]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _chart(c: Comparison, slice_name: str, floors: Floors | None) -> str:
    """Inline SVG bar chart of one slice: groups per metric, a bar per arm, CI whiskers."""
    bar, gap, group_gap, height, top, left = 14, 2, 18, 160, 20, 34
    n_arms = len(c.arms)
    group_w = n_arms * (bar + gap) + group_gap
    width = left + group_w * len(c.metrics) + 10
    total_h = top + height + 60
    y = lambda v: top + height * (1.0 - max(0.0, min(1.0, v)))  # noqa: E731
    parts = [f'<svg width="{width}" height="{total_h}" role="img" aria-label="{html.escape(slice_name)} metrics">']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>'
            f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" class="ax" text-anchor="end">{tick:g}</text>'
        )
    fl = floors.floors.get(slice_name, {}) if floors else {}
    for gi, m in enumerate(c.metrics):
        gx = left + gi * group_w + group_gap / 2
        for ai, arm in enumerate(c.arms):
            v = c.means[arm][slice_name][m]
            lo, hi = c.ci[arm][slice_name][m]
            x = gx + ai * (bar + gap)
            colour = _COLOURS[ai % len(_COLOURS)]
            parts.append(
                f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bar}" height="{top + height - y(v):.1f}" fill="{colour}">'
                f"<title>{html.escape(arm)} {html.escape(m)}: {v:.3f} [{lo:.3f}, {hi:.3f}]</title></rect>"
            )
            cx = x + bar / 2
            parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" class="ci"/>')
        if m in fl:
            parts.append(
                f'<line x1="{gx - 3:.1f}" x2="{gx + n_arms * (bar + gap) + 1:.1f}" y1="{y(fl[m]):.1f}" '
                f'y2="{y(fl[m]):.1f}" class="floor"><title>floor {fl[m]:g}</title></line>'
            )
        lx = gx + n_arms * (bar + gap) / 2
        parts.append(
            f'<text x="{lx:.1f}" y="{top + height + 14}" class="ax" text-anchor="end" '
            f'transform="rotate(-35 {lx:.1f} {top + height + 14})">{html.escape(m)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}th:first-child,td:first-child{text-align:left}
th{background:#f5f5f5}.ci{stroke:#222;stroke-width:1.2}.grid{stroke:#e5e5e5}.ax{font-size:10px;fill:#555}
.floor{stroke:#d62728;stroke-width:2}.sig{font-weight:600}.legend span{display:inline-block;margin-right:1rem}
.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-1px}
.fail{color:#b00020}.pass{color:#1b7f3b}small{color:#666}
"""


def to_html(c: Comparison, floors: Floors | None = None, breaches: Sequence[Breach] | None = None) -> str:
    """A self-contained HTML page (inline CSS and SVG only)."""
    e = html.escape
    s = c.settings
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>citewise evaluation: {e(c.name)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Retrieval evaluation: {e(c.name)}</h1>",
        f"<p>Baseline <b>{e(c.baseline)}</b>. Bars: means; whiskers: 95% percentile bootstrap CI "
        f"({s.get('resamples')} resamples); red ticks: gate floors. p: two-sided paired randomisation "
        f"test ({s.get('permutations')} permutations, seed {s.get('seed')}); bold when p &lt; 0.05.</p>",
    ]
    out.append(
        '<p class="legend">'
        + "".join(
            f'<span><i style="background:{_COLOURS[i % len(_COLOURS)]}"></i>{e(a)}</span>' for i, a in enumerate(c.arms)
        )
        + "</p>"
    )
    gate = _gate_dict(floors, breaches)
    if gate is not None:
        if gate["passed"]:
            out.append('<p class="pass"><b>Gate passed</b>: every floor met.</p>')
        else:
            out.append(
                f'<p class="fail"><b>Gate failed</b>: {len(gate["breaches"])} floors breached.</p><ul class="fail">'
                + "".join(f"<li><code>{e(b)}</code></li>" for b in gate["breaches"])
                + "</ul>"
            )
    for slice_name, qids in c.slices.items():
        out.append(f"<h2>{e(slice_name)} <small>({len(qids)} queries)</small></h2>")
        out.append(_chart(c, slice_name, floors))
        out.append("<table><tr><th>arm</th>" + "".join(f"<th>{e(m)}</th>" for m in c.metrics) + "</tr>")
        for arm in c.arms:
            out.append(
                f"<tr><td>{e(arm)}</td>"
                + "".join(
                    f"<td>{c.means[arm][slice_name][m]:.3f} <small>[{c.ci[arm][slice_name][m][0]:.3f}, "
                    f"{c.ci[arm][slice_name][m][1]:.3f}]</small></td>"
                    for m in c.metrics
                )
                + "</tr>"
            )
        for arm in c.arms[1:]:
            cells = []
            for m in c.metrics:
                d = c.deltas[arm][slice_name][m]
                cls = ' class="sig"' if d["p"] < 0.05 else ""
                cells.append(
                    f"<td{cls}>{d['delta']:+.3f} <small>[{d['ci'][0]:+.3f}, {d['ci'][1]:+.3f}]</small> "
                    f"p={_p(d['p'])}</td>"
                )
            out.append(f"<tr><td>{e(arm)} − {e(c.baseline)}</td>" + "".join(cells) + "</tr>")
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)


def render(c: Comparison, fmt: str, floors: Floors | None = None, breaches: Sequence[Breach] | None = None) -> str:
    """Render in ``fmt`` (``md`` | ``json`` | ``html``).

    Raises:
        CitewiseError: unknown format (the message lists the valid ones).
    """
    fmt = fmt.lower().lstrip(".")
    fmt = {"markdown": "md", "htm": "html"}.get(fmt, fmt)
    if fmt == "md":
        return to_markdown(c, floors, breaches)
    if fmt == "json":
        return to_json(c, floors, breaches)
    if fmt == "html":
        return to_html(c, floors, breaches)
    raise CitewiseError(f"unknown report format '{fmt}' (valid: {', '.join(FORMATS)})")


def write_report(
    path: str | Path,
    c: Comparison,
    fmt: str | None = None,
    floors: Floors | None = None,
    breaches: Sequence[Breach] | None = None,
) -> Path:
    """Write a report to ``path``; the format defaults to the file's suffix (.md, .json, .html).

    Raises:
        CitewiseError: unknown format or an unwritable path.
    """
    path = Path(path)
    text = render(c, fmt or path.suffix or "md", floors, breaches)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise CitewiseError(f"{path}: cannot write report: {e.strerror or e}") from None
    return path
