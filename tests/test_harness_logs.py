"""Real harness logs of several versions (tests/data/harness, see PROVENANCE.md) read right, each fix pinned
to a number computed without evalkit:

- Inspect: ``inspect_ai.log.read_eval_log`` (tokens, scores, status, the log's own accuracy and stderr);
- SWE-bench: the verdict file's own count (read with ``json``);
- lm-evaluation-harness: the ``results_<date>.json`` of the same run (value and stderr);
- MT-bench: FastChat's ``show_result.py`` run on the fixtures (lm-sys/FastChat @ 0e6d3e4, offline).
"""

from __future__ import annotations

import gzip
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.cli import main
from evalkit.io.logs import log_format, read_logs, session_outcomes
from evalkit.io.swe_bench import read_swe_bench_report

H = Path(__file__).parent / "data" / "harness"
INSPECT = H / "inspect"
POPULARITY = INSPECT / "v0.3.58" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
UNSCORED = INSPECT / "v0.3.58" / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
INPUT_TASK = INSPECT / "v0.3.43" / "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"
CANCELLED = INSPECT / "v0.3.95" / "2025-05-12T20-28-13-04-00_popularity.json"
MINI = H / "mini_swe_agent" / "20251118_mini-v1.15.0_gemini-3-pro-preview"
LM = H / "lm_eval"
MT = H / "mt_bench"


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _json_result(capsys, argv) -> list[dict]:
    assert main(argv) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    return out if isinstance(out, list) else next(v for v in out.values() if isinstance(v, list) and v
                                                  and "mean" in v[0])


def _agent_tokens(sample) -> int:
    """Input + output tokens of the model calls outside scorer regions, from Inspect's own parsed events
    (``step`` scorer begin/end before spans existed, scorer spans after)."""
    from inspect_ai.log import ModelEvent, SpanBeginEvent, StepEvent

    total, depth, scorer_spans = 0, 0, set()
    for ev in sample.events:
        if isinstance(ev, StepEvent) and ev.type == "scorer":
            depth += 1 if ev.action == "begin" else -1
        elif isinstance(ev, SpanBeginEvent) and (ev.type in ("scorer", "scorers") or ev.parent_id in scorer_spans):
            scorer_spans.add(ev.id)
        elif isinstance(ev, ModelEvent) and depth == 0 and ev.span_id not in scorer_spans:
            total += ev.output.usage.input_tokens + ev.output.usage.output_tokens
    return total


# ----------------------------------------------------------------------------------------------- Inspect

