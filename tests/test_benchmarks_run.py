"""Every benchmark runs through at a tiny size, report included, and what it prints is sane.

Benchmarks are run by hand, so one that stops before its report (bench_depth.py did, for several rounds) goes
unnoticed unless a test runs it. Each test here runs one benchmark's ``main()`` in this process
(``load_benchmark``, argv set) at its smallest sizes and reads what it printed: every line of the report is
there, each ratio positive and each check's answer the right one. The benchmarks with a test of their own
elsewhere: bench_depth (test_depth_probe_speed.py), gpu_* (test_gpu_check.py, test_gpu_depth.py).
Those over ~3 s on 2 loaded cores are ``slow``: the time each took is beside its marker.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.benchmarks import load_benchmark
from tests.helpers.chains import ar1
from tests.servers import PG_BIN

NUMBER = r"[0-9]+(?:\.[0-9]+)?"
# The benchmarks that start their own PostgreSQL server (tests/servers.py), skipped as the pg_url fixture skips.
needs_postgres = pytest.mark.skipif(not (PG_BIN / "initdb").exists(),
                                    reason="PostgreSQL server binaries not installed (apt-get install postgresql)")


def _run(name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``benchmarks/<name>.py ARGS`` run in this process; what it printed."""
    bench = load_benchmark(name)
    monkeypatch.setattr("sys.argv", [f"{name}.py", *args])
    bench.main()
    return capsys.readouterr().out


