"""Evidence that travels: ``kb evidence export`` and ``kb evidence import`` between two KB homes (the real CLI, in
process; real SQLite and PostgreSQL; the noop analyzer), every verdict the importer's own, every bad bundle
refused in one line with nothing imported."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kb.core import KnowledgeBase
from kb.settings import Settings
from tests.helpers.app_env import AppEnv, open_app
from tests.helpers.cli import run_kb

NOTE = ('---\npaper_id: "t:bundle"\ntitle: "Bundles"\nclaims:\n'
        '  - id: c\n    statement: "s"\n    analyzer: {name: noop, params: {value: 3, plot: true}}\n'
        '    expect: {metric: value, op: ">", value: 2}\n'
        '  - id: d\n    statement: "t"\n    analyzer: {name: noop, params: {value: 7}}\n'
        '    expect: {metric: value, op: "<", value: 10}\n---\n')


def _papers(folder: Path, note: str = NOTE) -> Path:
    folder.mkdir(parents=True)
    (folder / "b.md").write_text(note, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A KB home with one run per claim, and its evidence exported as a bundle folder: (papers, home, bundle)."""
    root = tmp_path_factory.mktemp("made")
    papers, home = _papers(root / "papers"), root / "home"
    verified = run_kb(papers, home, "verify", "b")
    assert verified.returncode == 0, verified.stderr
    exported = run_kb(papers, home, "evidence", "export", "--all", "-o", str(root / "bundle"))
    assert exported.returncode == 0, exported.stderr
    return papers, home, root / "bundle"


def _evidence(papers: Path, home: Path, claim: str, *more: str) -> list[dict[str, Any]]:
    shown = run_kb(papers, home, "evidence", claim, "--json", *more)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def _judged(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["run_id"], r["verdict"]["kind"], r["verdict"]["reason"], r["verdict"]["observed"], r["metrics"]["value"],
             r["stale"]) for r in records]


def _rewrite(bundle: Path, path: str, change: Callable[[bytes], bytes], *, relist: bool = True) -> None:
    """Change one file of a bundle folder; ``relist``: update its size and checksum in the manifest too."""
    target = bundle / path
    target.write_bytes(change(target.read_bytes()))
    if relist:
        manifest = json.loads((bundle / "manifest.json").read_text())
        for entry in (f for run in manifest["runs"] for f in run["files"] if f["path"] == path):
            data = target.read_bytes()
            entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
        (bundle / "manifest.json").write_text(json.dumps(manifest))


