"""The main content of real pages from Debian's documentation packages (tests/data/main_content):
right to left, Persian (GIMP's help, gimp-help-fa: DocBook, `<body dir="rtl">`), and Japanese
(the Debian Reference, debian-reference-ja: DocBook through XHTML); read as text, as Markdown,
and whole when too short to choose from; the compiled reading and the Python one alike."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from support.readings import assert_same_readings

from crawler.page.read import Page, read_page

DATA = Path(__file__).parent.parent / "data" / "main_content"
GIMP = "https://docs.gimp.test/fa/"
NOTE = "ياداشت"  # Persian for "note"


def page_of(name: str, url: str) -> tuple[Page, bytes]:
    body = gzip.decompress((DATA / name).read_bytes())
    return read_page(body, url), body


def test_a_right_to_left_persian_help_page() -> None:
    page, body = page_of("gimp-fa-filter-threshold-alpha.html.gz", GIMP + "x.html")
    assert page.main_fallback is None
    # DocBook puts a no-break space after a section's number.
    text, markdown = page.main_text.replace("\xa0", " "), page.markdown.replace("\xa0", " ")
    # The page's own words, its Persian labels in their logical order among the English the
    # translation left: a figure's number, a note, a cross-reference.
    assert text.startswith("7.38. Threshold Alpha\nThe command converts semi-transparent areas")
    assert "شكل 16.121." in text
    assert f"\n{NOTE}\nThis command will never make completely transparent pixels" in text
    assert text.endswith("Threshold set to 50, 127, 210.")
    # The generator's frame is gone: the navigation above and below (its previous, next and
    # home in Persian, the neighbouring pages) and the bug links.
    for frame in ("7.37. Semi-flatten", "7.39. Alpha to Selection", "Report a bug in GIMP"):
        assert frame not in text, frame
        assert frame in page.text.replace("\xa0", " "), frame
    for label in ("قبلی", "بعدی", "خانه"):  # previous, next, home: the navigation's images
        assert label not in markdown, label
    # Markdown: headings, the list, links made absolute, images with their alt.
    assert markdown.startswith("### 7.38. Threshold Alpha\n\n")
    assert "\n\n#### 7.38.1. Activating the Command\n\n- You can access this command" in markdown
    assert f"[قسمت 2, “Common Features”]({GIMP}gimp-filters-common.html)" in markdown
    assert f"![Threshold Alpha example]({GIMP}images/menus/layer/threshold-alpha-example.png)" in (
        markdown
    )
    assert_same_readings(body)


def test_a_persian_help_page_too_short_is_read_whole() -> None:
    page, body = page_of("gimp-fa-file-save.html.gz", GIMP + "gimp-file-save.html")
    assert page.main_fallback == "under 150 characters of text"
    # The words of the visible text, every one (the two join inline elements differently).
    assert re.findall(r"\w+", page.main_text) == re.findall(r"\w+", page.text)
    # All of it: the page's one sentence, and the navigation with its Persian labels.
    text, markdown = page.main_text.replace("\xa0", " "), page.markdown.replace("\xa0", " ")
    assert "\nThis command opens قسمت 5.6, “Save File” .\n" in text
    assert "2.7. Open Recent" in text
    assert f"[![قبلی]({GIMP}images/prev.png)]({GIMP}gimp-file-open-recent.html)" in markdown
    assert f"[قسمت 5.6, “Save File”]({GIMP}gimp-save-dialog.html)" in markdown
    assert_same_readings(body)


def test_a_japanese_appendix_reads_all_its_sections() -> None:
    url = "https://docs.test/debian-reference/apa.ja.html"
    page, body = page_of("debian-reference-apa.ja.html.gz", url)
    assert page.main_fallback is None
    text, markdown = page.main_text.replace("\xa0", " "), page.markdown.replace("\xa0", " ")
    # Section A.1, whose <a id="_the_debian_maze"/> (XHTML's empty anchor, an open <a> to an
    # HTML parser) holds all of it: an anchor, not a link, so not a list of links to drop.
    assert text.startswith("Linux システムはネットワーク化されたコンピューターのための")
    assert "Debian 迷路の真っ只中にいる皆様にとって解決の糸口となることを望みます。" in text
    assert "\n\n## A.2. 著作権の経緯\n\n" in markdown
    assert text.endswith(
        "著者である青木 修は本文書を世に送ることにご助力戴いた皆様に感謝いたします。"
    )
    # The frame goes: the table of contents and the navigation to the next chapter.
    for frame in ("目次", "第12章 プログラミング"):
        assert frame not in text, frame
        assert frame in page.text, frame
    # Markdown: the nested list of sources, its links absolute.
    assert (
        '- "[Debian Tutorial](https://www.debian.org/doc/manuals/debian-tutorial/)" '
        "Havoc Pennington 著。" in markdown
    )
    assert '\n\n  - "Debian Tutorial" によって陳腐化\n\n' in markdown
    assert_same_readings(body)
