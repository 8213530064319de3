"""Writing the report: ``report.md``, ``report.html`` and ``claims.csv``.

Both documents hold the same things in the same order: the run's metadata,
a first table counting the verdicts (per claim, and the reproductions that
failed, were skipped or state no verdict), then one section per paper with,
per reproduction, its status and wall time, a table of its claims (the
paper's words, our figures, the verdict) and its figures. HTML is written by
hand from escaped text (no template engine): one file, figures linked by
relative paths, readable offline.
"""

from __future__ import annotations

import csv
import html
import platform
import sys
from pathlib import Path

from .. import __version__
from ..sim import source_commit
from .runner import PAPERS, REAL, Report, Row

VERDICT_ORDER = ("holds", "partly", "does not hold")


def _sections() -> list[tuple[str, str, str]]:
    return [*PAPERS, REAL]


def counts(report: Report) -> list[tuple[str, int]]:
    """The first table: claims per verdict, then reproductions without a verdict, failed, skipped, not run."""
    claims = [c for r in report.rows for c in r.claims]
    out = [(v, sum(c.verdict == v for c in claims)) for v in VERDICT_ORDER]
    out.append(("claims without a verdict", sum(c.verdict is None for c in claims)))
    ran = [r for r in report.rows if r.status == "ran"]
    out.append(("reproductions that state no claim", sum(not r.claims for r in ran)))
    out.append(("reproductions that failed", sum(r.status == "failed" for r in report.rows)))
    out.append(("reproductions skipped", sum(r.status == "skipped" for r in report.rows)))
    out.append(("reproductions not run (interrupted)", sum(r.status == "not run" for r in report.rows)))
    return out


def metadata(report: Report) -> list[tuple[str, str]]:
    """What ran: version, commit, mode, seed, machine, wall time."""
    return [
        ("xco version", __version__),
        ("source commit", source_commit() or "unknown (not a git checkout)"),
        ("mode", "full (the papers' sweeps)" if report.full else "quick"),
        ("seed", str(report.seed)),
        *(
            [
                (
                    "seeds per point",
                    f"{report.seeds} (seeds {report.seed}..{report.seed + report.seeds - 1};"
                    " figures: mean and 95 % interval, Student t;"
                    " real-host runs: every real point that many times; sicc-treetime: one seed)",
                )
            ]
            if report.seeds > 1
            else []
        ),
        ("profiles", "each reproduction's default (per row below)"),
        ("python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("machine", f"{platform.system()} {platform.machine()}"),
        ("wall time", f"{report.wall_s:.1f} s"),
        ("reproductions", str(len(report.rows))),
        ("interrupted", "yes: rows marked 'not run' did not run" if report.interrupted else "no"),
    ]


def _status(row: Row) -> str:
    if row.status == "ran":
        t = f" in {row.wall_s:.1f} s" if row.wall_s is not None else ""
        how = f" ({row.note})" if row.note else ""
        prof = f", profile {row.profile}" if row.profile else ""
        return f"ran{t}{how}{prof}"
    if row.status == "failed":
        return f"FAILED after {row.wall_s or 0:.1f} s"
    return f"{row.status}: {row.note}"


def _rel(report: Report, f: Path) -> str:
    try:
        return f.relative_to(report.out).as_posix()
    except ValueError:
        return f.as_posix()


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def markdown(report: Report) -> str:
    """``report.md``."""
    out = ["# xco: every reproduction, one report", ""]
    out += ["| run | |", "|---|---|", *[f"| {k} | {_md_cell(v)} |" for k, v in metadata(report)], ""]
    out += [
        "## Verdicts",
        "",
        "| | count |",
        "|---|---:|",
        *[f"| {k} | {n} |" for k, n in counts(report)],
        "",
    ]
    for key, name, about in _sections():
        rows = [r for r in report.rows if r.section == key]
        if not rows:
            continue
        spec = f" (spec {key})" if key != REAL[0] else ""
        out += [f"## {name}{spec}", "", f"_{about}_", ""]
        for r in rows:
            out += [f"### {r.rid}: {r.title}", "", f"**{_status(r)}**", ""]
            if r.status == "failed":
                out += ["```", r.error.rstrip(), "```", ""]
            if r.claims:
                out += ["| claim (the paper) | ours | verdict |", "|---|---|---|"]
                for c in r.claims:
                    words = f"({c.case}) {c.claim}" if c.case else c.claim
                    v = c.verdict or "no verdict"
                    detail = f" {c.detail}" if c.detail else ""
                    out.append(f"| {_md_cell(words)} | {_md_cell(c.ours)} | **{v}**{_md_cell(detail)} |")
                out.append("")
            elif r.status == "ran":
                out += ["_its summary states no claim with a verdict_", ""]
            for f in r.figures:
                out += [f"![{r.rid}: {f.stem}]({_rel(report, f)})", ""]
    return "\n".join(out) + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; text-align: left; }
