"""Hostile model names round-trip through summary, rate and report: nothing runs, nothing
changes structure, every name stays readable (tests/data/hostile, see make_fixture.py)."""

import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit._escape import label, markdown_text
from evalkit._output import verify_dir
from evalkit.cli import main

HOSTILE = Path(__file__).parent / "data" / "hostile"
sys.path.insert(0, str(HOSTILE))
from make_fixture import NAMES  # noqa: E402

RTL = "\u202e"


def _md_rows(md: str) -> list[list[str]]:
    """Table rows of a Markdown document, split at unescaped pipes."""
    rows = []
    for line in md.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def _check_markdown(md: str, n_headings: int) -> None:
    assert RTL not in md
    assert not re.search(r"(?<!\\)\]\(javascript:", md)  # no live javascript: link
    assert not re.search(r"(?<!\\)<img", md)  # no raw HTML
    assert len(re.findall(r"^#{1,6} ", md, flags=re.M)) == n_headings  # no heading from a name
    for block in re.split(r"\n\s*\n", md):  # every table keeps its column count
        rows = _md_rows(block)
        if rows:
            assert {len(r) for r in rows} == {len(rows[0])}, block


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text, self.rows, self._row = [], [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend((tag, k, v) for k, v in attrs)
        if tag == "tr":
            self._row = 0
        elif tag in ("td", "th") and self._row is not None:
            self._row += 1

    def handle_endtag(self, tag):
        if tag == "tr":
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)


