"""The word catalogs (tutor/words/locale/): gettext's files, each one its source compiled, every
English message translated in each, plurals in each language's own forms; and a new language
is one `init`, its translations and a `compile` away."""

from __future__ import annotations

import string

import pytest

pytest.importorskip("babel", reason="pip install -e '.[test]' brings Babel, the catalogs' tool")

from babel.messages.mofile import read_mo  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

from tutor.words import i18n, i18n_catalogs  # noqa: E402

LANGUAGES = i18n_catalogs.languages()


def _said(catalog) -> dict:
    """(context, msgid) -> translation, for what a catalog translates (fuzzy ones are English)."""
    def hashable(value):
        return tuple(value) if isinstance(value, list) else value

    return {(m.context, hashable(m.id)): hashable(m.string) for m in catalog if m.id and m.string and not m.fuzzy}


def test_the_catalogs_are_the_tutors_languages():
    assert LANGUAGES == ["zh"] and sorted(i18n.CATALOGS) == ["zh"] and i18n.languages() == ["en", "zh"]


@pytest.mark.parametrize("code", LANGUAGES)
def test_each_compiled_catalog_is_its_source_compiled(code):
    with i18n_catalogs.po_path(code).with_suffix(".mo").open("rb") as shipped:
        compiled = read_mo(shipped)
    assert _said(compiled) == _said(i18n_catalogs.read_po(code)), \
        "the .mo is not its .po compiled: python -m tutor.words.i18n_catalogs compile"


def test_the_template_holds_the_english_of_now():
    with i18n_catalogs.TEMPLATE.open("rb") as shipped:
        template = read_po(shipped)
    assert [(m.context, m.id) for m in template if m.id] == [(m.context, m.id) for m in i18n_catalogs.template()
                                                              if m.id], \
        "the .pot is not the English of now: python -m tutor.words.i18n_catalogs extract"


def _fields(template: str) -> list:
    return sorted(name for _text, name, _spec, _conversion in string.Formatter().parse(template) if name is not None)


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_english_message_has_its_translation_plurals_with_every_form(code):
    """A message whose English changed has its old translation left fuzzy by `update`: it is
    English in the tutor until a translator clears the mark, and fails here till then."""
    catalog = i18n_catalogs.read_po(code)
    said = _said(catalog)
    missing = [m.context for m in i18n_catalogs.template() if m.id and (m.context, m.id) not in said]
    assert not missing, f"{code}: messages without a translation (or fuzzy): {missing}"
    for key, forms in i18n.PLURALS.items():
        translated = said[(key, forms)]
        assert len(translated) == catalog.num_plurals and all(translated), (key, translated)
        assert all(_fields(form) == _fields(forms[1]) for form in translated), (key, translated)


def test_a_plural_takes_each_languages_form_for_its_number():
    assert [i18n.t("when.days", n=n) for n in (1, 2)] == ["in 1 day", "in 2 days"]
    assert i18n.render({"key": "when.days", "fields": {"n": 1}}, "zh") == "1 天后"
    with i18n.speaking("zh"):
        assert [i18n.t("when.days", n=n) for n in (1, 2)] == ["1 天后", "2 天后"]
    with pytest.raises(KeyError):
        i18n.t("when.days")  # a plural needs its number


def test_a_new_language_is_init_translate_compile(tmp_path, monkeypatch):
    """docs/architecture.md's steps for a third language, French here (its plural rule makes 0
    singular, as English does not); what it lacks is English."""
    monkeypatch.setattr(i18n_catalogs, "LOCALE", tmp_path)
    monkeypatch.setattr(i18n_catalogs, "TEMPLATE", tmp_path / "torch_tutor.pot")
    i18n_catalogs.main(["extract"])
    assert i18n_catalogs.main(["init", "fr"]) == 0
    with pytest.raises(SystemExit, match="exists already"):
        i18n_catalogs.init("fr")
    catalog = i18n_catalogs.read_po("fr")
    catalog.get("Help", context="key.help").string = "Aide"
    assert catalog.num_plurals == 3  # French: one; a million (and its multiples); the others
    catalog.get(i18n.PLURALS["when.days"][0], context="when.days").string = (
        "dans {n} jour", "dans {n} de jours", "dans {n} jours")
    i18n_catalogs._write_po(i18n_catalogs.po_path("fr"), catalog)
    assert i18n_catalogs.main(["compile"]) == 0
    [(code, french)] = i18n._catalogs(str(tmp_path)).items()
    assert code == "fr"
    monkeypatch.setitem(i18n.CATALOGS, "fr", french)
    monkeypatch.setitem(i18n.TABLE, "fr", i18n._translated(french))
    with i18n.speaking("fr-CA"):
        assert i18n.t("key.help") == "Aide" and i18n.t("key.home") == "Contents"
        assert [i18n.t("when.days", n=n) for n in (0, 1, 2, 10**6)] == \
            ["dans 0 jour", "dans 1 jour", "dans 2 jours", "dans 1000000 de jours"]


def test_a_translation_kept_as_a_dict_is_absorbed_and_what_english_lacks_is_named(tmp_path, monkeypatch, capsys):
    """How zh came over from its Python dict (and how a branch's new Chinese is merged in)."""
    monkeypatch.setattr(i18n_catalogs, "LOCALE", tmp_path)
    monkeypatch.setattr(i18n_catalogs, "TEMPLATE", tmp_path / "torch_tutor.pot")
    words = tmp_path / "words_de.py"
    words.write_text('DE = {"key.help": "Hilfe", "when.days": "in {n} Tagen", "no.such.key": "?"}\n')
    assert i18n_catalogs.main(["absorb", "de", str(words)]) == 0
    assert capsys.readouterr().out == "left out: no.such.key (not in the English table)\n"
    said = _said(i18n_catalogs.read_po("de"))
    assert said[("key.help", "Help")] == "Hilfe" and said[("when.days", i18n.PLURALS["when.days"])] == \
        ("in {n} Tagen", "in {n} Tagen")
    (tmp_path / "nothing.py").write_text("X = 1\n")
    with pytest.raises(SystemExit, match="no dict of translations"):
        i18n_catalogs.absorb("de", tmp_path / "nothing.py")
    assert i18n_catalogs.main(["compile", "now"]) == 2 and "extract" in capsys.readouterr().err
