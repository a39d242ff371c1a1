"""The tutor's word catalogs, gettext's files, made and checked with Babel.

Babel is a translator's tool here, not a dependency of the tutor (``pip install
'torch-tutor[translate]'``): the tutor reads the compiled ``.mo`` with the standard library.

    python -m tutor.words.i18n_catalogs extract        locale/torch_tutor.pot from the English
    python -m tutor.words.i18n_catalogs init LANG      a new language: its .po, every message to do
    python -m tutor.words.i18n_catalogs update         each .po: new messages, changed ones fuzzy
    python -m tutor.words.i18n_catalogs compile        each .po to its .mo (what the tutor reads)
    python -m tutor.words.i18n_catalogs absorb LANG F  a translation kept as a Python dict, key ->
                                                      text (as zh was), into LANG's .po

A message's ``msgctxt`` is its key (``when.days``), its ``msgid`` the English a translator
translates (``msgid_plural`` too, for :data:`tutor.words.i18n.PLURALS`), and ``msgstr`` the
translation (``msgstr[i]``: one per the language's plural form). pybabel's own commands work
on the same files (``pybabel init -D torch_tutor -i tutor/words/locale/torch_tutor.pot -d
tutor/words/locale -l fr``).
"""

from __future__ import annotations

import io
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.words.i18n import DOMAIN, FALLBACK, LOCALE_DIR, PLURALS, TABLE

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

LOCALE = Path(LOCALE_DIR)
TEMPLATE = LOCALE / f"{DOMAIN}.pot"
#: The template's date, fixed: an extract changes the file only where a message changed.
CREATED = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _babel() -> Any:
    try:
        from babel.messages import catalog, mofile, pofile
    except ImportError:
        raise SystemExit("the catalogs are made with Babel: pip install 'torch-tutor[translate]'") from None
    return catalog, mofile, pofile


def po_path(code: str) -> Path:
    return LOCALE / code / "LC_MESSAGES" / f"{DOMAIN}.po"


def template() -> Catalog:
    """Every English message, in the table's order (its namespaces together), none translated
    (an empty one aside: gettext's empty msgid is the header, and nothing is nothing anywhere)."""
    catalog_module, _, _ = _babel()
    made: Catalog = catalog_module.Catalog(domain=DOMAIN, project="torch-tutor", version="",
                                           creation_date=CREATED, revision_date=CREATED, msgid_bugs_address="",
                                           fuzzy=False, copyright_holder="the torch-tutor authors")
    for key, english in TABLE[FALLBACK].items():
        if english:
            made.add(english, context=key)
    for key, forms in PLURALS.items():
        made.add(forms, context=key)
    return made


def _write_po(path: Path, catalog: Catalog) -> None:
    _, _, pofile = _babel()
    path.parent.mkdir(parents=True, exist_ok=True)
    out = io.BytesIO()
    pofile.write_po(out, catalog, width=100, sort_output=False, omit_header=False)
    path.write_bytes(out.getvalue())


def read_po(code: str) -> Catalog:
    _, _, pofile = _babel()
    with po_path(code).open("rb") as source:
        catalog: Catalog = pofile.read_po(source, locale=code, domain=DOMAIN)
    return catalog


def languages() -> list[str]:
    """The codes that have a .po."""
    return sorted(path.parent.parent.name for path in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def extract() -> Path:
    _write_po(TEMPLATE, template())
    return TEMPLATE


def init(code: str) -> Path:
    catalog_module, _, _ = _babel()
    if po_path(code).exists():
        raise SystemExit(f"{po_path(code)} exists already: `update` brings it up to date")
    made = catalog_module.Catalog(locale=code, domain=DOMAIN, project="torch-tutor", version="",
                                  creation_date=CREATED, revision_date=CREATED, msgid_bugs_address="",
                                  copyright_holder="the torch-tutor authors",
                                  last_translator="the torch-tutor authors", language_team=code)
    made.update(template())
    _write_po(po_path(code), made)
    return po_path(code)


def update(code: str) -> Path:
    """``code``'s .po with the template's messages: new ones to translate, one whose English
    changed marked fuzzy (its translation kept as a suggestion: the tutor shows English until a
    translator clears the mark), one no longer in English made obsolete."""
    catalog = read_po(code)
    catalog.update(template(), no_fuzzy_matching=False)
    _write_po(po_path(code), catalog)
    return po_path(code)


def compiled(code: str) -> bytes:
    """``code``'s .po compiled: translated messages only (fuzzy and empty ones are English)."""
    _, mofile, _ = _babel()
    out = io.BytesIO()
    mofile.write_mo(out, read_po(code), use_fuzzy=False)
    return out.getvalue()


def compile_all() -> list[Path]:
    written = []
    for code in languages():
        path = po_path(code).with_suffix(".mo")
        path.write_bytes(compiled(code))
        written.append(path)
    return written


def absorb(code: str, source: Path) -> list[str]:
    """The entries of a Python dict of translations (``key -> text``: the module's only dict, or
    its ``ZH``) into ``code``'s .po, for the English of each key now; returns the keys English
    no longer has (left out). A plural takes the one text for each of its forms."""
    namespace: dict[str, Any] = {}
    exec(compile(source.read_text(encoding="utf-8"), str(source), "exec"), namespace)  # noqa: S102 - our own file
    tables = [value for name, value in namespace.items() if isinstance(value, dict) and not name.startswith("__")]
    words: dict[str, str] = namespace.get("ZH") or (tables[0] if len(tables) == 1 else {})
    if not words:
        raise SystemExit(f"{source}: no dict of translations (key -> text) found")
    if not po_path(code).exists():
        init(code)
    catalog = read_po(code)
    left_out = []
    for key, text in words.items():
        english = PLURALS.get(key) or TABLE[FALLBACK].get(key)
        if english is None:
            left_out.append(key)
            continue
        if not english:
            continue  # nothing to say in any language
        message = catalog.get(english if isinstance(english, str) else english[0], context=key)
        if message is None:
            message = catalog.add(english, context=key)
        message.string = text if isinstance(english, str) else (text,) * catalog.num_plurals
        message.flags.discard("fuzzy")
    catalog.fuzzy = False
    _write_po(po_path(code), catalog)
    return left_out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else ""
    if command == "extract" and len(args) == 1:
        print(extract())
    elif command == "init" and len(args) == 2:
        print(init(args[1]))
    elif command == "update" and len(args) == 1:
        for code in languages():
            print(update(code))
    elif command == "compile" and len(args) == 1:
        for path in compile_all():
            print(path)
    elif command == "absorb" and len(args) == 3:
        for key in absorb(args[1], Path(args[2])):
            print(f"left out: {key} (not in the English table)")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