def _check_html(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    assert RTL not in page
    # one script only: the renderer's own sorting/filtering script, allowed by its hash in the CSP
    from evalkit.report.render import _SCRIPT, CSP

    assert p.tags.count("script") <= 1 and set(p.tags) <= {
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "nav", "ol", "ul", "li", "a", "section",
        "div", "table", "caption", "thead", "tbody", "tr", "th", "td", "figure", "img", "figcaption", "strong", "code",
        "script", "details", "summary", "span", "wbr", "abbr", "header"}
    if "script" in p.tags:
        assert re.findall(r"<script>(.*?)</script>", page, flags=re.S) == [_SCRIPT]
        assert f'content="{CSP}"' in page and "script-src 'sha256-" in CSP
    assert not [a for a in p.attrs if a[1].startswith("on")]  # no event handler attribute
    for tag, key, value in p.attrs:
        if key in ("href", "src"):
            assert not value.lower().startswith(("javascript:", "data:")), value
        if tag == "img":
            assert key != "src" or value.startswith("figures/")
    strong = re.findall(r"<strong>(.*?)</strong>", page)
    # '**bold**' in a name is not markup: a name may be bold as a whole (the headline), its asterisks kept
    assert not any("bold" in s and "**bold**" not in s for s in strong)
    return p


def _no_formula_cells(out: Path) -> None:
    """No text cell of the folder's CSVs starts like a spreadsheet formula (numbers such as -0.2 are fine)."""
    for csv in (out / "tables").glob("*.csv"):
        frame = pd.read_csv(csv, keep_default_na=False, dtype=str)
        for c in frame.columns:
            cells = frame[c]
            bad = cells.str.match(r"^[=+\-@\t\r]") & ~cells.str.fullmatch(r"-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?|-?inf")
            assert not bad.any(), (csv.name, c, list(cells[bad])[:3])


def test_summary_prints_json_and_writes_neutralised_csv(tmp_path, capsys):
    assert main(["summary", str(HOSTILE / "comparisons.csv"), "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    records = json.loads(out)
    assert sorted(r["model"] for r in records) == sorted(NAMES)  # exact names, losslessly
    assert main(["summary", str(HOSTILE / "comparisons.csv")]) == 0
    table = [r for r in _md_rows(capsys.readouterr().out)]
    assert len(table) == len(NAMES) + 2 and {len(r) for r in table} == {len(table[0])}
    shown = {r[0].replace("\\|", "|") for r in table[2:]}
    assert shown == {label(n) for n in NAMES}  # readable; newline and RTL shown as \n, \u202e
    assert main(["summary", str(HOSTILE / "comparisons.csv"), "--out", str(tmp_path / "s.csv")]) == 0
    cells = pd.read_csv(tmp_path / "s.csv")["model"]
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
    assert sorted(c[1:] if c.startswith("'") else c for c in cells) == sorted(NAMES)
    assert main(["summary", str(HOSTILE / "comparisons.csv"), "--out", str(tmp_path / "r.csv"), "--raw-csv"]) == 0
    assert sorted(pd.read_csv(tmp_path / "r.csv")["model"]) == sorted(NAMES)


def test_rate_folder(tmp_path, capsys):
    out = tmp_path / "rate"
    assert main(["rate", str(HOSTILE / "comparisons.csv"), "--out", str(out), "--quiet"]) == 0
    assert verify_dir(out) == []
    cells = pd.read_csv(out / "leaderboard.csv")["model"]
    assert sorted(c[1:] if c.startswith("'") else c for c in cells) == sorted(NAMES)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    _check_markdown(md, 0)
    assert len(_md_rows(md)) == len(NAMES) + 2
    assert all(markdown_text(n) in md for n in NAMES)
    assert "missing_glyphs" not in json.loads((out / "run.json").read_text()) or not _cjk_font()


def _cjk_font():
    from evalkit.plots._fonts import fallback_fonts

    return bool(fallback_fonts())


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "report"
    assert main(["report", str(HOSTILE / "comparisons.csv"), "--scores", str(HOSTILE / "scores.csv"),
                 "--out", str(out), "--n-boot", "20", "--quiet"]) == 0
    return out


def test_report_markdown_and_html_keep_their_structure(hostile_report):
    out = hostile_report
    assert verify_dir(out) == []
    md = (out / "report.md").read_text(encoding="utf-8")
    run = json.loads((out / "run.json").read_text())
    _check_markdown(md, 2 + len(run["sections"]))  # the title, the Headline, the sections
    for name in NAMES:
        assert markdown_text(name) in md
    page = _check_html((out / "report.html").read_text(encoding="utf-8"))
    text = "".join(page.text)
    for name in NAMES:
        assert label(name) in text  # readable in the browser, with \n and \u202e visible
    tables = re.findall(r"<table>.*?</table>", (out / "report.html").read_text(encoding="utf-8"), flags=re.S)
    for t in tables:
        p = _Page()
        p.feed(t)
        assert len(set(p.rows)) == 1, t[:200]  # every row has the header's number of cells
    _no_formula_cells(out)


def _check_report_folder(out: Path, names) -> None:
    """A verified report folder whose Markdown and HTML keep their structure and show every name."""
    assert verify_dir(out) == []
    md = (out / "report.md").read_text(encoding="utf-8")
    run = json.loads((out / "run.json").read_text())
    _check_markdown(md, 2 + len(run["sections"]))  # the title, the Headline, the sections
    page = _check_html((out / "report.html").read_text(encoding="utf-8"))
    text = "".join(page.text)
    for name in names:
        assert label(name) in text


def test_compare_report_keeps_its_structure(tmp_path):
    out = tmp_path / "cmp"
    assert main(["compare", str(HOSTILE / "events.jsonl"), "--by", "system", "--map", "system=agent", "--map",
                 "session=run", "--map", "score=reward", "--n-resamples", "199", "--out", str(out), "--quiet"]) == 0
    _check_report_folder(out, (NAMES[0], NAMES[1], NAMES[3], NAMES[4], NAMES[8]))
    _no_formula_cells(out)


def test_report_figures_draw_cjk_or_say_which_glyphs_are_missing(hostile_report):
    md = (hostile_report / "report.md").read_text(encoding="utf-8")
    if _cjk_font():
        assert "Characters missing from the figures" not in md
    else:
        assert "Characters missing from the figures" in md and "U+6A21" in md


def test_missing_glyph_is_named_in_the_caption_and_a_section(tmp_path):
    import matplotlib.pyplot as plt

    from evalkit.report import ReportSpec, Section, write_report

    def odd_section(ctx):
        _, ax = plt.subplots()
        ax.set_title("\u0d9a")  # SINHALA LETTER ALPAPRAANA KAYANNA: in neither DejaVu Sans nor Noto CJK
        return Section("Odd", (ctx.save_figure(ax, "odd", "A title in Sinhala."),))

    scores = pd.DataFrame({"system": ["a", "b"] * 3, "item": np.repeat(["1", "2", "3"], 2), "score": [1, 0, 1, 1, 0, 0.]})
    out = write_report(ReportSpec(scores=scores, sections=[odd_section]), tmp_path / "r")
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "A title in Sinhala. (no installed font has the characters U+0D9A" in md
    assert "## Characters missing from the figures" in md


def test_heatmap_never_met_is_grey_not_the_colour_of_half():
    import matplotlib.pyplot as plt

    from evalkit.plots.ratings import NEVER_MET, plot_win_rate_heatmap

    m = pd.DataFrame([[np.nan, 0.5, np.nan], [0.5, np.nan, 0.7], [np.nan, 0.3, np.nan]], index=list("abc"),
                     columns=list("abc"))
    ax = plot_win_rate_heatmap(m, annot=False)
    fig = ax.figure
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)
    h = img.shape[0]

    def pixels(col, row):  # the cell's central area; imshow centres cell (row, col) on (col, row)
        x0, y0 = ax.transData.transform((col - 0.2, row - 0.2))
        x1, y1 = ax.transData.transform((col + 0.2, row + 0.2))
        xs, ys = sorted((int(x0), int(x1))), sorted((h - int(y0), h - int(y1)))
        return img[ys[0]:ys[1], xs[0]:xs[1]].reshape(-1, 3)

    half, never = pixels(1, 0), pixels(2, 0)
    assert half.mean(axis=0).min() > 235  # 0.5 is the palette's near-white centre
    grey = np.array([int(NEVER_MET[i:i + 2], 16) for i in (1, 3, 5)])
    assert never.mean() < 200 and np.abs(never - grey).max() <= 2  # never met: the flat grey, one image
    assert any(t.get_text() == "never met" for t in ax.get_legend().get_texts())
    plt.close(fig)


LOOKALIKES = ["café", "cafe\u0301", "alpha", "alpha\u200b", "\u0430lpha", "beta"]  # NFC/NFD, zero-width, Cyrillic а


def test_names_that_look_alike_get_a_warning_and_distinct_labels(tmp_path, capsys):
    """The audit's look-alikes (NFC and NFD café, alpha with a zero-width space, Cyrillic аlpha)
    showed as identical rows with no warning. Now every table (terminal, Markdown, HTML) shows
    them by their code points, one distinct label each, and the command warns once."""
    from evalkit._escape import code_point_label, distinct_labels, lookalike_key

    assert lookalike_key("café") == lookalike_key("cafe\u0301") and lookalike_key("\u0430lpha") == "alpha"
    assert lookalike_key("alpha\u200b") == "alpha" and lookalike_key("beta") == "beta"
    assert code_point_label("cafe\u0301") == "cafe\\u0301" and code_point_label("café") == "caf\\xe9"
    assert distinct_labels(["alpha", "beta", "模型甲"]) is None  # nothing alike: no warning, no change
    data = tmp_path / "look.csv"
    pairs = [(a, b) for i, a in enumerate(LOOKALIKES) for b in LOOKALIKES[i + 1:]]
    data.write_text("model_a,model_b,winner\n" + "".join(f"{a},{b},{w}\n" for a, b in pairs
                                                          for w in ("model_a", "model_b", "tie")), encoding="utf-8")
    assert main(["rate", str(data), "--n-resamples", "0"]) == 0
    out, err = capsys.readouterr()
    model = _md_rows(out)[0].index("model")
    shown = [r[model] for r in _md_rows(out)[2:]]
    assert sorted(shown) == sorted(code_point_label(n) if n != "beta" else n for n in LOOKALIKES)
    assert "caf\\xe9 and cafe\\u0301" in err or "cafe\\u0301 and caf\\xe9" in err
    assert err.count("look alike") == 1, err
    out_dir = tmp_path / "report"
    assert main(["report", str(data), "--out", str(out_dir), "--n-boot", "20", "--quiet"]) == 0
    md = (out_dir / "report.md").read_text(encoding="utf-8")
    page = (out_dir / "report.html").read_text(encoding="utf-8")
    for n in LOOKALIKES[:-1]:
        assert markdown_text(code_point_label(n)) in md and code_point_label(n) in page, n


def test_a_judge_named_with_an_ansi_escape_is_shown_escaped_in_the_self_preference_warning(tmp_path, capsys):
    """The audit's case: an ANSI escape in a model name cleared the terminal through the
    self-preference warning (printed raw, beside the UI). Now every warning line goes through
    ``label``: the escape and a right-to-left override are shown as \\x1b and \\u202e."""
    judge = "\x1b[2Jgpt-4" + RTL
    data = tmp_path / "judged.csv"
    rows = [(judge, "b", "model_a"), (judge, "b", "model_b"), ("b", "c", "model_a"), ("c", "b", "model_a"),
            ("c", judge, "model_b"), (judge, "c", "tie")]
    pd.DataFrame(rows * 5, columns=["model_a", "model_b", "winner"]).to_csv(data, index=False)
    assert main(["rate", str(data), "--judge", judge, "--n-resamples", "0"]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in err + out and RTL not in err + out
    line = next(x for x in err.splitlines() if "is also a contestant" in x)
    assert "judge \\x1b[2Jgpt-4\\u202e is also a contestant" in line


def test_report_traces_keeps_its_structure_and_warnings_stay_one_line(tmp_path, capsys):
    """The audit's case: system and task names reached the text of `report --traces` unescaped
    (report/budget.py). A session table with the hostile names: the Markdown and HTML keep their
    structure, and a warning that quotes the names (a newline among them) stays one line."""
    data = tmp_path / "sessions.csv"
    rows = [(m, f"t{s % 2}<b>", s, b, round(((s + j) % 4) / 3 * min(1, b / 80), 3))
            for j, m in enumerate(NAMES[:6]) for s in range(4) for b in (10, 20, 40, 80, 160)]
    pd.DataFrame(rows, columns=["system", "task", "session", "budget", "score"]).to_csv(data, index=False)
    out = tmp_path / "r"
    assert main(["report", "--traces", str(data), "--out", str(out), "--n-resamples", "20"]) == 0
    _, err = capsys.readouterr()
    assert all(x.startswith(("evalkit report: ", "read ", "wrote ")) or not x.strip() for x in err.splitlines()), err
    _check_report_folder(out, NAMES[:6])
    _no_formula_cells(out)


AUDIT_NAMES = ["![x](http://evil.example/t.png)", "$\\frac{$", "nul\x00del\x7f", "a\r=SUM(A1:A9)", "rtl\u202eexe"]


def test_the_audits_names_through_compare_no_tracking_image_no_mathtext_abort_no_split_row(tmp_path, capsys):
    """The audit's names in one compare run: a Markdown image to a remote server (was a tracking
    image in report.md and a live link in report.html, whose CSP allowed http: images), a mathtext
    fragment ``$\\frac{$`` (aborted compare), NUL and DEL (printed raw), a CR before a formula (split
    the CSV row, the next physical row starting with a live ``=SUM``) and a right-to-left override."""
    import csv
    import io

    from evalkit.report.render import CSP

    assert "http:" not in CSP and "https:" not in CSP and "img-src 'self' file:" in CSP
    events = tmp_path / "events.jsonl"
    with open(events, "w", encoding="utf-8") as fh:
        for k, name in enumerate(AUDIT_NAMES[:2] + AUDIT_NAMES[2:]):
            for task in range(6):
                for run in range(2):
                    fh.write(json.dumps({"agent": name, "task": f"t{task}", "run": f"{k}-{run}", "input_tokens": 100,
                                         "reward": float((task + run + k) % 3 != 0)}) + "\n")
    out = tmp_path / "cmp"
    assert main(["compare", str(events), "--by", "system", "--map", "system=agent", "--map", "session=run", "--map",
                 "score=reward", "--n-resamples", "99", "--out", str(out)]) == 0
    stdout, err = capsys.readouterr()
    for text in (stdout, err):
        assert not re.search("[\x00\x7f\r\u202e]", text), text
    assert "nul\\x00del\\x7f" in stdout
    md = (out / "report.md").read_text(encoding="utf-8")
    images = re.findall(r"(?<!\\)!\[(?:[^\]\\]|\\.)*\]\(([^)]*)\)", md)
    assert images and all(u.startswith("figures/") for u in images), images  # the report's own figures only
    assert not re.search(r"(?<!\\)\]\(https?:", md)  # no live link
    page = _check_html((out / "report.html").read_text(encoding="utf-8"))
    assert not [v for tag, key, v in page.attrs if key in ("src", "href") and v and "evil.example" in v]
    assert list((out / "figures").glob("*.png"))  # the figures were drawn: no mathtext abort
    for table in (out / "tables").glob("*.csv"):  # every CSV row is one record; no cell starts a formula
        with open(table, encoding="utf-8", newline="") as fh:  # a NUL read as a stand-in (Python 3.10's csv)
            rows = list(csv.reader(io.StringIO(fh.read().replace("\0", "\ue000"))))
        assert {len(r) for r in rows} == {len(rows[0])}, table
        assert not [c for r in rows for c in r if c.startswith(("=", "+", "@"))], table
