"""The reports in a real browser (headless Chromium driven by Selenium).

The first screen, at desktop (1400 x 900) and phone (390 x 844) widths, of the demo, the judge
report of ``data/llmfao/gpt4-comparisons.csv``, ``compare data/agent_runs/baseline
data/agent_runs/candidate`` and a traces report: the headline leads with its findings (the judge's
position bias with its p-value, self-preference and the leader with its rank interval in the first
900 px; compare's difference, interval, p-value and verdict without horizontal scrolling), no
key-table column is cut off at 1400 px (at 390 px wide tables scroll inside their box), sorting
works, nothing is requested from outside the page and the console has no error.

For ``report.html`` of ``evalkit demo`` and of ``evalkit report`` and ``evalkit compare`` on the
hostile-names fixture:
every ``<img>`` loaded, no script ran from the data (the fixture plants
``onerror="window.__evalkit_pwned=1"`` and a ``javascript:`` link), the page does not
overflow horizontally at 1280 px (wide tables scroll inside their box), text columns are
left-aligned and numbers right-aligned, and the console has no error. Screenshots go to
``out/ci-artifacts/``.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them). Without them
the test skips with the reason, except under ``CI=true``, where it fails. Screenshots go to
``$EVALKIT_ARTIFACTS`` when set (``.ci/run`` keeps them), else ``out/ci-artifacts/``.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "data" / "hostile"
ARTIFACTS = Path(os.environ.get("EVALKIT_ARTIFACTS") or ROOT / "out" / "ci-artifacts")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,900")


def _browser_or_skip():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        chromium = None
    if chromium and driver:
        return chromium, driver
    reason = ("headless Chromium is not installed (need the chromium and chromium-driver packages and selenium; "
              "`apt-get install -y chromium chromium-driver` as root)")
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run the browser test: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    chromium, chromedriver = _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=opts, service=Service(chromedriver))
    d.set_page_load_timeout(60)
    yield d
    d.quit()


def _run(args, tmp):
    _wait(_start(args, tmp))


def _start(args, tmp):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.Popen([sys.executable, "-m", "evalkit", *args, "--quiet"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, cwd=tmp)


def _wait(proc):
    _, err = proc.communicate()
    assert proc.returncode == 0, err


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    # the demo with fewer tasks, sessions and replicates: the same pipeline and report, in a third of the time
    _run(["demo", "--out", str(tmp / "demo"), "--tasks", "6", "--sessions", "3", "--bootstrap", "30"], tmp)
    _run(["report", str(HOSTILE / "comparisons.csv"), "--scores", str(HOSTILE / "scores.csv"), "--out",
          str(tmp / "hostile"), "--n-boot", "20"], tmp)
    _run(["compare", str(HOSTILE / "events.jsonl"), "--by", "system", "--map", "system=agent", "--map", "session=run",
          "--map", "score=reward", "--n-resamples", "199", "--out", str(tmp / "hostile-compare")], tmp)
    return {"demo": tmp / "demo" / "report.html", "demo-real": tmp / "demo" / "real" / "report.html",
            "hostile": tmp / "hostile" / "report.html", "hostile-compare": tmp / "hostile-compare" / "report.html"}


_PROBE = """
const imgs = Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth]);
const align = c => Array.from(document.querySelectorAll('td.' + c)).map(td => getComputedStyle(td).textAlign);
return {
  images: imgs,
  pwned: window.__evalkit_pwned === undefined ? null : String(window.__evalkit_pwned),
  // no handler attribute, and no script but the renderer's own (sorting/filtering, allowed by its CSP hash)
  handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length
      + Array.from(document.scripts).filter(s => s.textContent !== arguments[0]).length,
  javascript_links: Array.from(document.links).filter(a => a.protocol === 'javascript:').length,
  page_width: document.documentElement.scrollWidth,
  view_width: document.documentElement.clientWidth,
  wide_tables: Array.from(document.querySelectorAll('.table-wrap')).filter(w => w.scrollWidth > w.clientWidth)
      .map(w => getComputedStyle(w).overflowX),
  text_align: align('text'), num_align: align('num'),
  toc: document.querySelectorAll('nav a[href^="#"]').length,
  sections: document.querySelectorAll('section').length,
  height: document.documentElement.scrollHeight,
};
"""


@pytest.mark.parametrize("name", ["demo", "demo-real", "hostile", "hostile-compare"])
def test_report_in_chromium(driver, reports, name):
    page = reports[name]
    driver.set_window_size(1280, 900)
    driver.get(page.as_uri())
    from evalkit.report.render import _SCRIPT

    r = driver.execute_script(_PROBE, _SCRIPT)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.set_window_size(1280, min(int(r["height"]) + 150, 16000))
    driver.save_screenshot(str(ARTIFACTS / f"report-{name}.png"))
    driver.set_window_size(1280, 900)
    console = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert r["images"], "the report has figures"
    assert all(ok and width > 0 for _, ok, width in r["images"]), r["images"]
    assert r["pwned"] is None and r["handlers"] == 0 and r["javascript_links"] == 0
    assert r["page_width"] <= r["view_width"], (r["page_width"], r["view_width"])  # no horizontal page scroll
    assert all(o in ("auto", "scroll") for o in r["wide_tables"])  # wide tables scroll inside their box
    assert set(r["text_align"]) == {"left"} and set(r["num_align"]) == {"right"}
    assert r["toc"] == r["sections"] > 0  # a table of contents entry per section
    assert console == [], console


# ---- the first screen, at both widths ---------------------------------------------------------------

SCREENS = {1400: 900, 390: 844}  # desktop, and a phone's CSS viewport
DATA = ROOT / "data"


@pytest.fixture(scope="module")
def readers(tmp_path_factory, reports):
    """The judge, compare and traces reports, built side by side (the demo comes from ``reports``)."""
    tmp = tmp_path_factory.mktemp("readers")
    runs = DATA / "agent_runs"
    procs = [_start(["report", str(DATA / "llmfao" / "gpt4-comparisons.csv"), "--out", str(tmp / "judge")], tmp),
             _start(["compare", str(runs / "baseline"), str(runs / "candidate"), "--out", str(tmp / "compare")], tmp)]
    _wait(procs.pop(0))
    procs.append(_start(["report", "--traces", str(runs / "baseline"), str(runs / "candidate"), "--by", "input",
                         "--out", str(tmp / "traces")], tmp))
    for proc in procs:
        _wait(proc)
    return {"demo": reports["demo"], **{n: tmp / n / "report.html" for n in ("judge", "compare", "traces")}}


_SCREEN = """
const vh = window.innerHeight, vw = document.documentElement.clientWidth;
const head = document.getElementById('headline');
const box = e => { const b = e.getBoundingClientRect(); return [b.top, b.bottom, b.left, b.right]; };
return {
  vh: vh, vw: vw, page_width: document.documentElement.scrollWidth,
  headline: head ? box(head) : null,
  findings: head ? Array.from(head.querySelectorAll('li')).map(li => [li.textContent].concat(box(li))) : [],
  // per key table: does it overflow its box, how the box scrolls, and the headers beyond the box's right edge
  keys: Array.from(document.querySelectorAll('table.key')).map(t => {
    const w = t.parentNode, r = w.getBoundingClientRect();
    return [w.scrollWidth > w.clientWidth, getComputedStyle(w).overflowX,
            Array.from(t.tHead.rows[0].cells).filter(th => th.getBoundingClientRect().right > r.right + 1)
                 .map(th => th.textContent)];
  }),
  requests: performance.getEntriesByType('resource').map(e => e.name)
      .filter(u => !u.startsWith('file:') && !u.startsWith('data:')),
};
"""


def _screen(driver, page, width):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": SCREENS[width], "deviceScaleFactor": 1, "mobile": width < 500})
    driver.get(page.as_uri())
    return driver.execute_script(_SCREEN)


def _visible(r, *parts):
    """The headline finding that contains every one of ``parts``, wholly inside the first screen."""
    hits = [f for f in r["findings"] if all(p in f[0] for p in parts)]
    assert hits, (parts, [f[0] for f in r["findings"]])
    text, top, bottom, left, right = hits[0]
    assert 0 <= top and bottom <= r["vh"] and right <= r["vw"], (text, top, bottom, right, r["vh"], r["vw"])
    return text


@pytest.mark.parametrize("width", sorted(SCREENS, reverse=True))
@pytest.mark.parametrize("name", ["demo", "judge", "compare", "traces"])
def test_first_screen(driver, readers, name, width):
    r = _screen(driver, readers[name], width)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"first-screen-{name}-{width}.png"))
    console = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert r["headline"] is not None and r["headline"][0] < r["vh"] / 4, r["headline"]  # leads the page
    _visible(r, "")  # its first finding is whole in the first screen
    assert r["page_width"] <= r["vw"], (r["page_width"], r["vw"])  # no horizontal page scroll
    for overflows, scroll, cut in r["keys"]:
        if width >= 1400:
            assert not cut, cut  # every key column is in view on a desktop
        elif overflows:
            assert scroll in ("auto", "scroll")  # on a phone, a wide key table scrolls inside its box
    assert r["requests"] == [] and console == [], (r["requests"], console)


def test_judge_report_first_900px(driver, readers):
    """Bias with its p-value, self-preference and the leader with its rank interval, above the fold."""
    import pandas as pd
    from scipy.stats import binomtest

    votes = pd.read_csv(DATA / "llmfao" / "gpt4-comparisons.csv")["winner"].value_counts()
    right, left = int(votes["right"]), int(votes["left"])
    p = binomtest(right, right + left).pvalue  # 5.6078e-08: gpt-4 favours the answer on the right
    r = _screen(driver, readers["judge"], 1400)
    assert r["vh"] == 900
    _visible(r, "favours the right", f"{right / (right + left):.1%}", f"{right + left:,}", f"p = {p:.2e}")
    _visible(r, "gpt-4", "rates its own model", "GPT 4")
    board = pd.read_csv(readers["judge"].parent / "tables" / "leaderboard.csv")
    top = board.iloc[0]
    _visible(r, f"{top['model']} leads", f"rank interval is {top['rank_low']}–{top['rank_high']} of {len(board)}")


@pytest.mark.parametrize("width", sorted(SCREENS, reverse=True))
def test_compare_first_screen_has_the_difference(driver, readers, width):
    """The paired difference (candidate − baseline), its interval, p-value and verdict, unscrolled."""
    import pandas as pd

    per_task = pd.read_csv(readers["compare"].parent / "tables" / "per_task.csv")
    diff = (per_task["mockllm/model (candidate)"] - per_task["mockllm/model (baseline)"]).mean()  # 0.118
    pair = pd.read_csv(readers["compare"].parent / "tables" / "run_comparisons.csv").iloc[0]
    r = _screen(driver, readers["compare"], width)
    text = _visible(r, "(candidate) − ", f"{diff:+.3f}", f"95% CI {pair['ci_low']:+.3f} to {pair['ci_high']:+.3f}",
                    f"p = {pair['pvalue']:.3g}", "significant")
    assert ("not significant" in text) == (pair["pvalue"] >= 0.05)


def test_sorting_a_key_table(driver, readers):
    from selenium.webdriver.common.by import By

    _screen(driver, readers["judge"], 1400)
    table = driver.find_element(By.CSS_SELECTOR, "section#leaderboard table.key")
    heads = [th.text.strip() for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    button = table.find_elements(By.CSS_SELECTOR, "thead th button.sort")[heads.index("n")]
    col = heads.index("n") + 1

    def column():
        return [float(td.get_attribute("data-v")) for td in
                table.find_elements(By.CSS_SELECTOR, f"tbody tr td:nth-child({col})")]

    before = column()
    assert before != sorted(before)  # ranked by Elo, not by n
    button.click()
    assert column() == sorted(before)
    button.click()
    assert column() == sorted(before, reverse=True)
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
