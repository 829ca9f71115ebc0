"""The report's default leaderboard interval on LLMFAO gpt4 against CR1 with t(G - 1) (issue 22).

The audit: the report's cluster bootstrap over items silently dropped 127 of 200 degenerate replicates,
leaving Code Llama (7B) with a 64-Elo interval where CR1 gives 160. Now those 127 replicates are counted;
being more than one tail of the interval, the leaderboard falls back to the CR1 sandwich with t(G - 1),
warns, and the report's headline names the fallback (not a "left out" that no longer happens).
``scripts/llmfao_widths.py`` prints the widths of every model.
"""

from __future__ import annotations

import warnings

import pytest

from evalkit.io import read_comparisons
from evalkit.ratings import leaderboard
from evalkit.ratings.leaderboard import DegenerateBootstrapWarning
from evalkit.report.findings import leaderboard_findings
from evalkit.report.headline import Headline
from evalkit.resources import data_file


@pytest.fixture(scope="module")
def gpt4():
    frame, _ = read_comparisons(str(data_file("llmfao/gpt4-comparisons.csv")))
    return frame


def test_default_interval_is_within_15_percent_of_cr1_t_and_says_why(gpt4):
    with warnings.catch_warnings(record=True) as caught:  # the report's defaults (leaderboard_section)
        warnings.simplefilter("always")
        boot = leaderboard(gpt4, interval="bootstrap", cluster="item", n_resamples=200, rng=0).set_index("model")
    cr1 = leaderboard(gpt4, interval="sandwich", cluster="item").set_index("model")
    model = "Code Llama (7B)"
    w_boot = boot.loc[model, "ci_high"] - boot.loc[model, "ci_low"]
    w_cr1 = cr1.loc[model, "ci_high"] - cr1.loc[model, "ci_low"]
    assert abs(w_boot / w_cr1 - 1) <= 0.15
    assert boot.attrs["n_degenerate"] == 127 and boot.attrs["n_resamples"] == 200  # the audit's count
    assert "t(18)" in boot.attrs["interval"] and boot.attrs["n_clusters"] == 19
    assert any(issubclass(w.category, DegenerateBootstrapWarning) for w in caught)
    headline = Headline()
    leaderboard_findings(headline, boot.reset_index(), section="Leaderboard", cluster="item")
    caveats = [i.text for i in headline.items if i.kind == "caveat"]
    assert any("127 of 200" in c and "t(18)" in c and "instead" in c for c in caveats)
    assert not any("left out" in c for c in caveats)
