"""The committed JSON Schema stays in step with the models, and validates real packs."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import yaml

from tutor.settings import paths
from tutor.pack.models import pack_json_schema

SCHEMA_FILE = paths.bundled_dir("assets") / "pack.schema.json"


def test_committed_schema_matches_the_models():
    committed = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert committed == pack_json_schema(), (
        "assets/pack.schema.json is stale: run `torch-tutor schema > assets/pack.schema.json`"
    )


def test_schema_command_prints_it():
    out = subprocess.run([sys.executable, "-m", "tutor", "schema"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == pack_json_schema()


def test_schema_accepts_the_builtin_pack_and_rejects_a_typo():

    root = paths.bundled_dir("lessons") / "debugging-and-speed"
    data = yaml.safe_load((root / "pack.yaml").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(pack_json_schema())
    assert not list(validator.iter_errors(data))
    lesson_path = root / data["lessons"][0]
    lesson = yaml.safe_load(lesson_path.read_text(encoding="utf-8"))
    data["lessons"] = [lesson]
    assert not list(validator.iter_errors(data))
    data["titel"] = "typo"
    assert list(validator.iter_errors(data))
