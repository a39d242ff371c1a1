"""The pack cache: a start-up shortcut that must never show a pack other than the YAML says."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tutor.pack import packcache
from tutor.pack.discovery import builtin_pack_dirs, discover
from tutor.pack.loader import load_pack
from tutor.pack.problems import PackError

from tests.unit.conftest import MINIMAL_LESSON, install_tiny_pack, write_one_lesson_pack


def _touch_later(path: Path) -> None:
    """Change a file's mtime even on filesystems with coarse timestamps."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_a_cached_pack_equals_the_yaml_and_keeps_locations(make_pack, tmp_path):
    root = make_pack()
    cache = tmp_path / "cache"
    first = packcache.load(root, cache)
    assert list(cache.glob("*.pickle")), "the first load stores an entry"
    second = packcache.read(root, cache)
    assert second is not None and second is not first
    assert second == load_pack(root)
    assert second.root == root.absolute() and second.sources[0] == (root / "pack.yaml").absolute()
    assert second.locate("basics", "hello") == first.locate("basics", "hello")
    assert second.locate("basics", "hello")[0] == (root / "lesson.yaml").absolute()


def _cached_then_edited(make_pack, tmp_path: Path, old: str, new: str) -> tuple[Path, Path]:
    """A pack loaded through the cache, then its lesson file edited: (pack folder, cache folder)."""
    root = make_pack()
    cache = tmp_path / "cache"
    packcache.load(root, cache)
    lesson = root / "lesson.yaml"
    lesson.write_text(MINIMAL_LESSON.replace(old, new), encoding="utf-8")
    _touch_later(lesson)
    return root, cache


def test_editing_a_lesson_file_is_seen_at_once(make_pack, tmp_path):
    root, cache = _cached_then_edited(make_pack, tmp_path, "Hello.", "Changed.")
    assert packcache.read(root, cache) is None, "a stale entry is never used"
    assert packcache.load(root, cache).lessons[0].steps[0].body == "Changed."


def test_a_pack_broken_after_caching_reports_its_problems(make_pack, tmp_path):
    root, cache = _cached_then_edited(make_pack, tmp_path, "body: Hello.", "bdy: Hello.")
    with pytest.raises(PackError) as caught:
        packcache.load(root, cache)
    assert "did you mean 'body'" in str(caught.value)
    with pytest.raises(PackError):  # and again: broken packs are never cached
        packcache.load(root, cache)


def test_a_deleted_lesson_file_is_a_miss(make_pack, tmp_path):
    root = make_pack()
    cache = tmp_path / "cache"
    packcache.load(root, cache)
    (root / "lesson.yaml").unlink()
    assert packcache.read(root, cache) is None
    with pytest.raises(PackError, match="lesson.yaml"):
        packcache.load(root, cache)


@pytest.mark.parametrize("damage", [b"", b"not a pickle at all", b"\x80\x05K\x01."])
def test_a_corrupt_entry_falls_back_to_the_yaml_and_is_rewritten(make_pack, tmp_path, damage):
    root = make_pack()
    cache = tmp_path / "cache"
    packcache.load(root, cache)
    entry = next(cache.glob("*.pickle"))
    entry.write_bytes(damage)
    assert packcache.read(root, cache) is None
    assert packcache.load(root, cache).id == "demo"
    assert packcache.read(root, cache) is not None, "the next load repaired the entry"


def test_an_entry_from_other_code_is_not_used(make_pack, tmp_path, monkeypatch):
    root = make_pack()
    cache = tmp_path / "cache"
    packcache.load(root, cache)
    monkeypatch.setattr(packcache, "ENTRY_FORMAT", packcache.ENTRY_FORMAT + 1)
    assert packcache.read(root, cache) is None


def test_an_unwritable_cache_only_costs_speed(make_pack, tmp_path):
    root = make_pack()
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    assert packcache.load(root, blocked / "cache").id == "demo"
    assert packcache.write(load_pack(root), blocked / "cache") is False


def test_same_pack_from_another_working_directory(make_pack, tmp_path, monkeypatch):
    """A pack loaded by a relative path keeps absolute locations, so another cwd reads it right."""
    root = make_pack()
    cache = tmp_path / "cache"
    monkeypatch.chdir(root.parent)
    packcache.load(Path(root.name), cache)
    monkeypatch.chdir(tmp_path.parent)
    cached = packcache.read(root, cache)
    assert cached is not None and cached.root == root.absolute() and cached.root.is_dir()


def test_the_builtin_pack_round_trips(tmp_path):
    builtin = builtin_pack_dirs()[0]
    packcache.load(builtin, tmp_path)
    assert packcache.read(builtin, tmp_path) == load_pack(builtin)


