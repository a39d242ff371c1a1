"""Version ranges for `requires.torch`."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


def parse_specifier(text: str) -> SpecifierSet:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise ValueError(f"not a version range: {text!r} (write e.g. '>=2.2' or '>=2.2,<3')") from None


def satisfies(version: str, spec: str | None) -> bool:
    """Whether an installed version (e.g. '2.13.0+cpu') is in range; local labels are ignored."""
    if not spec:
        return True
    try:
        public = Version(version).public
    except InvalidVersion:
        return False
    return parse_specifier(spec).contains(public, prereleases=True)


def floor_notice(version: str | None, spec: str | None) -> str | None:
    """A plain sentence when the torch that runs code (``version``) is outside a pack's range."""
    if not spec or not version or satisfies(version, spec):
        return None
    from tutor.words.i18n import t

    return t("pack.torch.outside", spec=spec, version=version)