def _edit_json(change: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def edit(raw: bytes) -> bytes:
        data = json.loads(raw)
        change(data)
        return json.dumps(data).encode()
    return edit


def _record_of(bundle: Path, claim: str) -> str:
    manifest = json.loads((bundle / "manifest.json").read_text())
    run = next(r for r in manifest["runs"] if r["claim_key"] == claim)
    return next(f["path"] for f in run["files"] if f["role"] == "record")


def test_export_import_round_trip_sqlite_same_verdicts_and_where_made(made: tuple[Path, Path, Path],
                                                                        tmp_path: Path) -> None:
    papers, home, _ = made
    bundle = tmp_path / "lab.tar.gz"
    assert run_kb(papers, home, "evidence", "export", "--claim", "b#c", "-o", str(bundle)).returncode == 0
    assert run_kb(papers, home, "evidence", "export", "--claim", "b#c", "-o", str(bundle)).returncode == 1, \
        "an existing path is never written over"
    other_papers, other = _papers(tmp_path / "papers2"), tmp_path / "home2"
    imported = run_kb(other_papers, other, "evidence", "import", str(bundle))
    assert imported.returncode == 0, imported.stderr
    assert "supported" in imported.stdout and "imported 1 run(s)" in imported.stdout

    here, there = _evidence(papers, home, "b#c"), _evidence(other_papers, other, "b#c")
    assert _judged(there) == _judged(here)
    assert there[0]["provenance"]["imported_from"] == "lab.tar.gz" and here[0]["provenance"]["imported_from"] is None
    for key in ("device", "host", "kb_version", "git_commit", "packages", "started_at", "finished_at"):
        assert there[0]["provenance"][key] == here[0]["provenance"][key], key
    # the figure and the log arrive byte for byte, under the same content-addressed names
    assert sorted(there[0]["artifacts"]) == sorted(here[0]["artifacts"])
    png = next(a for a in there[0]["artifacts"] if a.endswith(".png"))
    assert (other / png).read_bytes() == (home / png).read_bytes() and (other / png).read_bytes()[:4] == b"\x89PNG"

    said = run_kb(other_papers, other, "evidence", "b#c")
    assert "made elsewhere" in said.stdout and "regenerated on cpu" in said.stdout
    shown = json.loads(run_kb(other_papers, other, "show", "b", "--json").stdout)[0]
    made_elsewhere = {c["id"]: c["made_elsewhere"] for c in shown["claims"]}
    assert made_elsewhere["c"].startswith("regenerated on cpu") and made_elsewhere["d"] is None

    again = run_kb(other_papers, other, "evidence", "import", str(bundle))
    assert again.returncode == 0 and "1 run(s) already here" in again.stdout

    # the rebuild keeps imported evidence (its record lies in the store beside the runs' own)
    for path in other.glob("index.sqlite*"):
        path.unlink()
    assert run_kb(other_papers, other, "index", "--rebuild").returncode == 0
    rebuilt = _evidence(other_papers, other, "b#c")
    assert _judged(rebuilt) == _judged(here) and rebuilt[0]["provenance"]["imported_from"] == "lab.tar.gz"

    rerun = run_kb(other_papers, other, "verify", "--rerun", here[0]["run_id"])
    assert rerun.returncode == 0, rerun.stderr
    after = _evidence(other_papers, other, "b#c")
    assert len(after) == 2 and after[0]["provenance"]["imported_from"] is None and after[1]["stale"]


@pytest.mark.postgres
def test_export_import_round_trip_sqlite_to_postgres(made: tuple[Path, Path, Path], tmp_path: Path,
                                                     pg_database: str) -> None:
    papers, home, bundle = made
    other_papers = _papers(tmp_path / "papers2")
    imported = run_kb(other_papers, tmp_path / "home2", "evidence", "import", str(bundle), "--db", pg_database)
    assert imported.returncode == 0, imported.stderr
    for claim in ("b#c", "b#d"):
        there = _evidence(other_papers, tmp_path / "home2", claim, "--db", pg_database)
        assert _judged(there) == _judged(_evidence(papers, home, claim))


def test_import_judges_by_the_importers_rule_never_the_bundles(made: tuple[Path, Path, Path], tmp_path: Path) -> None:
    papers, _, pristine = made
    bundle = tmp_path / "bundle"
    shutil.copytree(pristine, bundle)

    def forge(record: dict[str, Any]) -> None:  # a verdict and state planted beside metrics that refute the claim
        record["evidence"].update(verdict_json=json.dumps({"kind": "supported", "reason": "trust me"}),
                                  verdict_kind="supported", stale=False)
        record["evidence"]["metrics_json"] = json.dumps({**json.loads(record["evidence"]["metrics_json"]),
                                                         "value": 1.0})
    _rewrite(bundle, _record_of(bundle, "b#c"), _edit_json(forge))
    other_papers = _papers(tmp_path / "papers2")
    assert run_kb(other_papers, tmp_path / "home2", "evidence", "import", str(bundle)).returncode == 0
    (got,) = _evidence(other_papers, tmp_path / "home2", "b#c")
    assert got["verdict"]["kind"] == "refuted" and "trust me" not in got["verdict"]["reason"]

    # the honest bundle, in a library whose claim expects more: refuted by this library's own expectation
    stricter = _papers(tmp_path / "papers3", NOTE.replace('op: ">", value: 2', 'op: ">", value: 5'))
    assert run_kb(stricter, tmp_path / "home3", "evidence", "import", str(pristine)).returncode == 0
    (got,) = _evidence(stricter, tmp_path / "home3", "b#c")
    assert got["verdict"]["kind"] == "refuted" and got["verdict"]["observed"] == 3


def _tar(bundle: Path, out: Path, extra: Callable[[tarfile.TarFile], None] | None = None) -> Path:
    with tarfile.open(out, "w:gz") as tar:
        for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
            tar.add(path, arcname=path.relative_to(bundle).as_posix())
        if extra is not None:
            extra(tar)
    return out


def _member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"{}") -> Callable[[tarfile.TarFile], None]:
    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type = kind
        if kind == tarfile.SYMTYPE:
            info.linkname = "/etc/passwd"
        if kind == tarfile.LNKTYPE:
            info.linkname = "manifest.json"
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return add


