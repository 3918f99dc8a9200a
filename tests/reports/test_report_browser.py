"""report.html in a real browser: headless Chromium, driven by Playwright, with no network.

On the smoke run's report (every claim but the slow ones, every formula, every figure), at a 1400 x 1000
viewport:

* the page loads from a file URL with every request to the network refused, and no script error;
* the first screen, as loaded, shows the bottom line and the whole table of the independent reviewer's
  claims C1-C6 (the first table under "What stands and what falls");
* the detail sections are collapsed on load, each under its title; a link from the main body into a
  detail opens its section and scrolls the target into view; every in-page link has its target;
* no TeX shows as text: no text node outside ``<math>`` holds a TeX command, collapsed sections included
  (their text is read with ``textContent``, which, unlike ``innerText``, does not skip closed
  ``<details>``; a planted command in a closed section shows that the scan sees there);
* with every section opened, every image has decoded and has a size on screen, no formula failed to
  convert (no ``.math-error``) and every formula's MathML has a size.  The sections are opened first
  because nothing inside a closed ``<details>`` is laid out: a formula or figure there has no box to
  measure, so a check made with them closed would say nothing about them.  Whether the images decoded
  is asked twice, before and after opening: before, because a reader who opens a section should find its
  figures already there (they are ``data:`` URIs, read with the page).

A results file's text is shown, never run: on a page rendered by ``report --from`` from a file with a
``document.title=...`` script inside a formula's ``\\text{}``, ``<img onerror>`` in its evidence and slips, and
a javascript: link, the title is unchanged, the globals the plants would set are not, the page holds its one
script and no element carries an event handler.

The load time is printed, not asserted (timed assertions fail on slow machines for no fault of the page).
Skips, saying why, only where no Chromium is installed (Debian's ``chromium`` package; .ci/run installs it).
"""

import contextlib
import io
import json
import shutil
import time

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.heavy]

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1000}

# Raw TeX in visible text: a backslash and a command name (\frac, \sum, \mathbb, \le ...), or one of TeX's
# spacing commands (\, \! \; \:).  Shared by the page scan and its control.
RAW_TEX = r"\\(?:[A-Za-z]+|[,!;:])"

FIRST_SCREEN = """() => {
    const h2 = text => Array.from(document.querySelectorAll('h2')).find(h => h.textContent.trim() === text);
    const bottom = h2('Bottom line'), stands = h2('What stands and what falls');
    let table = stands;
    while (table && table.tagName !== 'TABLE') { table = table.nextElementSibling; }
    const box = el => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
    return {
        scroll: window.scrollY,
        viewport: window.innerHeight,
        bottom_line: bottom ? box(bottom) : null,
        bottom_line_list: bottom && bottom.nextElementSibling ? box(bottom.nextElementSibling) : null,
        table: table ? box(table) : null,
        table_clipped: table ? table.scrollWidth > table.clientWidth : null,
        table_claims: table ? Array.from(table.querySelectorAll('tbody tr'))
            .map(tr => tr.cells[0].textContent.trim()) : [],
    };
}"""

SECTIONS = """() => Array.from(document.querySelectorAll('details')).map(d => ({
    open: d.open,
    cls: d.className,
    title: d.querySelector(':scope > summary') ? d.querySelector(':scope > summary').textContent.trim() : null,
    chars: d.textContent.length,
}))"""

# Text nodes outside <math>, <script> and <style>, read with textContent (collapsed sections included).
TEX_SCAN = """(pattern) => {
    const tex = new RegExp(pattern, 'g');
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const hits = [];
    let chars = 0, inDetails = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement.closest('math, script, style')) { continue; }
        const text = node.textContent;
        chars += text.length;
        if (node.parentElement.closest('details')) { inDetails += text.length; }
        for (const m of text.matchAll(tex)) {
            hits.push(text.slice(Math.max(0, m.index - 40), m.index + 60));
        }
    }
    return {hits, chars, in_details: inDetails};
}"""

