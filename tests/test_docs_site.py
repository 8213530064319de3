"""The documentation site cannot rot: it builds strictly, its generated
scenario reference matches the schema's source, every command it marks as
runnable runs, and every page works in a real headless browser.

A command block is marked by an HTML comment on the line before its fence
(invisible on the rendered page):

    <!-- run -->
    ```bash
    xco sim run incast.toml --out out
    ```

The marked blocks of one page run in order in one fresh temporary
directory, each with `bash -e -o pipefail`, `xco` and the venv's Python first
on PATH and `XCO_CHECKOUT` naming this checkout; a block that fails fails the
test with its text and output.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import browser
import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
MARKER = "<!-- run -->"
BLOCK = re.compile(r"^<!-- run -->[ \t]*\n```(?:bash|sh)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
BLOCK_TIMEOUT_S = 180


def mkdocs(*args: str, cwd: Path = REPO, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if check and r.returncode != 0:
        pytest.fail(f"mkdocs {' '.join(args)} failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once for this module (strict: any warning fails)."""
    out = tmp_path_factory.mktemp("site")
    mkdocs("build", "--strict", "--site-dir", str(out))
    return out


# ---- the generated scenario reference ----


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_scenario_reference", REPO / "scripts/gen_scenario_reference.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_scenario_reference_is_what_the_schema_says():
    gen = _generator()
    page = (DOCS / "reference/scenario.md").read_text()
    assert page == gen.render(), (
        "docs/reference/scenario.md is stale against the Rust schema: "
        "run python3 scripts/gen_scenario_reference.py and commit the page"
    )


def test_scenario_reference_lists_the_keys_the_simulator_reads():
    """Spot checks against the simulator itself: keys the page lists are accepted, in the tables it names."""
    import xco.scenario

    page = (DOCS / "reference/scenario.md").read_text()
    for section, key in [
        ("[tcp]", "rto_min_ms"),
        ("[tcp]", "hystart"),
        ("[output]", "queue_timeline_max_rows"),
        ("[host]", "tsq_limit_bytes"),
        ("[xco]", "controller"),
        ("[xco]", "directive_lead_us"),
        ('kind = "web_fanin"', "overload_fraction"),
        ('kind = "sfq"', "admission"),
    ]:
        assert f"## `{section}`" in page or f"### `{section}`" in page, section
        assert f"| `{key}` |" in page, key
    base = {
        "run": {"duration_ms": 1},
        "topology": {"kind": "star", "hosts": 2},
        "apps": [{"kind": "bulk", "src": "h0", "dst": "h1"}],
    }
    xco.scenario.validate({**base, "tcp": {"rto_min_ms": 5, "hystart": False}})
    xco.scenario.validate({**base, "xco": {"controller": "h0", "directive_lead_us": 100}})
    with pytest.raises(xco.scenario.ScenarioError):
        xco.scenario.validate({**base, "tcp": {"no_such_key_in_the_reference": 1}})


def test_generator_refuses_a_schema_it_cannot_read(tmp_path, monkeypatch):
    gen = _generator()
    fake = tmp_path / "schema.rs"
    fake.write_text("// a schema whose structs are gone\n")
    monkeypatch.setattr(gen, "SCENARIO", tmp_path)
    (tmp_path / "limits.rs").write_text((REPO / "crates/xco-sim/src/scenario/limits.rs").read_text())
    with pytest.raises(gen.SchemaShapeError, match="Scenario"):
        gen.render()


# ---- the build ----


def test_site_builds_in_strict_mode(site):
    pages = browser.html_pages(site)
    for page in (
        "index.html",
        "tutorial.html",
        "operator.html",
        "reference/scenario.html",
        "reference/python.html",
    ):
        assert page in pages, page
    for remedy in ("xco", "pdn", "outcast", "sicc"):
        assert f"remedies/{remedy}.html" in pages
    api = (site / "reference/python.html").read_text()
    for name in ("xco.sim.run", "xco.sweep.load", "xco.scenario.validate", "Result"):
        assert name in api, f"the Python API page lacks {name}"


