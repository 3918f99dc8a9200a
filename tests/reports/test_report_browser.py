"""report.html in a real browser: headless Chromium, driven by Playwright, with no network.

On the smoke run's report (every claim, every formula, every figure): the page
loads from a file URL with every request to the network refused, every image
has decoded, no formula failed to convert (no ``.math-error``) and the MathML
has a size on screen, and the headline section is visible in a screenshot of
the first viewport.  Skips, saying why, only where no Chromium is installed
(Debian's ``chromium`` package; .ci/run installs it).
"""

import shutil

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.heavy]

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}


def _browser_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium browser on this machine: install Debian's 'chromium' package "
                "(apt-get install chromium) to check report.html in a browser")


@pytest.fixture(scope="module")
def page_report(smoke_run, tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is part of the test extra")
    executable = _browser_path()
    html_path = smoke_run.out / "report.html"
    assert html_path.is_file()
    shot = tmp_path_factory.mktemp("browser") / "first-viewport.png"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            network = []

            def refuse(route):
                network.append(route.request.url)
                route.abort()

            page.route("http*://**", refuse)
            page.goto(html_path.as_uri(), wait_until="load")
            facts = page.evaluate("""() => {
                const images = Array.from(document.images);
                const maths = Array.from(document.querySelectorAll('math'));
                const heading = Array.from(document.querySelectorAll('h2'))
                    .find(h => h.textContent.trim() === 'What stands and what falls');
                const box = heading ? heading.getBoundingClientRect() : null;
                return {
                    images: images.length,
                    undecoded: images.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt),
                    math: maths.length,
                    flat_math: maths.filter(m => m.getBoundingClientRect().width === 0).length,
                    math_errors: Array.from(document.querySelectorAll('.math-error')).map(e => e.textContent),
                    headline_top: box ? box.top : null,
                    headline_rows: heading ? heading.nextElementSibling.nextElementSibling.querySelectorAll('tr').length : 0,
                    viewport: window.innerHeight,
                };
            }""")
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    return facts, network, shot


def test_page_loads_offline_with_every_image_decoded(page_report):
    facts, network, _ = page_report
    assert network == []  # self-contained: nothing was fetched
    assert facts["images"] > 0
    assert facts["undecoded"] == []


def test_every_formula_renders_as_mathml(page_report):
    facts, _, _ = page_report
    assert facts["math"] > 50
    assert facts["math_errors"] == []
    assert facts["flat_math"] == 0  # the browser laid every formula out (MathML understood)


def test_headline_is_in_the_first_viewport(page_report):
    facts, _, shot = page_report
    assert facts["headline_top"] is not None and 0 <= facts["headline_top"] < facts["viewport"] - 100
    assert facts["headline_rows"] >= 12  # header + ten results + the lemma chain
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (VIEWPORT["width"], VIEWPORT["height"])
        # the screenshot shows text, not a blank page: many distinct grey levels in its top half
        top = image.convert("L").crop((0, 0, image.width, image.height // 2))
        assert sum(1 for count in top.histogram() if count) > 20
