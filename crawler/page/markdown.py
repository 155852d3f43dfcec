"""Reading chosen parts of a page as plain text and as Markdown (CommonMark, with GitHub's
tables). Pure: nodes in, strings out; the tree is not changed.

Plain text is a block to a line: a paragraph, a heading, a list item, a table row (its cells
apart by a tab), each line of a preformatted block; inside a block, HTML whitespace folds to one
space as a browser folds it. Markdown keeps headings (`#`), paragraphs, nested lists (`-`,
`1.`), links made absolute (`[text](url)`), emphasis (`*`, `**`), inline code and fenced code
blocks (with the language a `language-x` or `highlight-x` class names), quotes (`>`), rules,
images (`![alt](url)`), and tables of plain cells as GitHub's tables; a table whose cells hold
blocks (a page laid out in a table) is read as the blocks it holds. Characters Markdown would
read as markup are escaped.

Links are made absolute after the reading: the reading leaves each link's target as a numbered
mark and lists the hrefs (crawler.page.link_marks puts the URLs in). That keeps the reading
free of URL rules, as the compiled reading is.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborNode

from crawler.page.link_marks import IMAGE_OPEN, LINK_OPEN, TARGET, TARGET_END
from crawler.page.tree import children

__all__ = [
    "BLOCK_TAGS",
    "SKIPPED_TAGS",
    "Reading",
    "is_navigation",
    "read_parts",
    "text_chars",
]

SKIPPED_TAGS = frozenset(
    {
        "script", "style", "template", "noembed", "noframes", "noscript", "iframe", "nav",
        "button", "select", "option", "svg", "math", "canvas", "object", "embed", "audio",
        "video", "input", "textarea", "dialog", "head", "title", "meta", "link", "datalist",
        "map", "frameset", "frame",
    }
)  # fmt: skip
"""Elements never read as the page's words (the page walk leaves out the first nine too)."""
BLOCK_TAGS = frozenset(
    {
        "address", "article", "blockquote", "body", "center", "dd", "details", "dir", "div",
        "dl", "dt", "fieldset", "figure", "form", "h1", "h2", "h3", "h4", "h5", "h6", "hgroup",
        "hr", "li", "main", "ol", "p", "pre", "section", "summary", "table", "tbody", "td",
        "tfoot", "th", "thead", "tr", "ul", "caption", "legend", "br", "html", "search",
        "header", "footer", "aside", "menu", "figcaption",
    }
)  # fmt: skip
HEADINGS = {f"h{level}": "#" * level for level in range(1, 7)}
EMPHASIS = {"strong": "**", "b": "**", "em": "*", "i": "*", "cite": "*", "var": "*"}
CODE = frozenset({"code", "kbd", "samp", "tt"})
LISTS = frozenset({"ul", "ol", "dir"})
CELLS = frozenset({"td", "th"})
ROW_GROUPS = frozenset({"thead", "tbody", "tfoot"})
CELL_BLOCKS = "p, div, table, ul, ol, pre, h1, h2, h3, h4, h5, h6, blockquote"
DEEPEST = 200
"""Past this nesting a subtree is read as its text: the reading recurses."""
MAX_LINKS = 2_000
"""Links and images given their URL in a page's Markdown; past these, a link is its text, and an
image goes: making 100,000 links absolute costs a page step a second."""
_HTML_SPACE = " \t\n\r\f"
SCRAP_CHARS = 25
"""A block at either end of what is read shorter than this is a scrap ("Share this", a date)."""
_SPACES = re.compile(r"[ \t\n\r\f]+")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")
_ESCAPED = re.compile(r"([\\`*\[\]]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")
_LINE_START = re.compile(r"#{1,6}( |$)|>|[-+]( |$)|[0-9]{1,9}[.)]( |$)|={3,}|-{3,}")
_LANGUAGE = re.compile(r"(?:language|lang|highlight)-([A-Za-z0-9_+-]+)")


def text_chars(text: str) -> int:
    """Characters of `text` that are not HTML whitespace."""
    return len(text) - sum(text.count(space) for space in _HTML_SPACE)


def is_navigation(node: LexborNode) -> bool:
    """role="navigation", ASCII case-insensitively (as the page walk reads it)."""
    role = node.attrs.get("role")
    return role is not None and role.isascii() and role.lower() == "navigation"