def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path)
    shutil.copytree(
        REPO / "python", tmp_path / "python", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    with open(tmp_path / "docs/index.md", "a") as f:
        f.write(
            "\nSee [a page that does not exist](no-such-page.md)"
            " and [a heading](tutorial.md#no-such-heading).\n"
        )
    r = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"), cwd=tmp_path, check=False)
    assert r.returncode != 0, "a link to a missing page must fail the build"
    assert "no-such-page.md" in r.stdout + r.stderr
    assert "no-such-heading" in r.stdout + r.stderr, "a link to a missing anchor must be reported"


# ---- the runnable blocks ----


def runnable_blocks(text: str) -> list[str]:
    """The command blocks marked <!-- run --> in a page, in order (a marker without a block is an error)."""
    blocks = BLOCK.findall(text)
    markers = text.count(MARKER)
    if markers != len(blocks):
        raise ValueError(f"{markers} run markers but {len(blocks)} ```bash blocks right after them")
    return blocks


def run_blocks(blocks: list[str], cwd: Path) -> None:
    """Run each block in ``cwd`` in order; fail with the block's text and output at the first that fails."""
    env = dict(os.environ, XCO_CHECKOUT=str(REPO), MPLBACKEND="Agg", NO_MKDOCS_2_WARNING="1")
    path = [str(Path(sys.executable).parent), env.get("PATH", "")]
    daemon_dir = REPO / "target" / "release"
    if shutil.which("xco-daemon") is None and (daemon_dir / "xco-daemon").exists():
        path.append(str(daemon_dir))
    env["PATH"] = os.pathsep.join(path)
    for i, block in enumerate(blocks, 1):
        try:
            r = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", block],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=BLOCK_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"block {i} ran longer than {BLOCK_TIMEOUT_S} s:\n{block}")
        if r.returncode != 0:
            pytest.fail(
                f"block {i} failed (exit {r.returncode}):\n{block}"
                f"\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
            )


PAGES_WITH_BLOCKS = sorted(
    p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if MARKER in p.read_text()
)


def test_the_tutorial_and_operator_guide_have_runnable_blocks():
    assert "tutorial.md" in PAGES_WITH_BLOCKS
    assert "operator.md" in PAGES_WITH_BLOCKS
    assert len(runnable_blocks((DOCS / "tutorial.md").read_text())) >= 6


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS)
def test_marked_commands_run(page, tmp_path):
    run_blocks(runnable_blocks((DOCS / page).read_text()), tmp_path)


def test_a_failing_block_fails_with_its_text(tmp_path):
    page = "intro\n\n<!-- run -->\n```bash\necho fine\n```\n\n<!-- run -->\n```bash\nfalse  # this one\n```\n"
    blocks = runnable_blocks(page)
    assert blocks == ["echo fine\n", "false  # this one\n"]
    with pytest.raises(pytest.fail.Exception, match=r"(?s)block 2 failed.*this one"):
        run_blocks(blocks, tmp_path)
    with pytest.raises(ValueError, match="2 run markers but 1"):
        runnable_blocks(page.replace("```bash\nfalse", "```text\nfalse"))


# ---- in a real browser ----


def test_every_page_works_in_headless_chromium(site):
    try:
        browser.find_chromium()
    except browser.BrowserMissing as e:
        pytest.fail(str(e))
    pages = [p for p in browser.html_pages(site) if p != "404.html"]
    with browser.serve(site) as base_url, browser.chromium() as driver:
        problems = browser.check_pages(driver, base_url, site, pages)
    assert not problems, "\n".join(problems)


def test_a_missing_browser_is_an_error_naming_the_set_up(monkeypatch):
    monkeypatch.delenv("XCO_CHROMIUM", raising=False)
    monkeypatch.delenv("XCO_CHROMEDRIVER", raising=False)
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    with pytest.raises(browser.BrowserMissing, match="scripts/setup.sh"):
        browser.find_chromium()


def test_the_browser_check_finds_what_is_broken(tmp_path):
    """The checker itself: a missing image, a dead link, a missing anchor and a script error are reported."""
    try:
        browser.find_chromium()
    except browser.BrowserMissing as e:
        pytest.fail(str(e))
    head = '<head><link rel="icon" href="data:,"></head>'  # no favicon request
    (tmp_path / "ok.html").write_text(f'<html>{head}<body><h1 id="top">ok</h1></body></html>')
    (tmp_path / "bad.html").write_text(
        "<html><body>"
        '<img src="missing.png">'
        '<a href="gone.html">gone</a> <a href="ok.html#nowhere">anchor</a> <a href="ok.html#top">fine</a>'
        "<script>undefinedFunction()</script>"
        "</body></html>"
    )
    with browser.serve(tmp_path) as base_url, browser.chromium() as driver:
        assert browser.check_pages(driver, base_url, tmp_path, ["ok.html"]) == []
        problems = "\n".join(browser.check_pages(driver, base_url, tmp_path, ["bad.html"]))
    assert "missing.png did not render" in problems
    assert "dead link" in problems and "gone.html" in problems
    assert "no element with id 'nowhere'" in problems
    assert "console error" in problems and "undefinedFunction" in problems
    assert "#top" not in problems