def _restored_after(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Environment variables a benchmark sets in its process (it is a script): unset now, as they were after."""
    for name in names:
        monkeypatch.setenv(name, "-")  # recorded as it was (set or not), then removed (recorded as "-")
        monkeypatch.delenv(name)


def _value(said: str, pattern: str) -> float:
    """The number the first match of ``pattern`` (with one group) captures in ``said``."""
    found = re.search(pattern, said, flags=re.M)
    assert found is not None, f"no line matching {pattern!r} in:\n{said}"
    return float(found[1])


def test_bench_grounding_agrees_with_the_earlier_matching(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_grounding", monkeypatch, capsys, "--source-mb", "0.05", "--pages", "5", "--quotes", "20",
                "--old-sample", "4", "--repeats", "1")
    # Half the quotes are passages of the source: exactly those are grounded, and the earlier rule agrees.
    assert "20 quotes (10 grounded); earlier and current agree on the sample: True" in said, said
    assert _value(said, rf"earlier matching: +({NUMBER}) s") >= 0
    assert _value(said, rf"speed-up: ({NUMBER})x") > 0


def test_bench_index_reindexes_nothing_and_searches(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_index", monkeypatch, capsys, "--n", "20", "--queries", "10")
    assert _value(said, rf"cold index +({NUMBER}) s") > 0
    assert 0 <= _value(said, rf"no-change re-index +{NUMBER} s +({NUMBER})% of cold") < 100
    p50, p95 = _value(said, rf"search p50 +({NUMBER}) ms"), _value(said, rf"search p95 +({NUMBER}) ms")
    assert 0 < p50 <= p95


def test_bench_search_finds_every_note_grep_finds(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_search", monkeypatch, capsys, "--n", "20", "--queries", "3")
    rows = re.findall(rf"^(chinese 2-4 chars|english/mixed 2-4 chars|english word) +({NUMBER})ms +({NUMBER})ms "
                      rf"+({NUMBER})% +({NUMBER})ms +({NUMBER})%", said, flags=re.M)
    assert len(rows) == 3, said
    for kind, p50, p95, kb_recall, grep_ms, _ in rows:
        # kb's recall is against the exact answer computed in the benchmark: a substring search finds all of it
        assert float(kb_recall) == 100.0, kind
        assert 0 < float(p50) <= float(p95) and float(grep_ms) > 0


def test_bench_tensions_lists_the_generated_tensions(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_tensions", monkeypatch, capsys, "--notes", "12", "--claims-per-note", "3",
                "--quantities", "4", "--repeat", "2")
    assert "indexed 12 notes" in said
    # 36 claims on 4 quantities, a tenth far off (3x the truth): some pairs' accepted values are disjoint
    tensions = _value(said, rf"36 claims, 12 notes: ({NUMBER}) tensions listed in")
    assert 0 < tensions <= 36 * 35 / 2
    assert _value(said, rf"listed in ({NUMBER}) s cold") > 0


@pytest.mark.slow  # ~9 s on 2 loaded cores: three kb processes
def test_bench_export_writes_every_key_once(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_export", monkeypatch, capsys, "--n", "8")  # its asserts: 8 entries, 8 keys, stable keys
    assert "writes 8 citation keys" in said
    for line in ("kb index (cold)", "kb export --bibtex, first", "kb export --bibtex, again"):
        wall = _value(said, rf"{re.escape(line)} +({NUMBER}) s")
        cpu = _value(said, rf"{re.escape(line)} +{NUMBER} s +({NUMBER}) s")
        assert wall > 0 and cpu > 0, line
    assert _value(said, rf"\(writes 8 citation keys; ({NUMBER}) times the index's cpu\)") > 0


@pytest.mark.slow  # ~70 s on 2 loaded cores: 5 commands x 2 trees as new processes, 1,000 notes indexed twice
def test_bench_startup_measures_each_command_now_and_before(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_startup", monkeypatch, capsys, "--rounds", "1", "--before", "HEAD")
    rows = re.findall(rf"^(kb .+?) \| now +wall median ({NUMBER}) s .+ cpu median ({NUMBER}) s$", said, flags=re.M)
    assert {name for name, _, _ in rows} == {"kb --help", "kb add --help", "kb list (1,000 notes)",
                                             "kb list (empty)", "kb list (bundled notes)"}, said
    assert all(float(wall) > 0 and float(cpu) > 0 for _, wall, cpu in rows)
    ratios = re.findall(rf"now/before: wall ({NUMBER}), cpu ({NUMBER})$", said, flags=re.M)
    assert len(ratios) == 5 and all(float(wall) > 0 and float(cpu) > 0 for wall, cpu in ratios), said


@pytest.mark.slow  # ~20 s on 2 loaded cores: 2 PDFs read by kb add's child process, 2 trees, 2 runs each
def test_bench_startup_measures_pdf_reads_now_and_before(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_startup", monkeypatch, capsys, "--pdfs", "2", "--rounds", "1", "--before", "HEAD")
    rows = re.findall(rf"^read (\S+\.pdf) \| now +wall median ({NUMBER}) s .+ cpu median ({NUMBER}) s$", said,
                      flags=re.M)
    assert len(rows) == 2 and all(float(wall) > 0 and float(cpu) > 0 for _, wall, cpu in rows), said
    ratios = re.findall(rf"^all 2 PDFs, (wall|cpu): median now/before ({NUMBER}), summed medians now/before "
                        rf"({NUMBER})$", said, flags=re.M)
    assert [kind for kind, _, _ in ratios] == ["wall", "cpu"] and all(float(r) > 0 for _, *rs in ratios for r in rs)


@pytest.mark.slow  # ~90 s on 2 loaded cores: trains the smallest built-in model and runs a depth probe
def test_bench_costs_prints_each_workload_in_probes(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_costs", monkeypatch, capsys, "--rounds", "1")
    rows = re.findall(rf"^  (.+?) +({NUMBER}) probes = +({NUMBER}) reference s$", said, flags=re.M)
    assert {"loading torch", "loading transformers", "loading matplotlib"} <= {name for name, _, _ in rows}, said
    reference = _value(said, rf"reference probe ({NUMBER}) s")
    for name, probes, seconds in rows:  # reference seconds are the multiple times the reference probe
        assert float(probes) > 0 and float(seconds) == pytest.approx(float(probes) * reference, rel=0.01), name


@pytest.fixture
def app_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench_app sets the app's environment in its process: restored after the test."""
    _restored_after(monkeypatch, "KB_PAPERS", "KB_HOME", "KB_APP_WORKER", "KB_DATABASE_URL")


@pytest.mark.slow  # ~10 s on 2 loaded cores: builds 20 notes and runs some through the worker, then AppTest
@pytest.mark.usefixtures("app_environment")
def test_bench_app_renders_a_small_library(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """20 notes fit one page: the Library has no pager, so page 2 is not timed (it once raised KeyError)."""
    said = _run("bench_app", monkeypatch, capsys, "--n", "20", "--verified", "0.3", "--repeats", "1")
    assert _value(said, rf"build stale claims +({NUMBER})") > 0
    for step in ("first (new process)", "cold", "warm", "filter (tag)", "search"):
        assert _value(said, rf"render {re.escape(step)} +({NUMBER}) s") > 0, step
    assert "render next page" not in said
    assert _value(said, rf"warm / cold +({NUMBER})") > 0


@pytest.mark.slow  # ~2 minutes on 2 loaded cores: every page in a new process, bundled and generated notes
@pytest.mark.usefixtures("app_environment")
def test_bench_app_pages_times_every_page(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Every page over the bundled notes and over 3 generated ones, of which one is verified and its evidence
    made stale (a tenth of 3 notes was none: the build stopped, no evidence to make stale)."""
    said = _run("bench_app", monkeypatch, capsys, "--pages", "--pages-n", "3", "--repeats", "1")
    generated = said[said.index("3 generated notes"):]
    for page in ("library", "runs", "compare", "tensions", "edit_note", "ask"):
        for part in (said[:len(said) - len(generated)], generated):
            cold = _value(part, rf"  {page} +cold +({NUMBER}) s")
            assert cold > 0 and _value(part, rf"  {page} +cold +{NUMBER} s +warm +({NUMBER}) s") > 0, page
    assert len(re.findall(r"^  note note-", generated, flags=re.M)) == 3


@pytest.mark.slow  # ~45 s on 2 loaded cores: 4 measurements of worker processes importing kb, a PostgreSQL server
@pytest.mark.postgres
@needs_postgres
def test_bench_queue_runs_every_queued_run_on_sqlite_and_postgresql(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    said = _run("bench_queue", monkeypatch, capsys, "--n", "6", "--repeats", "1", "--workers", "1", "2",
                "--postgres")  # its measurement asserts that every queued run was done
    measured = json.loads(said.strip().splitlines()[-1])
    assert {(m["database"], m["workers"]) for m in measured} == {(db, w) for db in ("sqlite", "postgresql")
                                                                for w in (1, 2)}
    assert all(m["runs_per_s"] > 0 for m in measured)


@pytest.mark.slow  # ~25 s on 2 loaded cores: a local Ray instance starts, 100 runs
@pytest.mark.ray
def test_bench_queue_compares_with_a_base_checkout_and_measures_ray(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``--base`` (this checkout again, as a base) puts each base measurement beside this one's; ``--ray``."""
    pytest.importorskip("ray")
    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))  # the Ray part prepends the checkout to it
    said = _run("bench_queue", monkeypatch, capsys, "--n", "4", "--repeats", "1", "--workers", "1",
                "--base", str(root), "--ray")
    against = _value(said, rf"^sqlite +1 worker\(s\) this : +{NUMBER} runs/s +\(([-+]{NUMBER}) % against base")
    base = _value(said, rf"^sqlite +1 worker\(s\) base : +({NUMBER}) runs/s")
    assert base > 0 and against > -100
    assert _value(said, rf"^ray executor \(noop\): +({NUMBER}) runs/s") > 0


@pytest.mark.slow  # ~25 s on 2 loaded cores: Slurm jobs start a Python each
@pytest.mark.slurm
@pytest.mark.postgres
@needs_postgres
def test_bench_cluster_times_the_three_setups(slurm_cluster: str, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # the benchmark sets them in this process for its S3 server
    _restored_after(monkeypatch, "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
    said = _run("bench_cluster", monkeypatch, capsys, "--repeats", "1")
    local = _value(said, rf"local \+ folder +({NUMBER}) ms")
    assert local > 0
    for setup in ("local \\+ S3", "Slurm \\+ S3"):
        assert _value(said, rf"{setup} +{NUMBER} ms +x +({NUMBER}) of local") > 0, setup
    assert _value(said, rf"S3 store +{NUMBER} ms +x +({NUMBER}) of the folder store") > 0


def test_bench_estimates_reports_each_runs_ratio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Two noop runs at its smoke scale (a declared time: estimated), one at a custom scale never timed here
    (no estimate: left out, as the demo's long runs are)."""
    papers = tmp_path / "papers"
    papers.mkdir()
    scales = ["scale: smoke, ", "scale: smoke, ", ""]
    (papers / "estimates.md").write_text(
        '---\npaper_id: "bench:estimates"\ntitle: "Estimates"\nclaims:\n'
        + "".join(f'  - id: c{i}\n    statement: "The value is above two."\n'
                  f"    analyzer: {{name: noop, {scale}params: {{value: {3 + i}}}}}\n"
                  '    expect: {metric: value, op: ">", value: 2}\n' for i, scale in enumerate(scales))
        + "---\n", encoding="utf-8")
    said = _run("bench_estimates", monkeypatch, capsys, "--rounds", "2", "--papers", str(papers))
    for round_number in (1, 2):
        assert f"round {round_number}: 2 quick run(s); left out: 1" in said, said
        assert re.search(rf"round {round_number}: [0-2]/2 within 2x", said), said
    ratios = [float(r) for r in re.findall(rf"ratio +({NUMBER})", said)]
    assert len(ratios) == 4 and all(r > 0 for r in ratios), said


CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "pdfs"
needs_corpus = pytest.mark.skipif(not (CORPUS / "sandwich.pdf").exists(),
                                  reason="the PDF corpus is missing: benchmarks/data/pdfs/")


@needs_corpus
def test_bench_add_reports_a_tuning_article_per_field(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The table and its totals for one short tuning article (tests/test_real_pdfs.py holds the corpus's
    accuracy; this is the report around it)."""
    said = _run("bench_add", monkeypatch, capsys, "--half", "tuning", "--articles", "gdata-unknown")
    [row] = re.findall(r"^gdata-unknown +tuning +\d+ +(.+)$", said, flags=re.M)
    marks = row.split()
    assert len(marks) == 9 and set(marks) <= {"ok", "XX", "-"}, row
    whole = _value(said, r"^tuning \(1\) +whole (\d) ")
    assert whole == (set(marks) == {"ok"})  # whole: every field right
    assert _value(said, rf"time per page: ({NUMBER}) ms") > 0
    # --totals drops the rows, not what the totals are over
    report = json.loads(_run("bench_add", monkeypatch, capsys, "--half", "tuning", "--articles", "gdata-unknown",
                             "--json", "--totals"))  # fmt: skip
    assert report["articles"] == [] and report["all"]["n"] == report["halves"]["tuning"]["n"] == 1
    assert report["all"]["whole"] == whole


def test_bench_add_reads_the_validation_batch_only_when_asked_for(tmp_path: Path) -> None:
    """A plain run (the floors', a tuning run's) never reads a validation article; ``--half validation`` reads
    only those, and ``--articles`` reads the ones it names whatever their half."""
    bench_add = load_benchmark("bench_add")
    for name, split in (("first", None), ("tuned", "tuning"), ("kept", "held-out"), ("unseen", "validation"),
                        ("fresh", "validation")):
        truth = {"title": name} if split is None else {"title": name, "split": split}
        (tmp_path / f"{name}.truth.json").write_text(json.dumps(truth), encoding="utf-8")

    def names(half: str | None = None, articles: set[str] | None = None) -> list[str]:
        return [pdf.stem for pdf, _ in bench_add.selected(half, articles, corpus=tmp_path)]

    assert names() == ["first", "kept", "tuned"]  # a truth naming no half is a tuning article
    assert names("tuning") == ["first", "tuned"] and names("held-out") == ["kept"]
    assert names("validation") == ["fresh", "unseen"]
    assert names(articles={"unseen", "tuned"}) == ["tuned", "unseen"]
    assert names("tuning", {"unseen", "tuned"}) == ["tuned"]


@needs_corpus
def test_every_corpus_article_names_a_known_half_and_a_plain_run_reads_no_validation_article() -> None:
    """Only the truth files' ``split`` is read here (no held-out or validation PDF is opened)."""
    bench_add = load_benchmark("bench_add")
    splits = [bench_add.split_of(json.loads(path.read_text(encoding="utf-8")))
              for path in CORPUS.glob("*.truth.json")]
    # (between a held-out half's retirement and a fresh one's truth, the corpus may hold tuning articles only)
    assert set(splits) <= set(bench_add.SPLITS) and "tuning" in splits
    assert all(bench_add.split_of(truth) != "validation" for _, truth in bench_add.selected())
    assert len(bench_add.selected()) == len(splits) - splits.count("validation")


@needs_corpus
def test_bench_add_with_the_learned_year_says_what_it_filled(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """--learned-year: the totals also say how many years the fallback filled and the rules alone had right (a
    rule's year is never replaced: where nothing was filled, the two counts are one)."""
    args = ("--half", "tuning", "--articles", "gdata-unknown,elsarticle-1p", "--learned-year")
    report = json.loads(_run("bench_add", monkeypatch, capsys, *args, "--json", "--totals"))
    tuning = report["halves"]["tuning"]
    learned = tuning["learned_year"]
    assert tuning["n"] == 2 and 0 <= learned["filled_right"] <= learned["filled"] <= 2
    if learned["filled"] == 0:
        assert learned["year_right_by_rules_alone"] == tuning["right"]["year"]
    said = _run("bench_add", monkeypatch, capsys, *args, "--totals")
    assert re.search(r"learned year: filled \d, right \d; year right by the rules alone \d/2", said), said


@needs_corpus
@pytest.mark.slow  # ~6 s on 2 loaded cores: one article read and drafted twice, and the labelled passages
def test_bench_drafter_reports_an_articles_results_claims_and_the_labelled_set(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Every part of the report on one tuning article: its worked results (no held-out article is read: the
    held-out half's table is empty), its marked claims, and the labelled passages."""
    said = _run("bench_drafter", monkeypatch, capsys, "--articles", "sandwich")
    assert "Worked results, tuning half (1 articles" in said and "Worked results, held-out half (0 articles" in said
    rows = re.findall(rf"^sandwich +\d+ +(\d+) +(\d+) +(\d+) +({NUMBER}) +({NUMBER}) ", said, flags=re.M)
    assert len(rows) == 2, said  # the worked results', the claims'
    for drafted, marked, hit, precision, recall in rows:
        assert int(hit) <= min(int(drafted), int(marked))
        assert float(precision) == pytest.approx(int(hit) / max(int(drafted), 1), abs=0.005)
        assert float(recall) == pytest.approx(int(hit) / int(marked) if int(marked) else 1.0, abs=0.005)
    assert "Labelled protein-model passages" in said
    for line in ("tuning set (micro)", "held-out set (micro)", "all (micro)"):
        precision, recall = (_value(said, rf"{re.escape(line)} +\d+ +\d+ +\d+ +({NUMBER})"),
                             _value(said, rf"{re.escape(line)} +\d+ +\d+ +\d+ +{NUMBER} +({NUMBER})"))
        assert 0 <= precision <= 1 and 0 <= recall <= 1, line


@pytest.fixture
def torch_threads() -> Iterator[None]:
    """bench_langevin sets torch's thread count for its process: restored after the test."""
    import torch

    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


LANGEVIN_TINY = ["--device", "cpu", "--sections", "chains,groups,analyzer,training,equilibrium,replicas,steps,design",
                 "--models", "T1-d26", "--steps", "2", "--repeats", "1", "--chains", "4", "--mass-rank", "8",
                 "--ess-model", "T1-d26", "--chain-steps", "40", "--energy-every", "2", "--pretrain-steps", "5",
                 "--replicas", "2", "--replicas-on-cpu", "--design-n", "8", "--design-chains", "4",
                 "--design-burn-in", "20", "--design-shards", "2", "--shard-chains", "4", "--shard-n", "8",
                 "--shard-burn-in", "20", "--analyzer-steps", "6", "--analyzer-sizes", "60,10,20",
                 "--groups-scale", "smoke", "--training-runs", "2", "--training-models", "T1-d26",
                 "--variance-batches", "2", "--variance-every", "1"]  # fmt: skip


@pytest.mark.slow  # ~40-80 s on 2 loaded cores: every section, tiny (gpu_check.sh --cpu runs three of them)
@pytest.mark.usefixtures("torch_threads")
def test_bench_langevin_runs_every_section(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The design on 4 chains, fewer than its 8 temperature levels (it once never sampled: NaN weights)."""
    said = _run("bench_langevin", monkeypatch, capsys, *LANGEVIN_TINY)
    assert _value(said, rf"speed-up over one chain at a time: batched ({NUMBER})x") > 0
    assert _value(said, rf"one call / per group, eager: ({NUMBER})x") > 0
    assert _value(said, rf"background checkpoints / checkpoints in the loop: ({NUMBER})x") > 0
    assert _value(said, rf"batched / one at a time \(nn.Module\): ({NUMBER})x") > 0
    samplers = re.findall(rf"^  (kb|kb-cov|plain) +({NUMBER}) +({NUMBER}) +({NUMBER}) +{NUMBER} +({NUMBER})$",
                          said, flags=re.M)
    assert [name for name, *_ in samplers] == ["kb", "kb-cov", "plain"], said
    for name, steps, ess, ess_per_s, kinetic in samplers:
        # the thermostat holds the kinetic temperature near T; the ESS counts at least one sample
        assert float(steps) > 0 and float(ess) >= 1 and float(ess_per_s) > 0 and 0.5 < float(kinetic) < 2, name
    assert _value(said, rf"batched {NUMBER} ms per step: speed-up ({NUMBER})x") > 0
    assert _value(said, rf"pL constrained +{NUMBER} steps/s \(({NUMBER})x\)") > 0
    # the sharded design gives the same sequences on any worker count; the design keeps the composition
    assert "same sequences on every worker count: True" in said
    assert "(1UBI, burn-in 20 sweeps, not the calibrated 8000)" in said and "composition exact: True" in said
    energies = re.search(r"^ +<E> .*$", said, flags=re.M)  # a level no chain visited reads '-', not nan
    assert energies is not None and "nan" not in energies.group(0), said


def test_langevin_relaxation_reads_known_autocorrelation_times_and_a_gap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A sample cache of AR(1) chains (phi 0.8: tau = 9 draws of 10 steps) whose starts sit 3 sd apart: the
    autocorrelation times come out near 90 steps, the gap near 3 sd and R-hat far above 1.1."""
    from analyzers.langevin.store import save_plain

    every, draws = 10, 8000
    ot, es = ar1(np.random.default_rng(7), 0.8, draws, shift=3.0)  # the last chain 3 sd up: ES's
    for start, losses in (("ES", es), ("OT", ot)):
        records = {"name": f"transformer@{start}", "temperature": 1e-4, "steps": every * draws,
                   "energies": [(every * (i + 1), float(loss)) for i, loss in enumerate(losses)]}
        save_plain({"records": records, "done": True}, tmp_path / f"{start}.pt")
    save_plain({"records": {}, "done": False}, tmp_path / "running.pt")  # a chain not finished: not read
    said = _run("langevin_relaxation", monkeypatch, capsys, str(tmp_path))
    geyer = [float(t.replace(",", "")) for t in re.findall(rf"\(bulk\), ({NUMBER}) \(Geyer\)", said)]
    assert len(geyer) == 2 and all(70 < tau < 110 for tau in geyer), said  # 9 draws x 10 steps
    gap = _value(said, rf"second half: R-hat {NUMBER}, bulk ESS {NUMBER}; gap \+{NUMBER} \(\+({NUMBER}) sd\)")
    assert 2.5 < gap < 3.5, said
    assert _value(said, rf"second half: R-hat ({NUMBER})") > 1.5
    # the chain length: 2 x 35 autocorrelation times
    lengths = re.search(r"\(Geyer\) ([0-9,]+)-([0-9,]+) steps: .* chains of ~([0-9,]+)-([0-9,]+) steps", said)
    assert lengths is not None, said
    taus = [float(g.replace(",", "")) for g in lengths.groups()]
    assert taus[2] == pytest.approx(70 * taus[0], rel=0.02) and taus[3] == pytest.approx(70 * taus[1], rel=0.02)
