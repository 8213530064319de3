"""Open a built HTML tree in a real headless browser and report what is broken.

Reusable by any test that builds HTML (the docs site, a report.html):

    with serve(site_dir) as base_url, chromium() as driver:
        problems = check_pages(driver, base_url, site_dir, pages)
    assert not problems, "\\n".join(problems)

The browser is Debian's `chromium` with its `chromedriver` (apt packages
`chromium` and `chromium-driver`, installed by scripts/setup.sh as root),
driven by Selenium with the driver's path given, so Selenium never tries to
download a browser or a driver. A missing browser is an error saying to run
scripts/setup.sh, never a skip: CI installs it through the set-up.

What `check_pages` asserts for every page: the server answers 200; the page
finishes loading; every <img> decoded (naturalWidth > 0, so a figure that is
missing or not an image fails); the browser logged no SEVERE console entry
(a JavaScript error, a failed request); and every same-origin <a href>
answers 200 and, when it has a #fragment, the target page has that id.
Links to other origins are not followed (this machine has no network).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

SETUP_HINT = "run `bash scripts/setup.sh` as root (it installs Debian's chromium and chromium-driver)"


class BrowserMissing(RuntimeError):
    """No headless browser on this machine: the set-up was not run."""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` over HTTP on 127.0.0.1 (a free port) in a thread; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="browser-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def find_chromium() -> tuple[str, str]:
    """(browser, driver) paths of Debian's chromium and chromedriver, or BrowserMissing."""
    browser = os.environ.get("XCO_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("XCO_CHROMEDRIVER") or shutil.which("chromedriver")
    missing = [name for name, path in (("chromium", browser), ("chromedriver", driver)) if not path]
    if missing:
        raise BrowserMissing(f"no {' and no '.join(missing)} on PATH: {SETUP_HINT}")
    try:
        import selenium  # noqa: F401
    except ImportError:
        raise BrowserMissing(
            "the Python package selenium is missing: run `bash scripts/setup.sh` "
            '(or pip install -e ".[docs]")'
        ) from None
    return browser, driver


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[object]:
    """A headless Chromium WebDriver that records the browser console; quit on exit."""
    browser, driver_path = find_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in CI
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    os.environ.setdefault("SE_AVOID_STATS", "true")
    service = Service(executable_path=driver_path)
    driver = webdriver.Chrome(service=service, options=opts)
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()  # ends chromium and chromedriver (the service's process)


def html_pages(root: Path) -> list[str]:
    """Every .html file under ``root`` as a path relative to it, sorted."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _ids(html: str) -> set[str]:
    return set(re.findall(r"""\bid\s*=\s*["']([^"']+)["']""", html))


def check_pages(driver, base_url: str, root: Path, pages: list[str]) -> list[str]:
    """Open each page of ``pages`` (paths under ``root``, served at ``base_url``); return the problems."""
    problems: list[str] = []
    origin = urllib.parse.urlsplit(base_url)
    checked_links: dict[str, int] = {}
    ids_of: dict[str, set[str]] = {}

    def ids(url: str) -> set[str]:
        if url not in ids_of:
            path = urllib.parse.unquote(urllib.parse.urlsplit(url).path).lstrip("/")
            target = root / path
            if target.is_dir():
                target = target / "index.html"
            ids_of[url] = _ids(target.read_text(errors="replace")) if target.is_file() else set()
        return ids_of[url]

    driver.get_log("browser")  # start with an empty console
    for page in pages:
        url = urllib.parse.urljoin(base_url, page)
        status = _status(url)
        if status != 200:
            problems.append(f"{page}: HTTP {status}")
            continue
        driver.get(url)
        state = driver.execute_script("return document.readyState")
        if state != "complete":
            problems.append(f"{page}: did not finish loading (readyState {state})")
        for src, width in driver.execute_script(
            "return Array.from(document.images).map(i => [i.currentSrc || i.src, i.naturalWidth])"
        ):
            if not width:
                problems.append(f"{page}: image {src} did not render (naturalWidth 0)")
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                problems.append(f"{page}: console error: {entry.get('message')}")
        hrefs = driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
        )
        for href in sorted(set(hrefs)):
            parts = urllib.parse.urlsplit(href)
            if parts.scheme not in ("http", "https") or parts.netloc != origin.netloc:
                continue  # another origin, mailto:, javascript:: not followed
            target = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
            if target not in checked_links:
                checked_links[target] = _status(target)
            if checked_links[target] != 200:
                problems.append(f"{page}: dead link {href} (HTTP {checked_links[target]})")
            elif parts.fragment and target.endswith((".html", "/")):
                frag = urllib.parse.unquote(parts.fragment)
                if frag not in ids(target):
                    problems.append(f"{page}: link {href}: no element with id {frag!r}")
    return problems
