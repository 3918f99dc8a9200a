"""How fast report.html opens in Chromium, against a page of its main body alone.

The page embeds every figure and every formula of the run (about 9 MB at the standard budget); its detail
sections are collapsed.  This opens a report's ``report.html`` in headless Chromium (Debian's ``chromium``,
driven by Playwright, every request to the network refused) several times, and the same page with its
collapsed sections removed, and prints the median times to the ``load`` event and to the first paint of the
bottom line, and their ratio: the cost of carrying the details in one page.  No assertion: a time depends on
the machine, so it is printed, never tested.

    python bench/bench_report_page.py report/report.html
    python bench/bench_report_page.py report/report.html --repeats 7

Needs playwright (the test extra) and a Chromium on the PATH.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]


def _main_only(page: str) -> str:
    """The page without its collapsed detail sections."""
    return re.sub(r'<details class="section">.*?</details>\n', "", page, flags=re.S)


def _time(browser, path: Path, repeats: int) -> tuple[float, float]:
    """(median seconds to the load event, median seconds until the bottom line is laid out)."""
    loads, firsts = [], []
    for _ in range(repeats):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.route("http*://**", lambda route: route.abort())
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="commit")
        page.wait_for_selector("#bottom-line", state="attached")
        firsts.append(time.perf_counter() - start)
        page.wait_for_load_state("load")
        loads.append(time.perf_counter() - start)
        page.close()
    return statistics.median(loads), statistics.median(firsts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path, help="a report.html")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                    None)
    if chromium is None:
        print("no Chromium on the PATH", file=sys.stderr)
        return 2
    text = args.page.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        main_page = Path(tmp) / "main-only.html"
        main_page.write_text(_main_only(text), encoding="utf-8")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
            try:
                full_load, full_first = _time(browser, args.page.resolve(), args.repeats)
                main_load, main_first = _time(browser, main_page, args.repeats)
            finally:
                browser.close()
    size = len(text.encode("utf-8")) / 1e6
    print(f"report.html ({size:.1f} MB): load {full_load:.2f} s, bottom line laid out after {full_first:.2f} s")
    print(f"main body alone: load {main_load:.2f} s, bottom line after {main_first:.2f} s")
    print(f"ratio, whole page / main body: load {full_load / main_load:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