def _folded(text: str) -> str:
    return _SPACES.sub(" ", text).strip(_HTML_SPACE)


def _escaped(text: str) -> str:
    return _ESCAPED.sub(r"\\\1", text)


class Reading:
    """What the reading gives: plain text, Markdown with its links as marks, and the hrefs."""

    def __init__(self, skip: set[int]) -> None:
        self.skip = skip
        self.text_lines: list[str] = []
        self.markdown_blocks: list[str] = []
        self.hrefs: list[str] = []
        # Each block read: (text lines, Markdown blocks, characters, a heading)
        self.units: list[tuple[int, int, int, bool]] = []

    def unit(self, lines: int, blocks: int, chars: int, heading: bool = False) -> None:
        self.units.append((lines, blocks, chars, heading))

    def trimmed(self) -> tuple[list[str], list[str]]:
        """The text lines and Markdown blocks, less the scraps at either end: short blocks, and
        headings with nothing after them ("Share this", a date, "Related")."""
        units = self.units
        end = len(units)
        while end and (units[end - 1][2] < SCRAP_CHARS or units[end - 1][3]):
            end -= 1
        start = 0
        while start < end and units[start][2] < SCRAP_CHARS and not units[start][3]:
            start += 1
        lines = sum(unit[0] for unit in units[:start]), sum(unit[0] for unit in units[:end])
        blocks = sum(unit[1] for unit in units[:start]), sum(unit[1] for unit in units[:end])
        return self.text_lines[lines[0] : lines[1]], self.markdown_blocks[blocks[0] : blocks[1]]

    def skipped(self, node: LexborNode, tag: str) -> bool:
        return (
            not node.is_element_node
            or tag in SKIPPED_TAGS
            or node.mem_id in self.skip
            or is_navigation(node)
        )

    def flat_text(self, node: LexborNode, separator: str) -> str:
        """The text under `node` as it stands, without what the reading skips."""
        parts: list[str] = []
        stack = [node]
        while stack:
            at = stack.pop()
            if at.is_text_node:
                parts.append(_CONTROLS.sub("", at.text_content or ""))
            elif at is node or not self.skipped(at, at.tag or ""):
                stack.extend(reversed(children(at)))
        return separator.join(parts)

    # --- blocks ---------------------------------------------------------------------------

    def emit(
        self, text: str, markdown: str, lists: list[str], quote: int, prefix: str = ""
    ) -> None:
        text = _folded(text)
        if text:
            self.text_lines.append(text)
        markdown = _folded(markdown)
        if markdown:
            if not prefix and _LINE_START.match(markdown):
                # A backslash escapes punctuation only: a number's is before its `.` or `)`.
                at = len(markdown) - len(markdown.lstrip("0123456789"))
                markdown = markdown[:at] + "\\" + markdown[at:]
            self.markdown_blocks.append(_margin(lists, quote) + prefix + markdown)
        if text or markdown:
            self.unit(bool(text), bool(markdown), text_chars(text), prefix.startswith("#"))

    def blocks(self, node: LexborNode, depth: int, lists: list[str], quote: int) -> None:
        """The blocks of `node`'s children: runs of inline content, and block elements."""
        text: list[str] = []
        markdown: list[str] = []
        for child in children(node):
            if child.is_text_node:
                self.inline_text(child, text, markdown, code=False)
                continue
            tag = child.tag or ""
            if self.skipped(child, tag):
                continue
            if tag not in BLOCK_TAGS:
                self.inline(child, tag, text, markdown, depth + 1, code=False)
                continue
            self.emit("".join(text), "".join(markdown), lists, quote)
            text, markdown = [], []
            self.block(child, tag, depth + 1, lists, quote)
        self.emit("".join(text), "".join(markdown), lists, quote)

    def block(self, node: LexborNode, tag: str, depth: int, lists: list[str], quote: int) -> None:
        if depth > DEEPEST:
            flat = self.flat_text(node, " ")
            self.emit(flat, _escaped(flat), lists, quote)
            return
        heading = HEADINGS.get(tag)
        if heading is not None:
            text: list[str] = []
            markdown: list[str] = []
            self.inlinechildren(node, text, markdown, depth, code=False)
            self.emit("".join(text), "".join(markdown), lists, quote, heading + " ")
        elif tag == "pre":
            self.code_block(node, lists, quote)
        elif tag == "hr":
            self.markdown_blocks.append(_margin(lists, quote) + "---")
            self.unit(0, 1, 0)
        elif tag in LISTS:
            self.list_items(node, tag, depth, lists, quote)
        elif tag == "li":  # outside a list
            self.item(node, "- ", depth, lists, quote)
        elif tag == "blockquote":
            self.blocks(node, depth, lists, quote + 1)
        elif tag == "table":
            self.table(node, depth, lists, quote)
        elif tag != "br":
            self.blocks(node, depth, lists, quote)

    def list_items(
        self, node: LexborNode, tag: str, depth: int, lists: list[str], quote: int
    ) -> None:
        number = 1
        start = node.attrs.get("start") if tag == "ol" else None
        if start is not None and start.strip(_HTML_SPACE).isdigit() and start.isascii():
            number = int(start.strip(_HTML_SPACE)[:9])
        for child in children(node):
            child_tag = child.tag or ""
            if self.skipped(child, child_tag):
                continue
            if child_tag == "li":
                marker = f"{number}. " if tag == "ol" else "- "
                number += 1
                self.item(child, marker, depth + 1, lists, quote)
            elif child_tag in BLOCK_TAGS:
                self.block(child, child_tag, depth + 1, lists, quote)

    def item(self, node: LexborNode, marker: str, depth: int, lists: list[str], quote: int) -> None:
        inside = [*lists, " " * len(marker)]
        first = len(self.markdown_blocks)
        self.blocks(node, depth, inside, quote)
        if len(self.markdown_blocks) == first:
            return
        # The item's first block carries the marker in the place its indent holds for it.
        line = self.markdown_blocks[first]
        margin = _margin(inside, quote)
        if line.startswith(margin):
            self.markdown_blocks[first] = _margin(lists, quote) + marker + line[len(margin) :]

    def code_block(self, node: LexborNode, lists: list[str], quote: int) -> None:
        code = self.flat_text(node, "").strip("\n")
        if not code.strip(_HTML_SPACE):
            return
        lines = code.split("\n")
        texts = [line for line in lines if line.strip(_HTML_SPACE)]
        self.text_lines.extend(texts)
        self.unit(len(texts), 1, text_chars(code))
        names = [node.attrs.get("class")]
        child = node.child
        if child is not None and child.tag == "code":
            names.append(child.attrs.get("class"))
        match = _LANGUAGE.search(" ".join(filter(None, names)))
        fence = "````" if "```" in code else "```"
        margin = _margin(lists, quote)
        fenced = [fence + (match.group(1) if match else ""), *lines, fence]
        self.markdown_blocks.append("\n".join(margin + line for line in fenced))

    # --- tables ---------------------------------------------------------------------------

    def table(self, node: LexborNode, depth: int, lists: list[str], quote: int) -> None:
        grid = [
            [cell for cell in children(row) if cell.tag in CELLS and not self.skipped(cell, "td")]
            for row in self.rows(node)
        ]
        width = max((len(cells) for cells in grid), default=0)
        if width < 2 or any(
            cell.css_first(CELL_BLOCKS) is not None for cells in grid for cell in cells
        ):
            for cells in grid:
                for cell in cells:
                    self.blocks(cell, depth + 1, lists, quote)
            return
        lines = []
        added = chars = 0
        for cells in grid:
            texts, markdowns = [], []
            for cell in cells:
                text: list[str] = []
                markdown: list[str] = []
                self.inlinechildren(cell, text, markdown, depth + 1, code=False)
                texts.append(_folded("".join(text)))
                markdowns.append(_folded("".join(markdown)).replace("|", "\\|"))
            if any(texts):
                self.text_lines.append("\t".join(texts))
                added += 1
                chars += sum(map(text_chars, texts))
            markdowns += [""] * (width - len(markdowns))
            lines.append("| " + " | ".join(markdowns) + " |")
        if lines:
            lines.insert(1, "|" + " --- |" * width)
            margin = _margin(lists, quote)
            self.markdown_blocks.append("\n".join(margin + line for line in lines))
            self.unit(added, 1, chars)

    def rows(self, table: LexborNode) -> list[LexborNode]:
        found = []
        for child in children(table):
            tag = child.tag or ""
            if self.skipped(child, tag):
                continue
            if tag == "tr":
                found.append(child)
            elif tag in ROW_GROUPS:
                found.extend(
                    row
                    for row in children(child)
                    if row.tag == "tr" and not self.skipped(row, "tr")
                )
        return found

    # --- inline content -------------------------------------------------------------------

    def inline_text(
        self, node: LexborNode, text: list[str], markdown: list[str], code: bool
    ) -> None:
        value = _CONTROLS.sub("", node.text_content or "")
        text.append(value)
        markdown.append(value if code else _escaped(value))

    def inlinechildren(
        self, node: LexborNode, text: list[str], markdown: list[str], depth: int, code: bool
    ) -> None:
        for child in children(node):
            if child.is_text_node:
                self.inline_text(child, text, markdown, code)
                continue
            tag = child.tag or ""
            if not self.skipped(child, tag):
                self.inline(child, tag, text, markdown, depth + 1, code)

    def inline(
        self,
        node: LexborNode,
        tag: str,
        text: list[str],
        markdown: list[str],
        depth: int,
        code: bool,
    ) -> None:
        if depth > DEEPEST:
            flat = self.flat_text(node, " ")
            text.append(f" {flat} ")
            markdown.append(f" {_escaped(flat)} ")
            return
        if tag == "br":
            text.append(" ")
            markdown.append(" ")
            return
        if tag == "img":
            src = node.attrs.get("src")
            if src and not code and len(self.hrefs) < MAX_LINKS:
                alt = _escaped(_folded(_CONTROLS.sub("", node.attrs.get("alt") or "")))
                markdown.append(f"{IMAGE_OPEN}{alt}{TARGET}{len(self.hrefs)}{TARGET_END}")
                self.hrefs.append(src)
            return
        inner_text: list[str] = []
        inner_markdown: list[str] = []
        self.inlinechildren(node, inner_text, inner_markdown, depth, code or tag in CODE)
        joined_text = "".join(inner_text)
        joined = "".join(inner_markdown)
        if tag in BLOCK_TAGS:  # a block inside inline content: apart by spaces
            text.append(f" {joined_text} ")
            markdown.append(f" {joined} ")
            return
        text.append(joined_text)
        markdown.append(joined if code else self.marked(node, tag, joined, joined_text))

    def marked(self, node: LexborNode, tag: str, markdown: str, text: str) -> str:
        """`markdown` with the markup `tag` gives it, whitespace kept outside the markup."""
        core = markdown.strip(_HTML_SPACE)
        if not core:
            return markdown
        before = markdown[: len(markdown) - len(markdown.lstrip(_HTML_SPACE))]
        after = markdown[len(markdown.rstrip(_HTML_SPACE)) :]
        if tag == "a":
            href = node.attrs.get("href")
            if not href or len(self.hrefs) >= MAX_LINKS:
                return markdown
            core = f"{LINK_OPEN}{core}{TARGET}{len(self.hrefs)}{TARGET_END}"
            self.hrefs.append(href)
        elif tag in CODE:
            code = _folded(text)
            core = f"`{code}`" if "`" not in code else f"`` {code} ``"
        elif tag in EMPHASIS:
            mark = EMPHASIS[tag]
            if core.startswith(mark) and core.endswith(mark):
                return markdown  # <b><strong>x</strong></b>: marked once
            core = f"{mark}{core}{mark}"
        else:
            return markdown
        return before + core + after


def _margin(lists: list[str], quote: int) -> str:
    return "> " * quote + "".join(lists)


def read_parts(
    roots: list[LexborNode], skip: set[int], trim: bool = True
) -> tuple[str, str, list[str]]:
    """(plain text, Markdown with marked links, hrefs) of `roots` in the order given, without
    the subtrees whose roots' `mem_id`s are in `skip`, and, when `trim`, without the scraps at
    either end."""
    reading = Reading(skip)
    for root in roots:
        tag = root.tag or ""
        if tag in BLOCK_TAGS:
            reading.block(root, tag, 0, [], 0)
        else:
            text: list[str] = []
            markdown: list[str] = []
            reading.inline(root, tag, text, markdown, 0, code=False)
            reading.emit("".join(text), "".join(markdown), [], 0)
    if trim:
        lines, blocks = reading.trimmed()
    else:
        lines, blocks = reading.text_lines, reading.markdown_blocks
    return "\n".join(lines), "\n\n".join(blocks), reading.hrefs
