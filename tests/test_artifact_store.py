"""The artifact store: a folder by default, S3 through a real S3-protocol server (moto_server) on loopback."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from kb.evidence.artifact_store import ArtifactStore, evidence_key


def _run_output(folder: Path) -> dict[str, bytes]:
    files = {"plot.png": b"\x89PNG fake plot", "metrics.json": b'{"x": 1}',
             "checkpoints/depth-04/config.json": b'{"layers": 4}'}
    for relative, data in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)
    return files


def test_folder_store_keeps_the_single_machine_layout(tmp_path: Path) -> None:
    home, staging = tmp_path / "home", tmp_path / "home" / "staging" / "run-1"
    staging.mkdir(parents=True)
    files = _run_output(staging)
    store = ArtifactStore(home)
    keys = store.put_tree(staging)
    for relative, data in files.items():
        sha = hashlib.sha256(data).hexdigest()
        key = evidence_key(sha, relative)
        assert key in keys
        assert (home / key).read_bytes() == data  # readers that join the KB home and the key still work
        assert store.local_path(key) == home / key
    assert not any(staging.rglob("*.png")), "the staging folder's files were moved, not copied"
    assert not list(home.rglob("*.part-*")), "no temporary file is left behind"


def test_folder_store_never_rewrites_an_existing_key(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "home")
    source = tmp_path / "a.txt"
    source.write_bytes(b"same")
    key = evidence_key(hashlib.sha256(b"same").hexdigest(), "a.txt")
    store.put_file(source, key)
    stored = store.local_path(key)
    assert stored is not None
    before = stored.stat().st_mtime_ns
    time.sleep(0.01)
    store.put_file(source, key)
    assert stored.stat().st_mtime_ns == before


def test_store_rejects_keys_that_leave_it(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path / "home")
    with pytest.raises(ValueError, match="inside the store"):
        store.local_path("../../etc/passwd")
    with pytest.raises(ValueError, match="inside the store"):
        store.local_path("/etc/passwd")


def test_s3_store_round_trips_through_the_read_cache(tmp_path: Path, s3_url: str) -> None:
    writer_home, reader_home = tmp_path / "worker-home", tmp_path / "laptop-home"
    staging = writer_home / "staging" / "run-1"
    staging.mkdir(parents=True)
    files = _run_output(staging)
    keys = ArtifactStore(writer_home, s3_url).put_tree(staging)
    assert not (writer_home / "evidence").exists(), "nothing is kept on the worker's disk"

    reader = ArtifactStore(reader_home, s3_url)
    for key in keys:
        relative = key.split("/", 3)[3]
        path = reader.local_path(key)
        assert path is not None and path.read_bytes() == files[relative]
        assert reader_home / "cache" / "artifacts" in path.parents
    assert reader.local_path("evidence/00/missing/plot.png") is None


def test_s3_store_writes_a_key_once(tmp_path: Path, s3_url: str) -> None:
    import s3fs

    store = ArtifactStore(tmp_path / "home", s3_url)
    source = tmp_path / "a.txt"
    source.write_bytes(b"payload")
    key = evidence_key(hashlib.sha256(b"payload").hexdigest(), "a.txt")
    store.put_file(source, key)
    fs = s3fs.S3FileSystem()
    first = fs.info(f"{s3_url}/{key}")["LastModified"]
    time.sleep(1.1)  # S3 timestamps have one-second resolution
    store.put_file(source, key)
    assert fs.info(f"{s3_url}/{key}", refresh=True)["LastModified"] == first


def test_checkpoints_move_between_nodes_through_the_store(tmp_path: Path, s3_url: str) -> None:
    node_a, node_b = tmp_path / "node-a", tmp_path / "node-b"
    (node_a / "ckpt").mkdir(parents=True)
    (node_a / "ckpt" / "state.safetensors").write_bytes(b"step 10")
    store_a = ArtifactStore(node_a, s3_url)
    assert store_a.push_checkpoints("run-1", node_a / "ckpt") == 1
    assert store_a.push_checkpoints("run-1", node_a / "ckpt") == 0, "an unchanged checkpoint is not re-uploaded"
    (node_a / "ckpt" / "state.safetensors").write_bytes(b"step 20")
    assert store_a.push_checkpoints("run-1", node_a / "ckpt") == 1

    store_b = ArtifactStore(node_b, s3_url)
    assert store_b.pull_checkpoints("run-1", node_b / "resume") == 1
    assert (node_b / "resume" / "state.safetensors").read_bytes() == b"step 20"
    assert store_b.pull_checkpoints("run-2", node_b / "other") == 0
    store_b.drop_checkpoints("run-1")
    assert store_b.pull_checkpoints("run-1", node_b / "again") == 0


def test_a_checkpointing_analyzer_resumes_from_the_checkpoint_it_saved(tmp_path: Path) -> None:
    from analyzers import registry
    from analyzers.base import Cancelled, RunContext

    noop = registry.get("noop")
    params = noop.params_for({"steps": 6, "value": 2.0})
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    saved: list[int] = []

    def stop_after_three(fraction: float, message: str) -> None:
        if fraction >= 0.5:
            raise Cancelled("killed")  # a preempted job: nothing after step 3 happens

    with pytest.raises(Cancelled):
        noop.run(params, RunContext(out_dir=tmp_path / "a", progress=stop_after_three, checkpoint_dir=ckpt,
                                    on_checkpoint=lambda: saved.append(1)))
    assert len(saved) == 3
    (tmp_path / "b").mkdir()
    steps_seen: list[str] = []
    result = noop.run(params, RunContext(out_dir=tmp_path / "b", checkpoint_dir=ckpt,
                                         progress=lambda f, m: steps_seen.append(m)))
    assert steps_seen == ["step 4/6", "step 5/6", "step 6/6"]
    assert result.value == 2.0 and result.notes == ["resumed from a checkpoint at step 3"]


@pytest.mark.parametrize("key", ["/etc/hostname", "evidence/../../../../etc/hostname", "evidence//x", "a\\b",
                                 "evidence/a/\x00b"])
def test_s3_store_read_cache_takes_no_key_that_leaves_it(tmp_path: Path, s3_url: str, key: str) -> None:
    """A remote store reads through a cache under the KB home: a key must not make that cache a door to
    the rest of the disk (an absolute key joined to a folder is that key)."""
    store = ArtifactStore(tmp_path / "home", s3_url)
    for read in (store.local_path, store.exists, store.read_bytes, store.size):
        with pytest.raises(ValueError, match="inside the store"):
            read(key)
