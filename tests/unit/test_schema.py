"""The committed JSON Schema stays in step with the models, and validates real packs."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import yaml

from tutor.settings import paths
from tutor.pack.models import lesson_json_schema, pack_json_schema

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


def test_the_loaders_own_fields_are_not_keys_of_the_format(tmp_path):
    """Fields the loader sets (a prelude's text, the pack's scoring on each exercise, the names a
    solution uses: ``_prelude``, ``_pack_scoring``, ``_used_names``) are not keys an author may
    write: the loader refuses them, and the schema an editor reads does not offer them."""
    schema = pack_json_schema()
    hidden: list[str] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for name in node.get("properties", {}) if isinstance(node.get("properties"), dict) else ():
                if name.startswith("_"):
                    hidden.append(f"{where}.{name}")
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    walk(schema, "#")
    assert hidden == []
    step = {"id": "e", "kind": "exercise", "title": "E", "body": "b", "starter": "x = 1\n",
            "solution": "x = 2\n", "checks": [{"expr": "x == 2"}], "_prelude": "import os"}
    validator = jsonschema.Draft202012Validator(lesson_json_schema())
    lesson = {"id": "l", "title": "L", "steps": [step]}
    errors = [e.message for e in validator.iter_errors(lesson)]
    assert any("_prelude" in message for message in errors), errors