LINKS = """() => {
    const local = Array.from(document.querySelectorAll('a[href^="#"]'));
    return {
        links: local.length,
        dangling: local.map(a => a.getAttribute('href').slice(1))
            .filter(id => !document.getElementById(decodeURIComponent(id))),
    };
}"""

AFTER_LINK = """(id) => {
    const target = document.getElementById(id);
    if (!target) { return {hash: location.hash, target: false}; }
    const section = target.closest('details');
    const r = target.getBoundingClientRect();
    return {hash: location.hash, target: true, section_open: section ? section.open : null, top: r.top,
            viewport: window.innerHeight, others_open: Array.from(document.querySelectorAll('details'))
                .filter(d => d.open && d !== section).length};
}"""

SCRIPT_OPENS = """() => {
    const a = Array.from(document.querySelectorAll('a[href^="#slip-"]')).find(a => !a.closest('details'));
    if (!a) { return null; }
    const id = a.getAttribute('href').slice(1), target = document.getElementById(id);
    document.querySelectorAll('details').forEach(d => { d.open = false; });
    window.scrollTo(0, 0);
    history.replaceState(null, '', '#' + id);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    return {id, open: target.closest('details').open, top: target.getBoundingClientRect().top};
}"""

# Every table and display formula with every section open: none needs a horizontal scroll at the viewport's
# width, and no formula shows scroll arrows (a box whose content overflows it either way).
LAYOUT = """() => {
    document.querySelectorAll('details').forEach(d => { d.open = true; });
    const head = t => (t.querySelector('th') || t).textContent.trim().slice(0, 50);
    return {
        tables: document.querySelectorAll('table').length,
        wide_tables: Array.from(document.querySelectorAll('table'))
            .filter(t => t.scrollWidth > t.clientWidth + 1).map(t => head(t) + ' (' + t.scrollWidth + ' px)'),
        // a box scrolls (and shows arrows) along an axis whose overflow is auto or scroll and whose content
        // overflows it
        scrolling_math: Array.from(document.querySelectorAll('math[display="block"]')).filter(m => {
            const style = getComputedStyle(m), scrolls = v => v === 'auto' || v === 'scroll';
            return (scrolls(style.overflowX) && m.scrollWidth > m.clientWidth + 1)
                || (scrolls(style.overflowY) && m.scrollHeight > m.clientHeight + 1);
        }).map(m => m.textContent.slice(0, 50)),
    };
}"""

# Each link of the bottom line followed from a page with every section closed: its target is shown.
BOTTOM_LINKS = """() => Array.from(document.querySelectorAll('h2')).filter(h => h.textContent.trim() === 'Bottom line')
    .flatMap(h => Array.from(h.nextElementSibling.querySelectorAll('a[href^="#"]'))).map(a => a.getAttribute('href'))"""

FOLLOWED = """(href) => {
    const target = document.getElementById(decodeURIComponent(href.slice(1)));
    if (!target) { return {href, target: false}; }
    const r = target.getBoundingClientRect();
    const hidden = Array.from(document.querySelectorAll('details')).some(d => !d.open && d.contains(target)
        && !d.querySelector(':scope > summary').contains(target));
    // an anchor is an empty element: shown when no closed section hides it and it is scrolled into the screen
    return {href, target: true, shown: !hidden && r.top >= -2 && r.top < window.innerHeight};
}"""