def test_reading_the_cache_needs_neither_yaml_nor_pydantic(make_pack, tmp_path):
    root = make_pack()
    packcache.load(root, tmp_path / "cache")
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from tutor.pack import packcache
        pack = packcache.load(Path({str(root)!r}), Path({str(tmp_path / "cache")!r}))
        assert pack.lessons[0].steps[0].body == "Hello.", pack
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("yaml", "pydantic", "pydantic_core"))
        print(heavy)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_entry_point_cache_sees_a_newly_installed_pack(make_pack, tmp_path):
    """Installing a package changes its site folder's mtime, which invalidates the cache."""
    site = tmp_path / "site"
    site.mkdir()
    data = tmp_path / "data"
    code = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from tutor.pack.discovery import discover
        found = discover([], Path({str(data)!r}), cache=True)
        print(json.dumps([f.origin for f in found]))
    """)
    env = {**os.environ, "PYTHONPATH": str(site)}

    def origins() -> list[str]:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    assert not any(o.startswith("package tiny") for o in origins())
    assert (data / "cache" / "entry-points.json").is_file()
    install_tiny_pack(site)
    _touch_later(site)
    assert "package tiny-pack" in origins()


def test_discover_with_cache_matches_without(tmp_path):
    plain = discover([], tmp_path)
    cached_first = discover([], tmp_path, cache=True)
    cached_again = discover([], tmp_path, cache=True)
    assert [f.pack for f in plain] == [f.pack for f in cached_first] == [f.pack for f in cached_again]


def test_entry_header_is_plain_data(make_pack, tmp_path):
    """The first record of an entry holds only plain values (checked before the pack is read)."""
    root = make_pack()
    packcache.load(root, tmp_path)
    with open(next(tmp_path.glob("*.pickle")), "rb") as handle:
        header = pickle.load(handle)
    assert set(header) == {"code", "files"}
    assert [Path(name).name for name, _, _ in header["files"]] == ["pack.yaml", "lesson.yaml"]


@pytest.mark.parametrize("damage", ["", "{not json", '{"stamp": 1}', '{"stamp": null, "found": 5}', "[]"])
def test_a_damaged_entry_point_cache_is_rebuilt(tmp_path, damage):
    expected = [(f.path, f.origin) for f in discover([], tmp_path)]
    cache_file = tmp_path / "cache" / "entry-points.json"
    cache_file.parent.mkdir(parents=True)
    cache_file.write_text(damage, encoding="utf-8")
    assert [(f.path, f.origin) for f in discover([], tmp_path, cache=True)] == expected
    assert json.loads(cache_file.read_text(encoding="utf-8"))["stamp"], "rewritten with a real stamp"


def test_a_pack_whose_reading_raises_is_one_broken_pack_and_the_others_are_found(tmp_path, monkeypatch):
    """Issue 50: an exception no one expected from one pack (a 5000-digit integer's ValueError
    was one) broke `list` and the app's start for every pack; it is now that pack's problem."""
    data = tmp_path / "data"
    write_one_lesson_pack(data / "packs" / "good", "good", "Good")
    bad = write_one_lesson_pack(data / "packs" / "bad", "bad", "Bad")
    real = packcache.load

    def load(path, cache_dir, **how):
        if Path(path) == bad:
            raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")
        return real(path, cache_dir, **how)

    monkeypatch.setattr(packcache, "load", load)
    for cache in (False, True):
        found = {entry.path.name: entry for entry in discover(data_dir=data, cache=cache)}
        assert found["good"].pack is not None and found["bad"].pack is None
        [problem] = found["bad"].problems
        assert str(problem) == (f"{bad / 'pack.yaml'}: could not be read: ValueError: Exceeds the limit (4300 "
                                "digits) for integer string conversion (a bug in torch-tutor: please report it "
                                "with this pack)")


SHARED = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from tutor.pack import packcache
    from tutor.pack.discovery import builtin_pack_dirs
    packcache.shared_dir = lambda: Path(sys.argv[1])
    pack = packcache.load(builtin_pack_dirs()[0], Path(sys.argv[2]), builtin=True)
    print(json.dumps({"lessons": [lesson.id for lesson in pack.lessons], "yaml": "yaml" in sys.modules}))
""")


def _builtin_start(shared: Path, data: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", SHARED, str(shared), str(data)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_new_data_folder_reads_the_builtin_pack_validated_once_per_installation(tmp_path):
    """Issue 55: the built-in pack's entry is kept beside the tutor's bytecode too, so a first
    start on a new data folder reads no YAML; the data folder then has its own entry."""
    shared = tmp_path / "shared"
    first = _builtin_start(shared, tmp_path / "one")
    assert first["yaml"] is True and any(shared.iterdir())
    second = _builtin_start(shared, tmp_path / "two")
    assert second == {**first, "yaml": False}
    assert any((tmp_path / "two").iterdir())  # its own entry, for its next start


def test_a_shared_entry_others_can_write_is_never_unpickled(tmp_path):
    shared, marker = tmp_path / "shared", tmp_path / "ran"
    _builtin_start(shared, tmp_path / "zero")
    (entry,) = shared.iterdir()
    with open(entry, "rb") as handle:
        header = pickle.load(handle)  # a real header: right code, right files

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    def plant(mode: int, folder_mode: int) -> None:
        entry.chmod(0o600)
        with open(entry, "wb") as handle:
            pickle.dump(header, handle)
            pickle.dump(Payload(), handle)
        entry.chmod(mode)
        shared.chmod(folder_mode)

    plant(0o600, 0o700)  # the attack as the tutor's own user: trusted, like a .pyc file
    _builtin_start(shared, tmp_path / "one")
    assert marker.exists()
    for index, (mode, folder_mode) in enumerate(((0o666, 0o700), (0o600, 0o777))):
        os.rmdir(marker)
        plant(mode, folder_mode)
        assert _builtin_start(shared, tmp_path / f"other{index}")["yaml"] is True  # read from the YAML
        assert not marker.exists(), (oct(mode), oct(folder_mode))
        os.mkdir(marker)