def test_pre_span_step_scorer_is_not_the_agents_budget():
    """Issue 20, item 1: a Nov 2024 log (0.3.43) marks its scorer with step events; 463 tokens were read
    where the agent spent 99 (the other 364 are model_graded_fact's)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(INPUT_TASK))
    agent = _agent_tokens(log.samples[0])
    usage = log.stats.model_usage["openai/gpt-4o-mini"]
    frame = _quiet(read_logs, INPUT_TASK)
    assert frame["budget"].tolist() == [agent] == [99]
    full = _quiet(read_logs, INPUT_TASK, include_scorer=True)
    assert full["budget"].iat[0] == usage.input_tokens + usage.output_tokens == 463  # judge included, as Inspect counts
    assert frame["score"].iat[0] == 1.0  # grade "C"


BROWSER = INSPECT / "v0.3.95" / "2025-05-12T20-27-36-04-00_browser.json"


def test_cache_reads_inside_old_openai_input_tokens_are_not_counted_twice(tmp_path):
    """Inspect before 0.3.184 (#3341) logged OpenAI's ``prompt_tokens`` as ``input_tokens``, cache reads inside
    (``total_tokens = input + output``); today's logs keep them out. This 0.3.95 gpt-4o-mini log has 8 calls
    with cache reads (9,088 of its 15,235 input tokens): the budget is the fresh input + output, and --prices
    charges each cached token once, at the cache price, as OpenAI bills it."""
    from inspect_ai.log import read_eval_log

    usage = read_eval_log(str(BROWSER)).samples[0].model_usage["openai/gpt-4o-mini"]  # Inspect's own totals
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens  # the old convention: cache inside
    fresh = usage.input_tokens - usage.input_tokens_cache_read
    assert (usage.input_tokens, usage.input_tokens_cache_read, fresh) == (15235, 9088, 6147)
    runs = session_outcomes(_quiet(read_logs, BROWSER))
    assert runs["budget"].tolist() == [fresh + usage.output_tokens] == [6428]  # was 15,516: cache counted as input
    assert runs[["input_tokens", "cache_read_tokens"]].values.tolist() == [[6147, 9088]]
    prices = tmp_path / "p.csv"  # gpt-4o-mini's published prices, $ per 1M: input 0.15, cached input 0.075, output 0.60
    prices.write_text("model,input,output,cache_read\nopenai/gpt-4o-mini,0.15,0.60,0.075\n")
    from evalkit.metrics.cost import apply_prices, read_prices

    cost = apply_prices(runs, read_prices(str(prices)))["cost"].iat[0]
    billed = ((usage.input_tokens - usage.input_tokens_cache_read) * 0.15 + usage.input_tokens_cache_read * 0.075
              + usage.output_tokens * 0.60) / 1e6  # OpenAI's bill: prompt tokens, the cached ones at half price
    assert cost == pytest.approx(billed, rel=1e-12) and billed == pytest.approx(0.00177225, rel=1e-12)  # (6147*0.15 + 9088*0.075 + 281*0.6)/1e6; was 0.00313545


@pytest.mark.parametrize("name", ["log_formats.json", "log_formats.eval"])
def test_transcript_events_of_0_3_4x_json_logs(name):
    """Item 2: 0.3.41 JSON logs keep events under sample.transcript.events; the budget read 0."""
    from inspect_ai.log import read_eval_log

    path = INSPECT / "v0.3.41" / name
    usage = read_eval_log(str(path)).stats.model_usage["ollama/llama3.1"]
    frame = _quiet(read_logs, path)
    assert frame["budget"].tolist() == [usage.input_tokens + usage.output_tokens] == [68]


def test_the_same_run_as_eval_and_json_is_read_once():
    """Item 7: x.eval and x.json (inspect log convert) collided into one session; now one is read, with a note."""
    with pytest.warns(UserWarning, match=r"log_formats.json is the same Inspect run as log_formats.eval.*read once"):
        frame = read_logs(INSPECT / "v0.3.41")
    assert frame[frame["system"] == "ollama/llama3.1"]["session"].nunique() == 1
    assert frame.attrs["files"] == {"inspect": 2, "skipped-duplicate": 1}


def test_cancelled_run_is_warned_and_its_status_carried():
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(CANCELLED))
    assert log.status == "cancelled"
    with pytest.warns(UserWarning, match=rf"status is 'cancelled' \({len(log.samples)} of {log.eval.dataset.samples} "):
        frame = read_logs(CANCELLED)
    assert set(frame["status"]) == {"cancelled"}
    assert frame["score"].tolist() == [float(s.scores["match"].value == "C") for s in log.samples]


def test_a_scored_sample_without_usage_is_nan_and_warned_never_zero():
    from inspect_ai.log import read_eval_log

    path = INSPECT / "v0.3.135" / "log_message_deduplication.eval"
    sample = read_eval_log(str(path)).samples[0]
    assert sample.model_usage == {} and sample.scores  # scored, and Inspect recorded no usage
    with pytest.warns(UserWarning, match=r"without token usage .*unknown \(NaN\), not 0"):
        frame = read_logs(path)
    assert frame["budget"].isna().all() and frame["tokens"].isna().all()


def test_per_sample_usage_time_and_errors_match_read_eval_log():
    from inspect_ai.log import read_eval_log

    path = INSPECT / "v0.3.95" / "log_read_sample.eval"
    s = read_eval_log(str(path)).samples[0]
    row = _quiet(read_logs, path).iloc[0]
    u = next(iter(s.model_usage.values()))
    assert row["tokens"] == u.input_tokens + u.output_tokens and row["tokens_total"] == u.total_tokens
    assert row["time"] == pytest.approx(s.working_time, abs=1e-12)
    assert row["total_time"] == pytest.approx(s.total_time, abs=1e-12)
    assert row["error"] is None and s.error is None


@pytest.mark.parametrize("path", [POPULARITY, INSPECT / "v0.3.42" / "log_streaming.eval", CANCELLED,
                                  H.parent / "transcripts" / "inspect_ai" / "2025-05-12T20-28-26-04-00_security-guide.json"])
def test_score_summary_and_compare_reproduce_inspects_accuracy_and_stderr(path, capsys, tmp_path):
    """Item 11 and the acceptance: one run scored alone reproduces Inspect's own headline to 1e-9."""
    from inspect_ai.log import read_eval_log

    metrics = read_eval_log(str(path), header_only=True).results.scores[0].metrics
    acc, se = metrics["accuracy"].value, metrics["stderr"].value
    for argv in (["score", str(path), "--json"], ["summary", str(path), "--json"],
                 ["compare", str(path), "--out", str(tmp_path / "c"), "--force", "--json"]):
        (row,) = _json_result(capsys, argv)
        assert row["mean"] == pytest.approx(acc, abs=1e-9), argv[0]
        assert row["se"] == pytest.approx(se, abs=1e-9), argv[0]


def test_score_of_a_repeated_run_pass_k_interval_and_tokens_from_read_eval_log(capsys):
    """Item 2: a run with epochs gets pass@k / pass^k (the unbiased estimators, computed here with
    scipy.special.comb from read_eval_log's samples), a t(n - 1) interval (scipy.stats.t) and its tokens
    (the log's own model_usage)."""
    from inspect_ai.log import read_eval_log
    from scipy.special import comb
    from scipy.stats import t as student_t

    path = INSPECT / "v0.3.42" / "log_streaming.eval"  # 2 samples x 2 epochs, one 'I'
    log = read_eval_log(str(path))
    passed: dict[object, list[float]] = {}
    for smp in log.samples:
        passed.setdefault(smp.id, []).append(float(smp.scores["match"].value == "C"))
    assert main(["score", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["scores"]
    means = np.array([np.mean(v) for v in passed.values()])
    n = len(means)
    se = means.std(ddof=1) / np.sqrt(n)
    lo, hi = student_t.interval(0.95, n - 1, loc=means.mean(), scale=se)
    assert (row["n_tasks"], row["runs_per_task"]) == (2, 2.0)
    assert row["ci_low"] == pytest.approx(lo, abs=1e-9) and row["ci_high"] == pytest.approx(hi, abs=1e-9)
    usage = sum(u.input_tokens + u.output_tokens for u in log.stats.model_usage.values())
    assert row["tokens"] == usage
    got = {(r["metric"], r["k"]): r["estimate"] for r in out["pass_k"]}
    for k in (1, 2):
        at = [1 - comb(len(v) - sum(v), k) / comb(len(v), k) for v in passed.values()]
        hat = [comb(sum(v), k) / comb(len(v), k) for v in passed.values()]
        assert got[("pass@k", k)] == pytest.approx(np.mean(at), abs=1e-12)
        assert got[("pass^k", k)] == pytest.approx(np.mean(hat), abs=1e-12)


def test_unscored_log_message_says_none_is_scored():
    """The reversed message: "Found 1 log file(s) with a scored submission" was printed when there was none."""
    with pytest.raises(ValueError, match=r"Found 1 log file\(s\) in .*, but none has a scored submission"):
        _quiet(read_logs, UNSCORED)


def test_eval_zip_through_summary_and_rate_is_a_clear_exit_2(capsys):
    """Item 5: `summary`/`rate` on an .eval died with a _csv.Error traceback (exit 3)."""
    assert main(["rate", str(POPULARITY)]) == 2
    err = capsys.readouterr().err
    assert "evalkit score" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["summary", str(POPULARITY)]) == 0  # scored as `evalkit score` does


# ---------------------------------------------------------------------------------- SWE-bench, mini-swe-agent

def _verdict_counts() -> dict[str, bool]:
    return {p.parent.name: json.loads(p.read_text())["resolved"] for p in sorted((MINI / "logs").glob("*/report.json"))}


def test_mini_swe_agent_trajectories_in_a_folder_named_and_renamed(tmp_path):
    """Item 6: .traj.json was skipped in folders, misread when named, and crashed (KeyError) as .traj."""
    trajs = sorted(MINI.rglob("*.traj.json"))
    stats = {p.name.removesuffix(".traj.json"): json.loads(p.read_text())["info"]["model_stats"] for p in trajs}
    verdicts = _verdict_counts()
    frame = _quiet(read_logs, MINI)
    assert frame.attrs["files"]["mini_swe_agent"] == 4
    out = session_outcomes(frame).set_index("task")
    assert out["score"].to_dict() == {k: float(v) for k, v in verdicts.items()}  # the per-instance report.json
    assert out["cost"].to_dict() == pytest.approx({k: s["instance_cost"] for k, s in stats.items()})
    assert set(out["system"]) == {"google/gemini-3-pro-preview"}  # info.config.model.model_name
    usage = sum(m["extra"]["response"]["usage"]["prompt_tokens"] + m["extra"]["response"]["usage"]["completion_tokens"]
                for p in trajs for m in json.loads(p.read_text())["messages"] if (m.get("extra") or {}).get("response"))
    assert out["tokens"].sum() == usage
    one = trajs[0]
    assert log_format(one) == "mini_swe_agent"
    shutil.copyfile(one, tmp_path / (one.name.removesuffix(".json")))  # renamed to .traj
    renamed = _quiet(read_logs, tmp_path / one.name.removesuffix(".json"), resolved=True)
    assert renamed["cost"].iat[0] == pytest.approx(stats[one.name.removesuffix(".traj.json")]["instance_cost"])


def test_swe_bench_verdict_shapes_and_their_own_counts(capsys):
    """Item 8: {instance_id: bool} (SWE-bench Pro), the flat per-instance report.json, results_summary.json and
    resolved_ids (sb-cli) are all read; a run scored alone reproduces the file's own resolved rate."""
    pro = H / "swe_bench_pro" / "claude-45sonnet-10132025" / "eval_results.json"
    raw = json.loads(pro.read_text())
    assert read_swe_bench_report(pro) == raw
    summary = json.loads((MINI / "results_summary.json").read_text())
    sb = H / "swe_bench" / "sb-cli" / "swe-bench_verified__test__20251118_mini-v1.15.0_gemini-3-pro-preview-20251118.json"
    sbr = json.loads(sb.read_text())
    flat = MINI / "logs" / "django__django-10999" / "report.json"
    assert dict(read_swe_bench_report(flat)) == {"django__django-10999": json.loads(flat.read_text())["resolved"]}
    for path, rate in ((pro, sum(raw.values()) / len(raw)),  # swe_bench_pro_eval.py's "Overall accuracy"
                       (MINI / "results_summary.json", summary["pass_rate"] / 100),
                       (sb, sbr["resolved_instances"] / sbr["total_instances"])):
        (row,) = _json_result(capsys, ["score", str(path), "--json"])
        assert row["mean"] == pytest.approx(rate, abs=1e-12)
        assert row["n_tasks"] == (len(raw) if path == pro else 500)


def test_two_swe_bench_pro_verdict_files_compare_without_trajectories(tmp_path, capsys):
    a, b = (H / "swe_bench_pro" / n for n in ("claude-45sonnet-10132025", "gpt-5-250-turns-10132025"))
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "c"), "--force"]) == 0
    row = pd.read_csv(tmp_path / "c" / "tables" / "run_comparisons.csv").iloc[0]
    ra, rb = (json.loads((p / "eval_results.json").read_text()) for p in (a, b))
    shared = sorted(set(ra) & set(rb))
    assert (row["baseline"], row["candidate"]) == ("claude-45sonnet-10132025", "gpt-5-250-turns-10132025")
    assert row["n_tasks"] == len(shared)
    assert row["diff (candidate − baseline)"] == pytest.approx(np.mean([rb[i] - ra[i] for i in shared]), abs=1e-12)


