"""Significance tests and estimates for evaluations, each returning a frozen result.

Every test says which method it ran (Welch, never a silent Student's t), its df where it
applies, a confidence interval, an effect size, ``n`` and how ties or zeros were handled.
See ``evalkit.stats.unit.compare_units`` for the trial- vs task-level comparison of seed 002.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

# Exports load on first use (PEP 562), so that ``import evalkit.stats.<module>`` on a fast path
# (e.g. ``evalkit rate``) does not import scipy.stats through every other module.
_EXPORTS: dict[str, str] = {
    "ConfidenceInterval": "_result",
    "Estimate": "_result",
    "SignTestResult": "_result",
    "TestResult": "_result",
    "cohen_kappa": "agreement",
    "fleiss_kappa": "agreement",
    "krippendorff_alpha": "agreement",
    "panel_agreement": "agreement",
    "percent_agreement": "agreement",
    "position_bias_test": "agreement",
    "spearman": "agreement",
    "head_to_head": "headtohead",
    "mean_se": "means",
    "paired_difference": "means",
    "MULTIPLICITY_METHODS": "multiplicity",
    "MultiplicityResult": "multiplicity",
    "adjust_pvalues": "multiplicity",
    "mcnemar_test": "paired",
    "paired_bootstrap": "paired",
    "permutation_test": "paired",
    "wilcoxon_test": "paired",
    "PAIRED_TESTS": "pairwise",
    "PairwiseComparison": "pairwise",
    "compare_systems": "pairwise",
    "minimum_detectable_effect": "power",
    "sign_test_min_wins": "power",
    "ttest_power": "power",
    "ttest_sample_size": "power",
    "clopper_pearson_interval": "proportions",
    "pass_rate": "proportions",
    "wilson_interval": "proportions",
    "win_rate": "proportions",
    "win_rate_from_outcomes": "proportions",
    "PairedScores": "scores",
    "item_scores": "scores",
    "paired_scores": "scores",
    "TIE_POLICIES": "sign",
    "sign_test": "sign",
    "sign_test_from_counts": "sign",
    "paired_ttest": "ttest",
    "welch_ttest": "ttest",
    "welch_ttest_from_stats": "ttest",
    "UnitComparison": "unit",
    "compare_units": "unit",
    "results_table": "unit",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from evalkit.stats._result import ConfidenceInterval, Estimate, SignTestResult, TestResult
    from evalkit.stats.agreement import (
        cohen_kappa,
        fleiss_kappa,
        krippendorff_alpha,
        panel_agreement,
        percent_agreement,
        position_bias_test,
        spearman,
    )
    from evalkit.stats.headtohead import head_to_head
    from evalkit.stats.means import mean_se, paired_difference
    from evalkit.stats.multiplicity import MULTIPLICITY_METHODS, MultiplicityResult, adjust_pvalues
    from evalkit.stats.paired import mcnemar_test, paired_bootstrap, permutation_test, wilcoxon_test
    from evalkit.stats.pairwise import PAIRED_TESTS, PairwiseComparison, compare_systems
    from evalkit.stats.power import (
        minimum_detectable_effect,
        sign_test_min_wins,
        ttest_power,
        ttest_sample_size,
    )
    from evalkit.stats.proportions import (
        clopper_pearson_interval,
        pass_rate,
        wilson_interval,
        win_rate,
        win_rate_from_outcomes,
    )
    from evalkit.stats.scores import PairedScores, item_scores, paired_scores
    from evalkit.stats.sign import TIE_POLICIES, sign_test, sign_test_from_counts
    from evalkit.stats.ttest import paired_ttest, welch_ttest, welch_ttest_from_stats
    from evalkit.stats.unit import UnitComparison, compare_units, results_table


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [
    "ConfidenceInterval", "Estimate", "SignTestResult", "TestResult",
    "welch_ttest", "welch_ttest_from_stats", "paired_ttest",
    "sign_test", "sign_test_from_counts", "TIE_POLICIES",
    "wilcoxon_test", "mcnemar_test", "permutation_test", "paired_bootstrap",
    "wilson_interval", "clopper_pearson_interval", "pass_rate", "win_rate", "win_rate_from_outcomes",
    "mean_se", "paired_difference",
    "adjust_pvalues", "MultiplicityResult", "MULTIPLICITY_METHODS",
    "ttest_power", "minimum_detectable_effect", "ttest_sample_size", "sign_test_min_wins",
    "percent_agreement", "panel_agreement", "cohen_kappa", "spearman", "position_bias_test", "fleiss_kappa",
    "krippendorff_alpha",
    "item_scores", "paired_scores", "PairedScores",
    "compare_systems", "PairwiseComparison", "PAIRED_TESTS", "head_to_head", "compare_units", "UnitComparison", "results_table",
]
