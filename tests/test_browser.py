"""The reports in a real browser (headless Chromium driven by Selenium).

For ``report.html`` of ``evalkit demo`` and of ``evalkit report`` and ``evalkit compare`` on the
hostile-names fixture:
every ``<img>`` loaded, no script ran from the data (the fixture plants
``onerror="window.__evalkit_pwned=1"`` and a ``javascript:`` link), the page does not
overflow horizontally at 1280 px (wide tables scroll inside their box), text columns are
left-aligned and numbers right-aligned, and the console has no error. Screenshots go to
``out/ci-artifacts/``.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them). Without them
the test skips with the reason, except under ``CI=true``, where it fails.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "data" / "hostile"
ARTIFACTS = ROOT / "out" / "ci-artifacts"
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
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-m", "evalkit", *args, "--quiet"], env=env, capture_output=True,
                          text=True, cwd=tmp)
    assert proc.returncode == 0, proc.stderr


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