def test_long_id_lists_are_cut_to_ten(tmp_path, capsys):
    """Misleading output: an error line listed 730 ids (70 kB)."""
    pro = H / "swe_bench_pro" / "claude-45sonnet-10132025"
    assert main(["score", str(pro), "--cluster-regex", r"^(nomatch)-(\d+)$"]) == 2
    err = capsys.readouterr().err.strip()
    assert "730 task id(s)" in err and "and 720 more" in err and len(err) < 2000


# --------------------------------------------------------------------------------------------------- lm-eval

def _results(path: Path) -> dict:
    return json.loads(path.read_text())


def test_lm_eval_samples_pair_with_their_own_results_file():
    """Item 3: each samples file took the first results_*.json of its folder; two models merged into one."""
    folder = LM / "mixed_output"
    expected = {}
    for res in folder.glob("results_*.json"):
        d = _results(res)
        expected[d["model_name"]] = d["results"]["winogrande"]
    frame = _quiet(read_logs, folder)
    got = session_outcomes(frame).groupby("system")["score"].agg(["mean", "size"])
    assert set(got.index) == set(expected) == {"gpt-4o", "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct"}
    for model, res in expected.items():
        assert got.loc[model, "mean"] == pytest.approx(res["exact_match,get-answer"], abs=1e-12)
    assert set(frame["filter"]) == {"get-answer"}