OPENED = """async () => {
    document.querySelectorAll('details').forEach(d => { d.open = true; });
    const images = Array.from(document.images);
    const failed = await Promise.all(images.map(i => i.decode().then(() => null, () => i.alt)));
    const maths = Array.from(document.querySelectorAll('math'));
    return {
        images: images.length,
        not_embedded: images.filter(i => !i.getAttribute('src').startsWith('data:image/')).map(i => i.alt),
        not_decoded: failed.filter(a => a !== null),
        unsized_images: images.filter(i => i.getBoundingClientRect().width === 0).map(i => i.alt),
        math: maths.length,
        flat_math: maths.filter(m => { const r = m.getBoundingClientRect(); return r.width === 0 || r.height === 0; })
            .map(m => m.textContent.slice(0, 60)),
        math_errors: Array.from(document.querySelectorAll('.math-error')).map(e => e.textContent),
    };
}"""


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
    facts = {}
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            network, errors = [], []

            def refuse(route):
                network.append(route.request.url)
                route.abort()

            page.route("http*://**", refuse)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            started = time.monotonic()
            page.goto(html_path.as_uri(), wait_until="load")
            print(f"report.html ({html_path.stat().st_size / 1e6:.1f} MB) loaded in {time.monotonic() - started:.2f} s")
            # as loaded: what the reader sees first, before anything is clicked
            facts["load_images"] = page.evaluate("""() => Array.from(document.images)
                .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt)""")
            facts["first_screen"] = page.evaluate(FIRST_SCREEN)
            page.screenshot(path=str(shot))
            facts["sections"] = page.evaluate(SECTIONS)
            facts["tex"] = page.evaluate(TEX_SCAN, RAW_TEX)
            facts["links"] = page.evaluate(LINKS)
            # the scan's control: commands planted in a closed section are found
            facts["tex_control"] = page.evaluate("""(pattern) => {
                const section = document.querySelector('details');
                if (!section) { return null; }
                const planted = document.createElement('p');
                planted.id = 'planted-tex';
                planted.textContent = 'planted \\\\frac{a}{b} and \\\\, a thin space';
                section.appendChild(planted);
                window.wasOpen = section.open;
                section.open = false;
                return new RegExp(pattern).test(section.textContent);
            }""", RAW_TEX)
            facts["tex_with_control"] = page.evaluate(TEX_SCAN, RAW_TEX)
            page.evaluate("""() => { const p = document.getElementById('planted-tex');
                if (p) { p.parentElement.open = window.wasOpen; p.remove(); } }""")
            # a link from the main body into a detail
            link = page.evaluate("""() => { const a = Array.from(document.querySelectorAll('a[href^="#claim-"]'))
                .find(a => !a.closest('details')); return a ? a.getAttribute('href') : null; }""")
            facts["link"] = link
            if link:
                page.locator(f'a[href="{link}"]:not(details a)').first.click()
                try:  # wait for the section to open (the assertions say what happened if it does not)
                    page.wait_for_function("(id) => { const t = document.getElementById(id);"
                                           " const d = t && t.closest('details'); return d && d.open; }",
                                           arg=link[1:], timeout=10_000)
                except sync_api.TimeoutError:
                    pass
                facts["after_link"] = page.evaluate(AFTER_LINK, link[1:])
            # the page's own script, apart from the browser's handling of a fragment (Chromium opens a closed
            # <details> holding the target by itself; other browsers may not): a hash set without navigating,
            # then the hashchange event the script listens for
            facts["script_opens"] = page.evaluate(SCRIPT_OPENS)
            # each bottom-line link followed from a page with every section closed
            followed = []
            for href in page.evaluate(BOTTOM_LINKS):
                page.evaluate("() => { document.querySelectorAll('details').forEach(d => { d.open = false; });"
                              " window.scrollTo(0, 0); }")
                page.locator(f'h2:has-text("Bottom line") + ul a[href="{href}"]').first.click()
                page.wait_for_timeout(50)
                followed.append(page.evaluate(FOLLOWED, href))
            facts["bottom_links"] = followed
            # every section open: every figure and formula laid out
            facts["opened"] = page.evaluate(OPENED)
            facts["layout"] = page.evaluate(LAYOUT)
            facts["errors"] = errors
        finally:
            browser.close()
    return facts, network, shot