def _set_claim(claim: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["run"]["claim_key"] = record["evidence"]["claim_key"] = claim
    return change


def _set_analyzer(record: dict[str, Any]) -> None:
    record["run"]["analyzer"] = record["evidence"]["analyzer"] = "ghost"
    record["evidence"]["provenance_json"] = record["evidence"]["provenance_json"].replace('"noop"', '"ghost"')


def _manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[Path, Path], Path]:
    def case(bundle: Path, _: Path) -> Path:
        _rewrite(bundle, "manifest.json", _edit_json(change), relist=False)
        return bundle
    return case


def _relabel(bundle: Path, claim: str | None = None, analyzer: str | None = None) -> None:
    """The manifest's entry for run d follows an edit of its record (so only the edit itself is wrong)."""
    def change(manifest: dict[str, Any]) -> None:
        run = next(r for r in manifest["runs"] if r["claim_key"] == "b#d")
        run.update({k: v for k, v in (("claim_key", claim), ("analyzer", analyzer)) if v is not None})
    _rewrite(bundle, "manifest.json", _edit_json(change), relist=False)


def _unknown_claim(bundle: Path, _: Path) -> Path:
    _rewrite(bundle, _record_of(bundle, "b#d"), _edit_json(_set_claim("b#nope")))
    _relabel(bundle, claim="b#nope")
    return bundle


def _unknown_analyzer(bundle: Path, _: Path) -> Path:
    _rewrite(bundle, _record_of(bundle, "b#d"), _edit_json(_set_analyzer))
    _relabel(bundle, analyzer="ghost")
    return bundle


def _png(bundle: Path) -> str:
    return next(p.relative_to(bundle).as_posix() for p in bundle.rglob("*.png"))


def _symlink(bundle: Path, _: Path) -> Path:
    (bundle / "runs" / "link.json").symlink_to("/etc/hostname")
    return bundle


def _unlisted(bundle: Path, _: Path) -> Path:
    (bundle / "runs" / "extra.json").write_text("{}")
    return bundle


def _not_png(bundle: Path, _: Path) -> Path:
    _rewrite(bundle, _png(bundle), lambda raw: b"#!/bin/sh\necho pwned\n")
    return bundle


def _checksum(bundle: Path, _: Path) -> Path:
    _rewrite(bundle, _png(bundle), lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]), relist=False)
    return bundle


def _as_is(bundle: Path, _: Path) -> Path:
    return bundle


def _garbage(_: Path, tmp_path: Path) -> Path:
    (tmp_path / "x.tar.gz").write_bytes(b"\x1f\x8b not a gzip stream")
    return tmp_path / "x.tar.gz"


def _text_escapes(bundle: Path, _: Path) -> Path:
    texts = next(p for p in bundle.rglob("texts.json"))
    _rewrite(bundle, texts.relative_to(bundle).as_posix(), _edit_json(lambda t: t.update({"../../x.txt": "x"})))
    return bundle


def _text_as_figure(bundle: Path, _: Path) -> Path:
    """A text file named as a plot: the app would show it as an image (an SVG: markup, in the page)."""
    texts = next(p for p in bundle.rglob("texts.json"))
    svg = "<svg xmlns='http://www.w3.org/2000/svg'><image href='http://127.0.0.1:9/i.png'/></svg>"
    _rewrite(bundle, texts.relative_to(bundle).as_posix(), _edit_json(lambda t: t.update({"plot.svg": svg})))
    return bundle


def _renamed_artifact(name: str) -> Callable[[dict[str, Any]], None]:
    """The manifest stores a checked JSON file under ``name``: the check is on one kind, the use another's."""
    def change(manifest: dict[str, Any]) -> None:
        entry = next(f for run in manifest["runs"] for f in run["files"] if f["path"].endswith(".json")
                     and f["role"] == "artifact")
        entry["artifact"] = name
    return change


def _pax_bomb(size: int) -> Callable[[Path, Path], Path]:
    """A tar whose one extended (pax) header holds ``size`` bytes: no member is big, but tarfile reads the
    header whole into memory (several copies); a gzip of 4 MB of it is a few kB, of 4 GB a few MB."""
    def case(bundle: Path, tmp_path: Path) -> Path:
        def add(tar: tarfile.TarFile) -> None:
            info = tarfile.TarInfo("runs/pad")
            info.type = tarfile.DIRTYPE
            info.pax_headers = {"comment": "a" * size}
            tar.addfile(info)
        out = _tar(bundle, tmp_path / "bomb.tgz", add)
        assert out.stat().st_size < 100_000
        return out
    return case


