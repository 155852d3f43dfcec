"""An archive that replays: a page crawled with --page-requisites, its WARC served by pywb on
loopback and loaded in headless Chromium, shows its stylesheets applied (a computed style, one
from a stylesheet a second host serves, imported by the first) and its images loaded
(naturalWidth > 0); the same page crawled without requisites replays unstyled, its images
broken. Skipped where pywb or Chromium is missing: pywb is kept out of the project's venv (it
pins brotlipy, whose `brotli` module replaces Brotli's and breaks the crawl's decoding), in one of
its own on PATH: `python3 -m venv /opt/pywb && /opt/pywb/bin/pip install pywb`, then link its
`wayback` and `wb-manager` into /usr/local/bin."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest
from aiohttp import web
from support.crawling import PUBLIC_LOOPBACK, make_config, run
from support.loopback import LoopbackWeb
from support.replay import CHROMIUM, WAYBACK, Wayback, browser_dom

pytestmark = [
    pytest.mark.loopback,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt: chromium)"),
    pytest.mark.skipif(
        WAYBACK is None,
        reason="pywb is not on PATH (its own venv: it pins brotlipy, which breaks Brotli)",
    ),
]

A, B = "127.0.1.1", "127.0.1.2"


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = (b"\x00" + bytes(rgb) * width) * height
    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(rows))
        + (chunk(b"IEND", b""))
    )


PROBE = """<script>
addEventListener("load", function () {
  var widths = Array.prototype.map.call(document.images, function (image) {
    return image.naturalWidth;
  });
  document.documentElement.setAttribute("data-probe", JSON.stringify({
    body: getComputedStyle(document.body).color,
    cdn: getComputedStyle(document.querySelector(".cdn")).color,
    images: widths
  }));
});
</script>"""
"""Run by the replayed page itself once it has loaded: what the browser made of it."""


def build(net: LoopbackWeb) -> str:
    a, b = net[A], net[B]
    a.robots("User-agent: *\nDisallow:\n")
    b.robots("User-agent: *\nDisallow:\n")
    a.html(
        "/",
        '<html><head><title>A page to replay</title><link rel="stylesheet" href="/css/site.css">'
        f"{PROBE}</head><body><h1>A page to replay</h1><p class=cdn>styled from the CDN</p>"
        f'<img src="/img/photo.png"> <img src="{b.origin}/img/logo.png" '
        f'srcset="{b.origin}/img/logo.png 1x, {b.origin}/img/logo-2x.png 2x"></body></html>',
    )
    a.text(
        "/css/site.css",
        f"@import url({b.origin}/cdn.css);\n"
        "body { color: rgb(10, 20, 30); background: url(../img/bg.png) }\n",
        content_type="text/css",
    )
    b.text("/cdn.css", ".cdn { color: rgb(0, 128, 0) }", content_type="text/css")
    images = [
        (a, "/img/photo.png", png(40, 20, (200, 30, 30))),
        (a, "/img/bg.png", png(8, 8, (230, 230, 250))),
        (b, "/img/logo.png", png(30, 30, (30, 30, 200))),
        (b, "/img/logo-2x.png", png(60, 60, (30, 30, 200))),
    ]
    for site, path, body in images:
        site.routes[path] = lambda request, body=body: web.Response(
            body=body, content_type="image/png"
        )
    return a.url("/")


async def crawl_twice(tmp_path: Path) -> str:
    """The site crawled into tmp_path/with (page requisites) and tmp_path/without: its seed."""
    async with LoopbackWeb(A, B) as net:
        seed = build(net)
        for name, requisites in (("with", True), ("without", False)):
            config = make_config(
                fetch={**PUBLIC_LOOPBACK, "page_requisites": requisites}, output={"warc": True}
            )
            await run(config, [seed], data_dir=tmp_path / name)
    return seed


def probe(wayback: Wayback, collection: str, url: str, profile: Path) -> dict[str, object]:
    root = browser_dom(wayback.url(collection, url), profile).css_first("html")
    assert root is not None
    found = root.attributes.get("data-probe")
    assert found, "the replayed page's load handler did not run"
    result: dict[str, object] = json.loads(found)
    return result


async def test_a_page_archived_with_its_requisites_replays_styled_with_its_images(
    tmp_path: Path,
) -> None:
    seed = await crawl_twice(tmp_path)
    collections = {"with": tmp_path / "with" / "warc", "without": tmp_path / "without" / "warc"}
    with Wayback(tmp_path / "pywb", collections) as wayback:
        styled = probe(wayback, "with", seed, tmp_path / "profile")
        bare = probe(wayback, "without", seed, tmp_path / "profile")
    assert styled["body"] == "rgb(10, 20, 30)"  # the page's stylesheet
    assert styled["cdn"] == "rgb(0, 128, 0)"  # the one it imports from the second host
    assert styled["images"] == [40, 30]
    # Without requisites: the browser's defaults, and broken images.
    assert bare["body"] == bare["cdn"] == "rgb(0, 0, 0)"
    assert bare["images"] == [0, 0]