@pytest.mark.parametrize("samples, key", [
    ("gpt-4o/samples_winogrande_2024-12-23T14-29-31.806745.jsonl", "exact_match,get-answer"),
    ("llama3.1-pro16-0827-Inst-nc-chat_241016/samples_winogrande_2024-12-23T13-17-27.691350.jsonl", "acc,none"),
])
def test_lm_eval_acc_and_stderr_reproduced(samples, key, capsys):
    """A run scored alone gives lm-eval's value ± stderr (the second file is an older format: no 'metrics')."""
    path = LM / samples
    res = _results(path.parent / path.name.replace("samples_winogrande", "results").replace(".jsonl", ".json"))
    value, se = res["results"]["winogrande"][key], res["results"]["winogrande"][key.replace(",", "_stderr,")]
    (row,) = _json_result(capsys, ["score", str(path), "--json"])
    assert row["mean"] == pytest.approx(value, abs=1e-9) and row["se"] == pytest.approx(se, abs=1e-9)


def test_lm_eval_filter_is_named_and_chosen():
    """This run (lm-eval ~0.4.2) logs each document once per filter without a 'filter' field: 30 lines for
    10 documents; the blocks take the filter names of its results file, in order."""
    path = LM / "llama3.1-pro16-0827-Inst_241016" / "samples_ko_winogrande_2024-11-19T14-38-02.552165.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert len(lines) == 30 and "filter" not in lines[0]
    res = _results(path.parent / "results_2024-11-19T14-38-02.552165.json")["results"]["ko_winogrande"]
    filters = [k.split(",", 1)[1] for k in res if k.startswith("exact_match,")]
    assert filters == ["get-option", "get-answer1", "get-answer2"]
    with pytest.warns(UserWarning, match=rf"logs 3 filters .*score is the '{filters[0]}' filter's"):
        frame = read_logs(path)
    assert set(frame["filter"]) == {filters[0]} and len(frame) == 10
    second = _quiet(read_logs, path, filter=filters[1])
    assert set(second["filter"]) == {filters[1]}
    with pytest.raises(ValueError, match="logs no filter 'nope'"):
        _quiet(read_logs, path, filter="nope")