def _not_json(bundle: Path, _: Path) -> Path:
    (bundle / "manifest.json").write_text("{not json")
    return bundle


REFUSALS: dict[str, tuple[Callable[[Path, Path], Path], str, dict[str, str]]] = {
    "malformed manifest": (_not_json, "not valid JSON", {}),
    "manifest missing a field": (_manifest(lambda m: m.pop("kb_version")), "field 'kb_version'", {}),
    "manifest with a verdict field": (_manifest(lambda m: m.update(verdict="supported")), "field 'verdict'", {}),
    "newer schema": (_manifest(lambda m: m.update(schema_version=99, future=True)), "newer than this kb", {}),
    "checksum mismatch": (_checksum, "checksum mismatch", {}),
    "unlisted file": (_unlisted, "not listed in manifest.json", {}),
    "not a PNG": (_not_png, "not a PNG", {}),
    "unknown claim": (_unknown_claim, "claim 'b#nope' is not in this library", {}),
    "unknown analyzer": (_unknown_analyzer, "analyzer 'ghost' is not registered here", {}),
    "file too big": (_as_is, "over the 200-byte limit of a bundle file", {"KB_BUNDLES__MAX_FILE_BYTES": "200"}),
    "bundle too big": (_as_is, "over the 6,000-byte limit of a bundle", {"KB_BUNDLES__MAX_TOTAL_BYTES": "6000"}),
    "too many files": (_as_is, "more than 4 entries", {"KB_BUNDLES__MAX_FILES": "4"}),
    "a text file's name escapes": (_text_escapes, "a path outside the bundle", {}),
    "a text file named as a figure": (_text_as_figure, "'plot.svg' is not a text file's name", {}),
    "a JSON file stored as a PNG": (_manifest(_renamed_artifact("metrics.png")), "stored as 'metrics.png'", {}),
    "a JSON file stored as a checkpoint": (_manifest(_renamed_artifact("model.pt")), "stored as 'model.pt'", {}),
    "symlink in a folder": (_symlink, "a link or device", {}),
    "tar with ..": (lambda b, t: _tar(b, t / "b.tgz", _member("../evil.json")), "a path outside the bundle", {}),
    "tar with an absolute path": (lambda b, t: _tar(b, t / "b.tgz", _member("/tmp/evil.json")),
                                  "a path outside the bundle", {}),
    "tar with a symlink": (lambda b, t: _tar(b, t / "b.tgz", _member("runs/x.json", tarfile.SYMTYPE)),
                           "a link or device", {}),
    "tar with a device": (lambda b, t: _tar(b, t / "b.tgz", _member("runs/dev", tarfile.CHRTYPE)),
                          "a link or device", {}),
    "tar with a hard link": (lambda b, t: _tar(b, t / "b.tgz", _member("runs/x.json", tarfile.LNKTYPE)),
                             "a link or device", {}),
    "tar over the bound once decompressed": (_pax_bomb(4_000_000), "over the 1,000,000-byte limit of a bundle",
                                             {"KB_BUNDLES__MAX_TOTAL_BYTES": "1000000",
                                              "KB_BUNDLES__MAX_FILES": "50"}),
    "tar with a huge pax header": (_pax_bomb(4_000_000), "a tar header of 4,000,", {}),
    "not a bundle": (_garbage, "neither a bundle folder nor a readable .tar.gz", {}),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_import_refuses_a_bad_bundle_in_one_line_with_nothing_imported(case: str, made: tuple[Path, Path, Path],
                                                                       tmp_path: Path) -> None:
    _, _, pristine = made
    spoil, says, env = REFUSALS[case]
    bundle = spoil(Path(shutil.copytree(pristine, tmp_path / "bundle")), tmp_path)
    papers, home = _papers(tmp_path / "papers2"), tmp_path / "home2"
    refused = run_kb(papers, home, "evidence", "import", str(bundle), env=env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "nothing imported" in lines[0] and says in lines[0], refused.stderr
    for claim in ("b#c", "b#d"):  # the good run of the bundle did not land either
        assert _evidence(papers, home, claim) == []
    assert not (home / "runs").exists() and not (home / "evidence").exists()
    assert not any((home / "tmp").iterdir()) if (home / "tmp").exists() else True


def test_import_takes_a_bundle_tarred_by_gnu_tar(made: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, _, pristine = made
    bundle = tmp_path / "by-hand.tgz"  # GNU tar names './' and './manifest.json': the top folder is no escape
    subprocess.run(["tar", "czf", str(bundle), "-C", str(pristine), "."], check=True)
    papers = _papers(tmp_path / "papers2")
    imported = run_kb(papers, tmp_path / "home2", "evidence", "import", str(bundle))
    assert imported.returncode == 0 and "imported 2 run(s)" in imported.stdout, imported.stderr


def test_app_claim_card_says_where_imported_evidence_was_made(app_env: AppEnv, tmp_path: Path) -> None:
    lab = KnowledgeBase(Settings(papers=app_env.papers, home=tmp_path / "lab"))
    queued, _ = lab.verify(["noop-note"])
    assert lab.work() == {"succeeded": 1}
    lab.export_evidence(tmp_path / "lab-bundle", [queued[0].id])
    assert app_env.kb.import_evidence(tmp_path / "lab-bundle").added == [queued[0].id]
    at = open_app("note", id="noop-note")
    made = [c.value for c in at.caption if "Made elsewhere" in c.value]
    assert len(made) == 1 and "regenerated on cpu" in made[0] and "lab-bundle" in made[0], made
    assert f"kb verify --rerun {queued[0].id}" in made[0]


def test_import_never_reads_checkpoints_a_bundle_carries(made: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, _, pristine = made
    bundle = Path(shutil.copytree(pristine, tmp_path / "bundle"))
    manifest = json.loads((bundle / "manifest.json").read_text())
    run = manifest["runs"][0]
    blob = b"\x80\x04\x95 a pickle kb must never load"
    (bundle / "runs" / run["run_id"] / "checkpoints").mkdir()
    (bundle / "runs" / run["run_id"] / "checkpoints" / "model.pt").write_bytes(blob)
    run["files"].append({"path": f"runs/{run['run_id']}/checkpoints/model.pt", "role": "checkpoint",
                         "artifact": "model.pt", "sha256": hashlib.sha256(blob).hexdigest(), "size": len(blob)})
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    papers, home = _papers(tmp_path / "papers2"), tmp_path / "home2"
    imported = run_kb(papers, home, "evidence", "import", str(bundle))
    assert imported.returncode == 0 and "1 checkpoint file(s) not imported" in imported.stdout, imported.stderr
    assert not [p for p in home.rglob("*") if p.is_file() and p.read_bytes() == blob]
    assert all(not a.endswith("model.pt") for a in _evidence(papers, home, run["claim_key"])[0]["artifacts"])


def test_demo_imports_the_bundles_the_notes_folder_ships_and_shows_them_beside_here(
        made: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """`kb demo` imports the bundles in the notes folder's evidence/ (a lab's GPU runs, committed beside the notes)
    before it runs anything; a claim they settle is not run again, and its verdict is shown with where it was
    made beside what this machine gives; a broken bundle or a link is refused in one line and the demo goes on;
    a second demo imports nothing twice."""
    papers, home, _ = made
    shipped = _papers(tmp_path / "shipped")
    (shipped / "evidence").mkdir()
    lab = shipped / "evidence" / "lab.tar.gz"
    assert run_kb(papers, home, "evidence", "export", "--claim", "b#c", "-o", str(lab)).returncode == 0
    (shipped / "evidence" / "broken.tar.gz").write_bytes(b"not a tar")
    (shipped / "evidence" / "linked.tar.gz").symlink_to(lab)
    other = tmp_path / "home"

    first = run_kb(shipped, other, "demo")
    assert first.returncode == 0, first.stderr
    assert "evidence made elsewhere: evidence/lab.tar.gz: imported 1 run(s)" in first.stderr
    assert "evidence bundle refused evidence/broken.tar.gz" in first.stderr
    assert "evidence bundle refused evidence/linked.tar.gz: a link" in first.stderr
    table = first.stdout[first.stdout.index("evidence made elsewhere"):]
    assert "b#c" in table and "supported: regenerated on cpu" in table and "not run here" in table
    assert "b#d" not in table  # made here only
    ran = _evidence(shipped, other, "b#d")
    assert len(ran) == 1 and ran[0]["provenance"]["imported_from"] is None  # the demo ran what was not shipped
    assert len(_evidence(shipped, other, "b#c")) == 1  # the shipped run settled b#c: not run again

    second = run_kb(shipped, other, "demo")
    assert second.returncode == 0 and "imported" not in second.stderr
    assert "supported: regenerated on cpu" in second.stdout