def test_page_loads_offline_with_every_image_decoded(page_report):
    facts, network, _ = page_report
    assert network == []  # self-contained: nothing was fetched
    assert facts["errors"] == []  # the page's script ran without error
    opened = facts["opened"]
    assert opened["images"] > 20
    assert opened["not_embedded"] == []  # every figure is in the page, not read from beside it
    assert facts["load_images"] == []  # decoded with the page, collapsed sections included
    assert opened["not_decoded"] == []
    assert opened["unsized_images"] == []


def test_every_formula_renders_as_mathml(page_report):
    opened = page_report[0]["opened"]
    assert opened["math"] > 50
    assert opened["math_errors"] == []
    assert opened["flat_math"] == []  # the browser laid every formula out (MathML understood)


def test_no_tex_shows_as_text(page_report):
    facts = page_report[0]
    tex = facts["tex"]
    assert tex["hits"] == [], f"{len(tex['hits'])} places show TeX as text, e.g. {tex['hits'][:5]}"
    # the scan read the detail sections' text, not just the main body
    assert tex["in_details"] > 0.5 * tex["chars"]
    assert facts["tex_control"] is True, "no section to plant the control in"
    # both planted commands found, in a closed section
    assert len(facts["tex_with_control"]["hits"]) == len(tex["hits"]) + 2