# -------------------------------------------------------------------------------------------------- MT-bench

def test_mt_bench_pair_counts_match_fastchat_show_result(capsys, tmp_path):
    """FastChat show_result.py --mode pairwise-all on this file prints phi-3-dpo win 20, loss 18, tie 35,
    win_rate_adjusted 0.513699; 27 of the 73 games have g1_winner != g2_winner (evalkit said 24)."""
    from evalkit.io import read_comparisons

    res = read_comparisons(MT / "phi-3-dpo" / "gpt-4_pair.jsonl.gz")
    assert any(n.startswith("27 of 73 games had inconsistent verdicts") for n in res.report.notes)
    f = res.frame
    wins = {m: float(((f.player_a == m) * f.outcome + (f.player_b == m) * (1 - f.outcome)).sum()) for m in ("phi-3-dpo",)}
    assert wins["phi-3-dpo"] == pytest.approx(20 + 0.5 * 35)  # win + tie/2 (show_result's win_rate_adjusted * 73)
    assert main(["report", str(MT / "phi-3-dpo" / "gpt-4_pair.jsonl.gz"), "--n-boot", "0",
                 "--out", str(tmp_path / "r"), "--force"]) == 0  # item 4: a two-model judge log was refused


def test_mt_bench_single_answer_grading_matches_fastchat(capsys):
    """FastChat show_result.py --mode single: phi-3-dpo averages 8.2 (turn 1: 8.3625, turn 2: 8.0375);
    Meta-Llama-3-8B-Instruct-Normal 8.888889 and -Griffin 3.883333 (score -1 dropped)."""
    (row,) = _json_result(capsys, ["score", str(MT / "phi-3-dpo" / "gpt-4_single.jsonl.gz"), "--json"])
    assert row["mean"] == pytest.approx(8.2, abs=1e-12) and row["n_tasks"] == 160
    frame = _quiet(read_logs, MT / "phi-3-dpo" / "gpt-4_single.jsonl.gz")
    turns = frame.assign(turn=frame["task"].str.split("turn").str[1]).groupby("turn")["score"].mean()
    assert turns.to_dict() == pytest.approx({"1": 8.3625, "2": 8.0375}, abs=1e-12)
    griffin = MT / "llama-3-8b-griffin" / "gpt-4_single.jsonl.gz"
    rows = [json.loads(line) for line in gzip.open(griffin, "rt")]
    with pytest.warns(UserWarning, match=r"judged more than once"):
        g = read_logs(griffin)
    assert len(g) == sum(r["score"] != -1 for r in rows)  # every judgment kept but the 4 scores of -1
    means = g.groupby("system")["score"].mean()  # over judgments, as show_result.py averages
    assert means.to_dict() == pytest.approx({"Meta-Llama-3-8B-Instruct-Normal": 8.888889,
                                             "Meta-Llama-3-8B-Instruct-Griffin": 3.883333}, abs=5e-7)


