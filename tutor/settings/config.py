"""Settings: defaults, then the TOML config file, then TORCH_TUTOR_* variables, then flags.

Every effective value remembers where it came from, so ``torch-tutor config`` can say why a
setting has the value it has.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from tutor.settings import paths
from tutor.errors import TutorError


def _toml() -> Any:
    """tomllib, imported only when there is a config file to read."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


class ConfigError(TutorError):
    """A config file or variable that cannot be used; the message says where and why."""


def _t(key: str, **fields: Any) -> str:
    """A message of this module in the language the tutor speaks (the table imports nothing
    of this module's, so the import waits for the first message)."""
    from tutor.words.i18n import t

    return t(key, **fields)


def _positive_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(_t("config.expected_number"))
    number = float(value)
    if not number > 0:
        raise ValueError(_t("config.greater_than_0"))
    return number


def _whole(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(_t("config.whole"))
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(_t("config.whole")) from None
    if isinstance(value, float) and value != number:
        raise ValueError(_t("config.whole"))
    return number


def _positive_int(value: Any) -> int:
    number = _whole(value)
    if number < 1:
        raise ValueError(_t("config.at_least_1"))
    return number


def _count(value: Any) -> int:
    """A whole number, 0 or more."""
    number = _whole(value)
    if number < 0:
        raise ValueError(_t("config.zero_or_more"))
    return number


def _string(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(_t("config.non_empty"))
    return value


def _language(value: Any) -> str:
    """A language code: ``zh``, ``en``, ``zh-CN`` (``zh_CN.UTF-8`` as a locale writes it, too)."""
    text = _string(value).strip().split(".")[0].replace("_", "-")
    if not re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", text):
        raise ValueError(_t("config.language_code", value=repr(value)))
    return text


#: Where the language came from when no flag, variable or config file gave it.
LOCALE_SOURCE = "system locale"


def language_of(settings: "Settings", saved: str | None = None,
                environ: Mapping[str, str] | None = None) -> str:
    """The language the tutor speaks: the ``language`` setting when a flag, variable or config
    file gave it; else ``saved`` (the one last chosen in the app); else the system locale's
    (gettext's order); else English."""
    from tutor.words import i18n

    source = settings.sources.get("language", "default")
    if source not in ("default", LOCALE_SOURCE) and settings.values.get("language"):
        return str(settings.values["language"])
    if saved:
        return saved
    if source == LOCALE_SOURCE and settings.values.get("language"):
        return str(settings.values["language"])
    return i18n.locale_language(environ) or i18n.FALLBACK


def _choice(*options: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(_t("config.one_of", options=", ".join(options)))
        return str(value)

    return check


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    parse: Callable[[Any], Any]
    help: str


#: The `isolation` setting's values: "auto" and every level of ``tutor.sandbox.backends.LEVELS``
#: (core never imports the sandbox: tests/unit/test_registries.py keeps the two lists in step).
ISOLATION_CHOICES = ("auto", "bwrap", "none")

SETTINGS: tuple[Setting, ...] = (
    Setting("data_dir", None, _string, "where progress, drafts and user packs live"),
    Setting("python", None, _string, "interpreter the sandbox workers run (must have torch); default: this one"),
    Setting("theme", "dark", _choice("dark", "light"), "the app's colour theme"),
    Setting("language", None, _language,
            "language of the tutor and of pack text (en, zh...; pack text falls back to the pack's first); "
            "default: the one last chosen in the app, else the system locale (LANG), else en"),
    Setting("workers", 1, _positive_int, "warm sandbox workers kept ready"),
    Setting("isolation", "auto", _choice(*ISOLATION_CHOICES),
            "auto: bubblewrap when it works, else limits only; bwrap: require it; none: limits only"),
    Setting("sandbox_mode", "auto", _choice("auto", "fork", "spawn"),
            "auto: fork on Linux, spawn elsewhere; fork: children of a warm worker; spawn: "
            "single-use interpreters started ahead"),
    Setting("spawn_runners", "forked", _choice("forked", "fresh"),
            "spawn mode only: forked: each run's interpreter forked from a template that imported torch "
            "(one thread, no op run: tens of ms); fresh: each started anew (a torch import per run)"),
    Setting("wall_time", 10.0, _positive_float, "seconds a run may take"),
    Setting("cpu_time", 30.0, _positive_float, "CPU seconds a run may use (all threads)"),
    Setting("memory_mb", 2048, _positive_int, "MiB a run may allocate above the worker's baseline"),
    Setting("output_kb", 1024, _positive_int, "KiB kept of each of stdout and stderr"),
    Setting("processes", 64, _positive_int, "processes and threads a run may have at once"),
    Setting("file_size_mb", 64, _positive_int, "MiB a run may write to one file"),
    Setting("open_files", 256, _positive_int, "files a run may have open"),
    Setting("new_cards_per_day", 10, _count,
            "review cards never reviewed yet (met before review existed, or changed) let in per day; 0: none"),
)
_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass
class Settings:
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    config_file: Path = field(default_factory=paths.config_file)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def data_path(self) -> Path:
        return Path(self.values["data_dir"]).expanduser() if self.values.get("data_dir") else paths.default_data_dir()

    def as_rows(self) -> list[dict[str, Any]]:
        rows = []
        for setting in SETTINGS:
            value = self.values[setting.name]
            if setting.name == "data_dir" and value is None:
                value = str(self.data_path)
            rows.append({"name": setting.name, "value": value, "source": self.sources[setting.name],
                         "help": setting.help})
        return rows


def _line_of(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith((f"{key} ", f"{key}=")):
            return number
    return None


def load_settings(flags: dict[str, Any] | None = None, *, config_file: Path | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Resolve every setting; raises ConfigError with file:line for a bad config file."""
    if environ is None:
        environ = os.environ
    path = config_file or paths.config_file()
    settings = Settings(config_file=path)
    for setting in SETTINGS:
        settings.values[setting.name] = setting.default
        settings.sources[setting.name] = "default"

    if path.is_file():
        tomllib = _toml()
        try:
            text = path.read_text(encoding="utf-8")
            table = tomllib.loads(text)
        except UnicodeDecodeError:
            raise ConfigError(_t("config.not_utf8", path=path)) from None
        except tomllib.TOMLDecodeError as exc:
            # Python < 3.14 only puts the position in the message: "... (at line 3, column 8)"
            found = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
            where = f"{path}:{found[1]}:{found[2]}" if found else str(path)
            reason = re.sub(r" \(at (line|end).*", "", str(exc))
            raise ConfigError(_t("config.where", where=where, reason=reason)) from None
        except OSError as exc:
            raise ConfigError(_t("config.cannot_read", path=path, error=exc.strerror)) from None
        for key, raw in table.items():
            line = _line_of(text, key)
            where = f"{path}:{line}" if line else str(path)
            known = _BY_NAME.get(key)
            if known is None:
                import difflib

                close = difflib.get_close_matches(key, list(_BY_NAME), n=1)
                hint = _t("config.did_you_mean", name=repr(close[0])) if close else ""
                raise ConfigError(_t("config.unknown", where=where, setting=repr(key), hint=hint))
            try:
                settings.values[key] = known.parse(raw)
            except ValueError as exc:
                raise ConfigError(_t("config.bad_value", where=where, setting=key, error=exc)) from None
            settings.sources[key] = f"config file {path}"

    for setting in SETTINGS:
        variable = f"TORCH_TUTOR_{setting.name.upper()}"
        if environ.get(variable):
            try:
                settings.values[setting.name] = setting.parse(environ[variable])
            except ValueError as exc:
                raise ConfigError(_t("config.bad_variable", variable=variable, error=exc)) from None
            settings.sources[setting.name] = f"environment {variable}"

    for name, raw in (flags or {}).items():
        if raw is None:
            continue
        try:
            settings.values[name] = _BY_NAME[name].parse(raw)
        except ValueError as exc:
            raise ConfigError(_t("config.bad_flag", flag="--" + name.replace("_", "-"), error=exc)) from None
        settings.sources[name] = "command line"
    if settings.values["language"] is None:  # nothing chose it: the system locale, as gettext reads it
        from tutor.words.i18n import locale_language

        code = locale_language(environ)
        if code is not None:
            settings.values["language"], settings.sources["language"] = code, LOCALE_SOURCE
    return settings
