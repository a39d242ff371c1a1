"""Where torch-tutor keeps things on disk: every path the tutor writes comes from here."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "torch-tutor"
PACK_FILE = "pack.yaml"

_REPO_ROOT = Path(__file__).resolve().parents[2]
_BUNDLED = Path(__file__).resolve().parents[1] / "_bundled"


def bundled_dir(name: str) -> Path:
    """A folder that ships with the tutor (``lessons`` or ``assets``).

    An installed wheel carries them under ``tutor/_bundled``; a source checkout (and an
    editable install) reads them from the top of the repository, so authors edit one copy.
    """
    packaged = _BUNDLED / name
    if packaged.is_dir():
        return packaged
    return _REPO_ROOT / name


def config_dir() -> Path:
    return Path(os.environ.get("TORCH_TUTOR_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME))


def config_file() -> Path:
    return config_dir() / "config.toml"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME))


def user_packs_dir(data_dir: Path) -> Path:
    """Packs a learner drops in by hand (one folder per pack)."""
    return data_dir / "packs"