# -------------------------------------------------------------------------------- outcome-only tables, units

@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_outcome_only_tables_reach_compare_without_a_budget(fmt, tmp_path):
    """Item 9: JSONL needed a fake token field, a CSV session table was refused."""
    pro = json.loads((H / "swe_bench_pro" / "gpt-5-250-turns-10132025" / "eval_results.json").read_text())
    ids = sorted(pro)[:40]
    rows = [{"system": s, "task": i, "score": float(pro[i]) if s == "gpt-5" else float(j % 3 == 0)}
            for s in ("other", "gpt-5") for j, i in enumerate(ids)]
    path = tmp_path / f"outcomes.{fmt}"
    frame = pd.DataFrame(rows)
    {"csv": lambda: frame.to_csv(path, index=False), "jsonl": lambda: frame.to_json(path, orient="records", lines=True),
     "parquet": lambda: frame.to_parquet(path)}[fmt]()
    out = tmp_path / "c"
    assert main(["compare", str(path), "--out", str(out), "--force", "--budget-unit", "cost"]) == 0
    row = pd.read_csv(out / "tables" / "run_comparisons.csv").iloc[0]
    wide = frame.pivot(index="task", columns="system", values="score")
    assert row["n_tasks"] == 40
    assert abs(row["diff (candidate − baseline)"]) == pytest.approx(abs((wide["gpt-5"] - wide["other"]).mean()))


def test_budget_unit_a_log_lacks_does_not_stop_compare(tmp_path):
    """Item 9: `--budget-unit cost` failed although compare never uses the budget."""
    assert main(["compare", str(INSPECT / "v0.3.58"), str(INSPECT / "v0.3.42"), "--budget-unit", "cost",
                 "--out", str(tmp_path / "c"), "--force"]) == 0