def test_first_screen_shows_the_bottom_line_and_the_reviewers_claims(page_report):
    facts, _, shot = page_report
    screen = facts["first_screen"]
    height = screen["viewport"]
    assert height == VIEWPORT["height"] and screen["scroll"] == 0
    assert screen["bottom_line"] is not None and 0 <= screen["bottom_line"]["top"] < height
    assert screen["bottom_line_list"]["bottom"] <= height
    assert screen["table"] is not None, "no table after the heading 'What stands and what falls'"
    assert screen["table_claims"] == ["C1", "C2", "C3", "C4", "C5", "C6"]
    assert 0 < screen["table"]["top"] and screen["table"]["bottom"] <= height, (
        f"the C1-C6 table ends at {screen['table']['bottom']:.0f} px, below the first screen ({height} px)")
    assert screen["table_clipped"] is False  # no column hidden behind a horizontal scroll
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (VIEWPORT["width"], VIEWPORT["height"])
        # the screenshot shows text, not a blank page: many distinct grey levels in its top half
        top = image.convert("L").crop((0, 0, image.width, image.height // 2))
        assert sum(1 for count in top.histogram() if count) > 20


def test_details_are_collapsed_and_a_link_opens_its_section(page_report):
    facts = page_report[0]
    sections = facts["sections"]
    assert len(sections) >= 4
    assert all(s["cls"] == "section" and not s["open"] and s["title"] for s in sections), sections
    assert "Slip audit" in [s["title"] for s in sections]
    assert facts["links"]["links"] > 20 and facts["links"]["dangling"] == []
    assert facts["link"] and facts["link"].startswith("#claim-")
    after = facts["after_link"]
    assert after["hash"] == facts["link"] and after["target"] is True
    assert after["section_open"] is True
    assert -2 <= after["top"] < after["viewport"]  # scrolled into view (at the top, to within rounding)
    assert after["others_open"] == 0  # only the target's section opened
    script = facts["script_opens"]
    assert script is not None and script["open"] is True, script
    assert -2 <= script["top"] < facts["first_screen"]["viewport"]


# Each plant, if it ran, would change the title or set window.planted.  No spaces inside \text{}: the converter
# writes them as no-break space references, which would leave a script that cannot parse (and a tag that is no
# img) even where the markup got through; "/" separates the img's attributes instead.
PLANTED_FORMULA = (r'\frac{1}{t} \text{<script>document.title="PWNED";window.planted="formula"</script>'
                   r'<img/src=x/onerror=window.planted="mathimg">}')
PLANTED_TEXT = ('<script>window.planted="text"</script><img src=x onerror="window.planted=\'img\'"> '
                r'$\text{<img src=x onerror="window.planted=\'math\'">}$ [a link](javascript:window.planted=1)')

PLANTED_FACTS = """() => ({
    title: document.title,
    planted: typeof window.planted === 'undefined' ? null : String(window.planted),
    scripts: document.scripts.length,
    handlers: Array.from(document.querySelectorAll('*')).flatMap(el => Array.from(el.attributes)
        .filter(a => a.name.toLowerCase().startsWith('on')).map(a => el.tagName + ' ' + a.name)),
    script_links: Array.from(document.querySelectorAll('[href]')).map(el => el.getAttribute('href'))
        .filter(h => /^\\s*javascript:/i.test(h)),
    shown: document.body.textContent.includes('document.title="PWNED"')
        && document.body.textContent.includes('onerror="window.planted=\\'img\\'"'),
})"""


def _planted_results(path) -> None:
    from moecl_verify.checks.model import Interpretation, RunResult, Slip, exact_result
    from moecl_verify.reports import results_json

    claims = ({"id": "lemma2", "source": "Appendix B", "kind": "bound", "summary": PLANTED_TEXT,
               "notes": PLANTED_TEXT, "statement": PLANTED_FORMULA, "preconditions": [PLANTED_TEXT]},)
    results = (exact_result("lemma2", "Appendix B, Lemma 2", "symbolic identity", "the constant " + PLANTED_TEXT,
                            "refuted", "sympy: " + PLANTED_TEXT, PLANTED_FORMULA),)
    slips = (Slip("lemma2.statement", "Appendix B, Lemma 2", "wrong constant or exponent", PLANTED_FORMULA,
                  PLANTED_TEXT, PLANTED_TEXT, summary=PLANTED_TEXT),)
    interpretations = (Interpretation("lemma2.reading", "Lemma 2", PLANTED_TEXT, PLANTED_TEXT),)
    meta = {"claims": ["lemma2"], "budget": "smoke", "replicates": 10, "seed": 0, "family_false_fail_rate": 0.001,
            "power": 0.9, "versions": {"python": "3"}, "simulation": PLANTED_TEXT}
    run = RunResult(results, slips, interpretations, meta, claims)
    path.write_text(json.dumps(results_json.as_document(run)), encoding="utf-8")


def test_markup_planted_in_a_results_file_does_not_run(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is part of the test extra")
    executable = _browser_path()
    from moecl_verify.cli import main

    source = tmp_path / "results.json"
    _planted_results(source)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["report", "--from", str(source), "--out", str(tmp_path / "out"), "--format", "html", "--quiet"])
    assert code == 0, err.getvalue()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.route("http*://**", lambda route: route.abort())
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto((tmp_path / "out" / "report.html").as_uri(), wait_until="load")
            page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
            page.wait_for_timeout(300)  # an image's onerror fires after its failed load
            facts = page.evaluate(PLANTED_FACTS)
            facts["errors"] = errors
        finally:
            browser.close()
    assert facts["errors"] == []  # no planted script ran and failed either
    assert facts["title"] == "moecl-verify report"
    assert facts["planted"] is None
    assert facts["scripts"] == 1  # the page's own
    assert facts["handlers"] == [] and facts["script_links"] == []
    assert facts["shown"] is True  # the plants are on the page, as text


def test_every_bottom_line_link_shows_its_target(page_report):
    followed = page_report[0]["bottom_links"]
    assert len(followed) >= 5, followed  # slips, figures, claims
    assert any(f["href"].startswith("#figure-") for f in followed)  # a figure opens inside the page
    assert [f for f in followed if not (f["target"] and f["shown"])] == []


def test_no_table_or_formula_needs_a_scroll_at_1400_px(page_report):
    layout = page_report[0]["layout"]
    assert layout["tables"] > 20
    assert layout["wide_tables"] == [], f"{len(layout['wide_tables'])} tables scroll: {layout['wide_tables'][:5]}"
    assert layout["scrolling_math"] == [], layout["scrolling_math"][:5]