td.n { text-align: right; }
.holds { background: #e3f4e3; } .partly { background: #fff3d6; } .fails { background: #fbe0e0; }
.failed { background: #f8caca; } .skipped, .notrun { color: #666; }
img { max-width: 100%; height: auto; border: 1px solid #eee; margin: 0.25rem 0; }
pre { background: #f6f6f6; padding: 0.5rem; overflow-x: auto; }
"""

_CLASS = {"holds": "holds", "partly": "partly", "does not hold": "fails"}


def _e(s: str) -> str:
    return html.escape(s, quote=True)


def html_page(report: Report) -> str:
    """``report.html``."""
    o = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',  # no favicon request (the report is one file and its figures)
        "<title>xco: every reproduction, one report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>xco: every reproduction, one report</h1>",
        "<table><tbody>",
        *[f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in metadata(report)],
        "</tbody></table>",
        '<h2 id="verdicts">Verdicts</h2><table><thead><tr><th></th><th>count</th></tr></thead><tbody>',
    ]
    for k, n in counts(report):
        cls = _CLASS.get(k, "failed" if k.endswith("failed") and n else "")
        o.append(f'<tr class="{cls}"><td>{_e(k)}</td><td class="n">{n}</td></tr>')
    o.append("</tbody></table>")
    o.append("<nav><ul>")
    for key, name, _ in _sections():
        if any(r.section == key for r in report.rows):
            o.append(f'<li><a href="#{_e(key)}">{_e(name)}</a></li>')
    o.append("</ul></nav>")
    for key, name, about in _sections():
        rows = [r for r in report.rows if r.section == key]
        if not rows:
            continue
        spec = f" (spec {key})" if key != REAL[0] else ""
        o += [f'<h2 id="{_e(key)}">{_e(name + spec)}</h2>', f"<p><em>{_e(about)}</em></p>"]
        for r in rows:
            cls = {"failed": "failed", "skipped": "skipped", "not run": "notrun"}.get(r.status, "")
            o += [
                f'<h3 id="{_e(r.rid)}">{_e(r.rid)}: {_e(r.title)}</h3>',
                f'<p class="{cls}"><strong>{_e(_status(r))}</strong></p>',
            ]
            if r.status == "failed":
                o.append(f'<pre class="failed">{_e(r.error.rstrip())}</pre>')
            if r.claims:
                o.append(
                    "<table><thead><tr><th>claim (the paper)</th><th>ours</th><th>verdict</th></tr></thead>"
                    "<tbody>"
                )
                for c in r.claims:
                    words = f"({c.case}) {c.claim}" if c.case else c.claim
                    v = c.verdict or "no verdict"
                    o.append(
                        f'<tr><td>{_e(words)}</td><td>{_e(c.ours)}</td><td class="{_CLASS.get(v, "")}">'
                        f"<strong>{_e(v)}</strong> {_e(c.detail)}</td></tr>"
                    )
                o.append("</tbody></table>")
            elif r.status == "ran":
                o.append("<p><em>its summary states no claim with a verdict</em></p>")
            for f in r.figures:
                o.append(f'<p><img src="{_e(_rel(report, f))}" alt="{_e(r.rid)}: {_e(f.stem)}"></p>')
            if r.summary:
                o.append(
                    "<details><summary>the summary as printed</summary>"
                    f"<pre>{_e(r.summary.rstrip())}</pre></details>"
                )
    o.append("</body></html>")
    return "\n".join(o) + "\n"


def write(report: Report) -> list[Path]:
    """Write ``report.md``, ``report.html`` and ``claims.csv`` into ``report.out``."""
    report.out.mkdir(parents=True, exist_ok=True)
    md = report.out / "report.md"
    md.write_text(markdown(report))
    page = report.out / "report.html"
    page.write_text(html_page(report))
    table = report.out / "claims.csv"
    with table.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["paper", "reproduction", "status", "case", "claim", "ours", "verdict", "detail", "wall_s"]
        )
        for r in report.rows:
            base = [r.section, r.rid, r.status]
            wall = "" if r.wall_s is None else f"{r.wall_s:.2f}"
            if not r.claims:
                w.writerow([*base, "", "", "", "", r.error.splitlines()[0] if r.error else r.note, wall])
            for c in r.claims:
                w.writerow([*base, c.case, c.claim, c.ours, c.verdict or "", c.detail, wall])
    return [md, page, table]


def print_counts(report: Report, file=sys.stdout) -> None:
    """The verdict counts, as the command prints them at its end."""
    for k, n in counts(report):
        print(f"  {k:40s} {n:4d}", file=file)
