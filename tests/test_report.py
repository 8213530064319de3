"""`xco reproduce all`: every reproduction in one report (python/xco/report/)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from xco.report import parse, render, run_all
from xco.reproduce import Options, Outcome, Reproduction

# ---- reading claims: the shapes the summaries print -------------------------


def test_a_check_block_gives_claim_ours_verdict_and_rule():
    text = (
        "table ...\n\n"
        "claim: with XCo all flows get roughly equal shares\n"
        "  ours: XCo timeslices: 191.8, 187.7 Mbit/s; Jain's index 1.000\n"
        "  -> holds (rule: Jain's index at least 0.9 (partly: 0.75))\n"
        "  why: each host gets the bottleneck in turn\n"
        "\n"
        "claim: request latency SICC < ICTCP < SW < One-all\n"
        "  ours: order at 0 of 4 request sizes\n"
        "  -> does not hold (rule: every size)\n"
    )
    a, b = parse(text)
    assert a.claim == "with XCo all flows get roughly equal shares"
    assert a.ours == "XCo timeslices: 191.8, 187.7 Mbit/s; Jain's index 1.000"
    assert (
        a.verdict == "holds" and a.detail.startswith("(rule: Jain's index") and "why: each host" in a.detail
    )
    assert (b.verdict, b.ours) == ("does not hold", "order at 0 of 4 request sizes")


def test_one_line_claims_and_cases_with_nested_parentheses():
    text = (
        "claim: NewReno goodput collapses beyond some N. ours: collapse at N >= 32 -> holds\n"
        "claim (SFQ (ns-2.35)): solves it largely: similar shares. ours: 2-hop / 6-hop = 0.29"
        " -> does not hold (similar shares: 0.5..2)\n"
        "claim (pacing): reduces but does not remove it. ours: 2-hop / 6-hop = 0.46 -> partly (0.5..2)\n"
    )
    got = parse(text)
    assert [(c.case, c.verdict) for c in got] == [
        ("", "holds"),
        ("SFQ (ns-2.35)", "does not hold"),
        ("pacing", "partly"),
    ]
    assert got[0].claim == "NewReno goodput collapses beyond some N" and got[0].ours == "collapse at N >= 32"
    assert got[1].ours == "2-hop / 6-hop = 0.29" and got[1].detail == "(similar shares: 0.5..2)"


def test_a_claim_on_two_lines_with_notes_below_and_one_without_a_verdict():
    text = (
        "claim: the 2-hop flow gets several times less throughput than the average 6-hop flow.\n"
        "ours: 2-hop 2.3 Mbit/s, 6-hop mean 74.3; 2-hop / 6-hop = 0.03 -> holds (holds: ratio <= 0.5)\n"
        "  longest drop runs at e0_0->h0: from h1 19\n"
        "\n"
        "claim: something we could not judge\n"
        "  ours: 3 runs\n"
    )
    a, b = parse(text)
    assert a.verdict == "holds" and a.ours.endswith("= 0.03") and "longest drop runs" in a.detail
    assert b.verdict is None and b.ours == "3 runs"
    assert parse("no claims here\n-> holds\n") == []


# ---- running a catalogue: rows for every entry, failures and skips ----------

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def _fake(rid: str, source: str, body=None, shares=()) -> Reproduction:
    def run(opts: Options) -> Outcome:
        if body is not None:
            body(opts)
        opts.out.mkdir(parents=True, exist_ok=True)
        files = []
        for i in (rid, *shares):
            (opts.out / f"{i}.txt").write_text(
                f"{i} summary\nclaim: {i} works. ours: seed {opts.seed} -> holds\n"
            )
            (opts.out / f"{i}.png").write_bytes(PNG)
            files += [opts.out / f"{i}.txt", opts.out / f"{i}.png"]
        return Outcome(files=files, summary=f"claim: {rid} works. ours: seed {opts.seed} -> holds\n")

    return Reproduction(
        id=rid, title=f"the {rid} experiment", source=source, run=run, shares_run_with=list(shares)
    )


def _boom(opts: Options) -> None:
    raise RuntimeError("the sweep met a scenario error at point 3")


def test_every_entry_is_a_row_failures_are_red_rows_and_real_ones_need_root(tmp_path):
    reg = {
        r.id: r
        for r in [
            _fake("xco-a", "xco.md"),
            _fake("pdn-one", "pdn.md", shares=["pdn-two"]),
            _fake("pdn-two", "pdn.md", shares=["pdn-one"]),
            _fake("outcast-bad", "outcast.md", body=_boom),
            _fake("real-thing", "xco (real hosts)"),
        ]
    }
    rep = run_all(reg, tmp_path, seed=7, is_root=False, log=None)
    rows = {r.rid: r for r in rep.rows}
    assert list(rows) == ["xco-a", "pdn-one", "pdn-two", "outcast-bad", "real-thing"]  # paper order
    assert rows["xco-a"].status == "ran" and rows["xco-a"].claims[0].ours == "seed 7"
    assert rows["pdn-two"].status == "ran" and rows["pdn-two"].note == "in the run of pdn-one"
    assert rows["pdn-two"].claims[0].claim == "pdn-two works"  # its own summary, from the shared run
    assert [f.name for f in rows["pdn-two"].figures] == ["pdn-two.png"]
    assert rows["outcast-bad"].status == "failed" and "scenario error at point 3" in rows["outcast-bad"].error
    assert rows["real-thing"].status == "skipped" and "root" in rows["real-thing"].note
    files = render.write(rep)
    md, page, table = (f.read_text() for f in files)
    for rid in reg:
        assert f"### {rid}:" in md and f'id="{rid}"' in page
    assert "RuntimeError: the sweep met a scenario error at point 3" in md
    assert '<p class="failed"><strong>FAILED' in page
    counts = dict(render.counts(rep))
    assert (
        counts["holds"] == 3
        and counts["reproductions that failed"] == 1
        and counts["reproductions skipped"] == 1
    )
    assert '<img src="pdn-one/pdn-two.png"' in page  # figures by relative path
    got = list(csv.DictReader(table.splitlines()))
    assert {r["reproduction"] for r in got} == set(reg)


def test_an_interrupt_reports_what_finished_and_marks_the_rest(tmp_path):
    def stop(opts: Options) -> None:
        raise KeyboardInterrupt

    reg = {
        r.id: r
        for r in [_fake("xco-a", "xco.md"), _fake("xco-b", "xco.md", body=stop), _fake("xco-c", "xco.md")]
    }
    rep = run_all(reg, tmp_path, is_root=True, log=None)
    assert rep.interrupted
    assert [(r.rid, r.status) for r in rep.rows] == [
        ("xco-a", "ran"),
        ("xco-b", "not run"),
        ("xco-c", "not run"),
    ]
    assert dict(render.counts(rep))["reproductions not run (interrupted)"] == 2


# ---- the real catalogue, end to end ------------------------------------------


def test_reproduce_all_reports_every_reproduction_xco_list_prints(cli, tmp_path: Path):
    out = tmp_path / "all"
    r = cli("reproduce", "all", "--no-real", "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    assert re.search(r"\[1/\d+\] \S+: running", r.stderr)  # progress on stderr
    listed = re.findall(r"^  (\S+)  ", cli("list").stdout, flags=re.M)
    assert len(listed) >= 30
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    for rid in listed:
        assert f"### {rid}:" in md, rid
        assert f'id="{rid}"' in page, rid
    rows = list(csv.DictReader((out / "claims.csv").open()))
    ran = [row for row in rows if row["status"] == "ran"]
    assert {row["status"] for row in rows} <= {"ran", "skipped"}, [
        r for r in rows if r["status"] not in ("ran", "skipped")
    ]
    # every simulated reproduction states at least one claim, and every claim has a verdict
    assert {row["reproduction"] for row in ran} == {rid for rid in listed if not rid.startswith("real-")}
    assert all(row["verdict"] in ("holds", "partly", "does not hold") for row in ran), [
        row for row in ran if row["verdict"] not in ("holds", "partly", "does not hold")
    ]
    # every figure the report shows exists
    for src in re.findall(r'<img src="([^"]+)"', page):
        assert (out / src).is_file(), src
    # and the page opens in a real browser: loads, every figure renders, no console error, no dead link
    import browser

    with browser.serve(out) as base_url, browser.chromium() as driver:
        problems = browser.check_pages(driver, base_url, out, ["report.html"])
    assert not problems, "\n".join(problems)


def test_reproduce_all_refuses_a_profile_with_a_clear_error(cli, tmp_path: Path):
    r = cli("reproduce", "all", "--profile", "paper", "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and "--profile" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "r" / "report.html").exists()
