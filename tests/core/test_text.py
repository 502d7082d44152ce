"""Logic tests of `teamenvs.core.text`'s cleaning: the quick path for text that needs no cleaning gives exactly what
cleaning it in full gives."""

from __future__ import annotations

import random

from teamenvs.core.text import clean_text, excerpt, valid_unicode


def _cleaned_in_full(text: str, max_chars: int | None, keep_newlines: bool) -> str:
    """What `clean_text` is specified to return, computed the long way every time: cut to 4x the limit (plus 64),
    whitespace runs collapsed, control and format characters dropped, collapsed again, cut to the limit."""
    def collapse(t: str) -> str:
        if keep_newlines:
            return "\n".join(" ".join(line.split()) for line in t.split("\n")).strip("\n")
        return " ".join(t.split())

    if max_chars is not None:
        text = text[: 4 * max_chars + 64]
    text = collapse("".join(c for c in collapse(text) if c.isprintable() or c == "\n"))
    return text if max_chars is None else text[:max_chars]


def test_clean_text_equals_cleaning_in_full_on_random_text():
    rng = random.Random(0)
    odd = [" ", " ", "\t", "\n", "\r", "\x00", "\x1c", "\u200b", "\xa0", "\u3000", "é", "漢", "🙂", "<", ">"]
    quick = 0
    for _ in range(40_000):
        limit = rng.choice([1, 2, 3, 5, 8, 13, 30])
        text = "".join(rng.choice(odd) if rng.random() < 0.3 else rng.choice("abcdefg ") for _ in range(rng.randint(0, 5 * limit + 80)))
        for keep_newlines in (False, True):
            for max_chars in (limit, None):
                assert clean_text(text, max_chars, keep_newlines=keep_newlines) == _cleaned_in_full(text, max_chars, keep_newlines), (text, max_chars)
        head = text[:limit]
        quick += head.isprintable() and "  " not in head and head.strip(" ") == head
    assert quick > 2_000  # the quick path was taken often, not only the full one


def test_text_needing_no_cleaning_comes_back_cut_at_the_limit_and_other_text_is_cleaned():
    reply = "<think>" * 20_000 + "\x00 tail"
    assert clean_text(reply, 2_000) == reply[:2_000]
    assert clean_text("  two  spaces ", 100) == "two spaces" and clean_text("ends with space ", 15) == "ends with space"


def test_valid_unicode_replaces_lone_surrogates_and_returns_other_text_itself():
    for text in ("plain", "é 中 \U0001f600", ""):
        assert valid_unicode(text) is text
    assert valid_unicode("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert valid_unicode("\ud83d\ude00") == "\U0001f600"  # two halves of a pair are the character they make
    assert valid_unicode("x\ud800").encode("utf-8") == "x\ufffd".encode("utf-8")


def test_an_excerpt_shows_the_spaces_and_line_breaks_around_a_string():
    """Quoted as `quote` quotes it, `' medic'` read `'medic'`: the error named the very agent it went on to list as one."""
    assert excerpt("medic") == "'medic'" and excerpt("say  hi") == "'say hi'"  # inside, whitespace is collapsed as before
    assert excerpt(" medic") == "' medic'" and excerpt("medic\n") == "'medic\\n'" and excerpt("\tmedic ") == "'\\tmedic '"
    shown = excerpt(" " + "x" * 10_000 + "\x1b[2J")
    assert len(shown) < 100 and "\x1b" not in shown and shown.startswith("' xxx")  # cut short, no raw escape
