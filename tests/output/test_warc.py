"""output.warc: crawls of loopback webs archived in DIR/warc, read back by two independent readers
(warcio, which wrote them, and FastWARC, a C++ reader), each record's digests checked, and every
request the server logged found in the archive with the bytes it sent."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web
from fastwarc.warc import ArchiveIterator as FastIterator
from fastwarc.warc import WarcRecordType
from multidict import CIMultiDict, CIMultiDictProxy
from support.crawling import make_config, run
from support.loopback import LoopbackWeb
from support.warc_check import warcio_checks
from warcio.archiveiterator import ArchiveIterator

from crawler.cli import main
from crawler.config import Config
from crawler.errors import OutputError
from crawler.http.answer import Response
from crawler.output.warc import COMPLETE_NAME, WARC_DIR, Exchange, WarcSink, warc_files

pytestmark = pytest.mark.loopback

A = "127.0.1.1"
IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


@dataclass
class Record:
    kind: str
    uri: str
    headers: dict[str, str]
    head: bytes = b""
    """The HTTP head as archived."""
    payload: bytes = b""
    """The bytes after the HTTP head, as archived."""
    content: bytes = b""
    """The payload as warcio decodes it (chunked framing and Content-Encoding undone)."""
    file: str = ""
    extra: dict[str, str] = field(default_factory=dict)


def read_archive(data: Path) -> list[Record]:
    """Every record of DIR/warc, oldest file first, read by warcio, after both readers checked
    every digest and warcio's checker passed the files."""
    files = warc_files(data)
    assert files, "no WARC file written"
    warcio_checks(files)
    fast_count = 0
    for path in files:
        with path.open("rb") as stream:
            for fast in FastIterator(stream, parse_http=False):
                fast_count += 1
                assert fast.verify_block_digest(), fast.headers.get("WARC-Record-ID")
                if fast.record_type in (WarcRecordType.response, WarcRecordType.request):
                    fast.parse_http()
                    assert fast.verify_payload_digest(), fast.headers.get("WARC-Record-ID")
    records: list[Record] = []
    for path in files:
        with path.open("rb") as stream:
            for fast in FastIterator(stream, parse_http=False):
                headers = {name: value for name, value in fast.headers}
                kind = headers["WARC-Type"]
                block = fast.reader.read()
                record = Record(kind, headers.get("WARC-Target-URI", ""), headers, file=path.name)
                if kind in ("response", "request", "revisit"):
                    end = block.find(b"\r\n\r\n") + 4
                    record.head, record.payload = block[:end], block[end:]
                else:
                    record.content = block
                records.append(record)
    warcio_count = 0
    for path in files:
        with path.open("rb") as stream:
            for warc in ArchiveIterator(stream, check_digests=True):
                warcio_count += 1
                warc.content_stream().read()
    assert fast_count == warcio_count == len(records)
    return records


def decoded(data: Path, uri: str) -> bytes:
    """The body of `uri`'s first response, as warcio gives it to a replay tool (decoded)."""
    for path in warc_files(data):
        with path.open("rb") as stream:
            for warc in ArchiveIterator(stream):
                if (
                    warc.rec_type == "response"
                    and warc.rec_headers.get_header("WARC-Target-URI") == uri
                ):
                    return bytes(warc.content_stream().read())
    raise AssertionError(f"no response for {uri}")


def warc_config(**output: object) -> Config:
    return make_config(output={"warc": True, **output})


def html(text: str) -> bytes:
    return f"<html><head><title>{text}</title></head><body><p>{text}</p></body></html>".encode()


async def chunked_gzip(request: web.Request) -> web.StreamResponse:
    """An HTML page gzipped, sent in three chunks."""
    answer = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})
    answer.enable_chunked_encoding()
    await answer.prepare(request)
    body = gzip.compress(html("chunks of a gzipped page"), mtime=0)
    third = len(body) // 3
    for part in (body[:third], body[third : 2 * third], body[2 * third :]):
        await answer.write(part)
    await answer.write_eof()
    return answer


GZIPPED = gzip.compress(html("a gzipped page"), mtime=0)


def build_site(net: LoopbackWeb) -> str:
    site = net[A]
    site.robots("User-agent: *\nDisallow: /private\n")
    site.page(
        "/", "/gz", "/chunked", "/old", "/same1", "/same2", "/flaky", "/private/x", "/kept-out"
    )
    site.html(
        "/kept-out",
        '<html><head><meta name="robots" content="noindex"></head><body><a href="/">home</a>'
        "</body></html>",
        headers={"X-Robots-Tag": "nofollow"},
    )
    site.routes["/gz"] = lambda request: web.Response(
        body=GZIPPED, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
    )
    site.routes["/chunked"] = chunked_gzip
    site.redirect("/old", "/new", status=301)
    site.page("/new", "/")
    same = html("the same page twice").decode()
    site.html("/same1", same)
    site.html("/same2", same)
    site.sequence(
        "/flaky",
        lambda request: web.Response(status=503, text="busy", headers={"Retry-After": "0"}),
        lambda request: web.Response(text=html("after a 503").decode(), content_type="text/html"),
    )
    return site.url("/")


async def test_every_answer_is_archived_as_it_came_and_two_readers_verify_it(
    tmp_path: Path,
) -> None:
    async with LoopbackWeb(A) as net:
        seed = build_site(net)
        _, crawler = await run(warc_config(), [seed], data_dir=tmp_path)
        site = net[A]
    records = read_archive(tmp_path)
    assert records[0].kind == "warcinfo"
    info = records[0].content.decode()
    assert "http-header-user-agent: PoliteBot/0.1" in info and "config-digest: sha256:" in info
    # Every request the server logged is archived once, with its answer (or a revisit).
    asked = Counter(site.url(hit.path) for hit in net.hits)
    requests = Counter(record.uri for record in records if record.kind == "request")
    answers = Counter(record.uri for record in records if record.kind in ("response", "revisit"))
    assert requests == asked == answers
    assert asked[site.url("/flaky")] == 2 and asked[site.url("/robots.txt")] == 1
    assert site.url("/private/x") not in asked
    # robots.txt is archived before any page.
    uris = [record.uri for record in records if record.kind == "response"]
    assert uris[0] == site.url("/robots.txt")
    by_uri = {(record.kind, record.uri): record for record in records}
    # The bytes as they came: gzip as sent, and decoded by the reader.
    gz = by_uri["response", site.url("/gz")]
    assert b"Content-Encoding: gzip" in gz.head and gz.payload == GZIPPED
    assert decoded(tmp_path, site.url("/gz")) == html("a gzipped page")
    chunked = by_uri["response", site.url("/chunked")]
    assert b"Transfer-Encoding: chunked" in chunked.head
    assert chunked.payload.endswith(b"0\r\n\r\n") and not chunked.payload.startswith(b"\x1f\x8b")
    assert decoded(tmp_path, site.url("/chunked")) == html("chunks of a gzipped page")
    # The redirect and the retried 503 are archived too.
    assert by_uri["response", site.url("/old")].head.startswith(b"HTTP/1.1 301")
    flaky = [r for r in records if r.uri == site.url("/flaky") and r.kind == "response"]
    assert [r.head[:12] for r in flaky] == [b"HTTP/1.1 503", b"HTTP/1.1 200"]
    # The request as sent, with the crawl's User-Agent, from the host's address.
    request = by_uri["request", seed]
    assert request.head.startswith(b"GET / HTTP/1.1\r\nHost: 127.0.1.1:")
    assert b"\r\nUser-Agent: PoliteBot/0.1" in request.head
    response = by_uri["response", seed]
    assert request.headers["WARC-Concurrent-To"] == response.headers["WARC-Record-ID"]
    assert response.headers["WARC-IP-Address"] == A
    # The same payload at a second URL is a revisit of the first.
    same = [r for r in records if r.uri in (site.url("/same1"), site.url("/same2"))]
    first, again = [r for r in same if r.kind in ("response", "revisit")]
    assert (first.kind, again.kind) == ("response", "revisit")
    assert again.headers["WARC-Profile"] == IDENTICAL
    assert again.headers["WARC-Refers-To-Target-URI"] == first.uri
    assert again.headers["WARC-Refers-To-Date"] == first.headers["WARC-Date"]
    assert again.headers["WARC-Payload-Digest"] == first.headers["WARC-Payload-Digest"]
    # A metadata record per page: our robots decisions and its links.
    metadata = by_uri["metadata", seed]
    assert metadata.headers["WARC-Concurrent-To"] == response.headers["WARC-Record-ID"]
    fields = metadata.content.decode()
    assert "robots-txt: allowed: no rule of the group (line 1: User-agent: *) matches /" in fields
    assert "index: yes" in fields and f"outlink: {site.url('/gz')}" in fields
    assert "via: " + site.url("/old") in by_uri["metadata", site.url("/new")].content.decode()
    kept_out = by_uri["metadata", site.url("/kept-out")].content.decode().splitlines()
    assert kept_out[1:3] == [
        "index: no: meta robots: noindex",
        "follow: no: X-Robots-Tag: nofollow",
    ]
    assert ("metadata", site.url("/old")) not in by_uri  # a hop: its page is /new
    figures = crawler.archive_figures
    assert figures is not None and figures.revisits == 1 and figures.files == 1
    assert figures.records == len(records)
    assert not (tmp_path / WARC_DIR / COMPLETE_NAME).exists()  # closed cleanly


async def test_a_recrawl_archives_a_304_as_a_revisit_of_the_last_fetch(tmp_path: Path) -> None:
    async def validated(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(
            text=html("kept").decode(), content_type="text/html", headers={"ETag": '"v1"'}
        )

    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\n")
        site.routes["/"] = validated
        await run(warc_config(), [site.url("/")], data_dir=tmp_path)
        recrawl = make_config(output={"warc": True}, recrawl={"enabled": True, "after": 0.0})
        await run(recrawl, [site.url("/")], data_dir=tmp_path)
    records = read_archive(tmp_path)
    assert len(warc_files(tmp_path)) == 2  # a file per run
    first = next(r for r in records if r.kind == "response" and r.uri == site.url("/"))
    (revisit,) = [r for r in records if r.kind == "revisit"]
    assert revisit.head.startswith(b"HTTP/1.1 304")
    assert revisit.headers["WARC-Profile"] == NOT_MODIFIED
    assert revisit.headers["WARC-Refers-To-Target-URI"] == site.url("/")
    assert revisit.headers["WARC-Refers-To-Date"] == first.headers["WARC-Date"]


async def test_with_html_only_off_what_is_not_html_is_archived_whole(tmp_path: Path) -> None:
    pdf = b"%PDF-1.4\n" + os.urandom(100_000)
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\n")
        site.page("/", "/doc.pdf")
        site.routes["/doc.pdf"] = lambda request: web.Response(
            body=pdf, content_type="application/pdf"
        )
        every = make_config(
            output={"warc": True},
            fetch={"html_only": False},
            scope={"skip_extensions": ()},
        )
        html_only = make_config(output={"warc": True}, scope={"skip_extensions": ()})
        await run(html_only, [site.url("/")], data_dir=tmp_path / "html")
        records, _ = await run(every, [site.url("/")], data_dir=tmp_path / "every")
    # Fetched both times; archived only when its body is read.
    assert [hit.path for hit in net.hits].count("/doc.pdf") == 2
    archived = {(r.kind, r.uri) for r in read_archive(tmp_path / "html")}
    assert ("response", site.url("/doc.pdf")) not in archived
    assert ("response", site.url("/")) in archived
    whole = {r.uri: r for r in read_archive(tmp_path / "every") if r.kind == "response"}
    assert whole[site.url("/doc.pdf")].payload == pdf
    (document,) = [r for r in records if r.url == site.url("/doc.pdf")]
    assert document.follow_reason is not None and not document.links  # links from HTML only


async def test_a_body_cut_at_the_cap_is_marked_truncated(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\n")
        site.html("/", "<html><body>" + "x" * 8_000_000 + "</body></html>")
        site.html("/small", "<html><body>" + "x" * 50_000 + "</body></html>")
        config = make_config(output={"warc": True}, fetch={"max_body_bytes": 10_000})
        await run(config, [site.url("/"), site.url("/small")], data_dir=tmp_path)
    pages = {r.uri: r for r in read_archive(tmp_path) if r.kind == "response"}
    cut = pages[site.url("/")]
    assert cut.headers["WARC-Truncated"] == "length"
    assert 10_000 <= len(cut.payload) < 8_000_000
    # Cut at the cap, but the whole answer came in one read: it is archived whole.
    small = pages[site.url("/small")]
    assert len(small.payload) == 50_026 and "WARC-Truncated" not in small.headers


async def test_files_rotate_past_warc_file_bytes_each_with_its_warcinfo(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\n")
        links = [f"/{n}" for n in range(16)]
        site.page("/", *links)
        for link in links:
            # 200 KB that gzip cannot shrink much: 16 of them fill several 1 MB files.
            site.html(link, f"<html><body>{os.urandom(100_000).hex()}</body></html>")
        config = make_config(output={"warc": True, "warc_file_bytes": 1_000_000})
        await run(config, [site.url("/")], data_dir=tmp_path)
    records = read_archive(tmp_path)
    files = warc_files(tmp_path)
    assert len(files) >= 2
    for path in files:
        assert path.stat().st_size < 1_000_000 + 250_000  # one record past the size at most
        in_file = [r for r in records if r.file == path.name]
        assert in_file[0].kind == "warcinfo"
        info_id = in_file[0].headers["WARC-Record-ID"]
        assert all(r.headers["WARC-Warcinfo-ID"] == info_id for r in in_file[1:])
    responses = {r.uri for r in records if r.kind == "response"}
    assert {site.url(link) for link in links} <= responses


def test_a_killed_runs_partial_record_is_cut_when_the_directory_is_opened(
    tmp_path: Path,
) -> None:
    """The writer notes where its last whole record ends; a kill mid-write leaves bytes after
    that, which the next run's sink cuts before it begins its own file."""
    (tmp_path / WARC_DIR).mkdir()
    path = tmp_path / WARC_DIR / "crawl-20260101000000000-00000.warc.gz"
    whole = gzip.compress(b"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    path.write_bytes(whole + gzip.compress(b"WARC/1.1\r\n" + b"x" * 5000)[:300])
    (tmp_path / WARC_DIR / COMPLETE_NAME).write_text(f"{path.name} {len(whole)}\n")
    with WarcSink(tmp_path, info={"software": "test"}):
        pass
    assert path.read_bytes() == whole
    assert not (tmp_path / WARC_DIR / COMPLETE_NAME).exists()


def complete_records(path: Path) -> list[tuple[str, str]]:
    """(type, target URI) of every whole record of a file that may end in a partial one (a kill
    mid-write): warcio reads them, each with its digests checked, until the file breaks off."""
    read: list[tuple[str, str]] = []
    with path.open("rb") as stream:
        iterator = ArchiveIterator(stream, check_digests=True)
        try:
            for warc in iterator:
                warc.content_stream().read()
                read.append((warc.rec_type, warc.rec_headers.get_header("WARC-Target-URI")))
        except Exception:  # the partial record at the end, which a kill may leave
            pass
    return read


@pytest.mark.slow
async def test_a_kill_loses_no_archived_answer_of_a_url_marked_done(tmp_path: Path) -> None:
    """kill -9 mid-crawl, twice: every URL the state has marked done has its response in a
    file, whole; the next run cuts what the kill left partial, and at the end every file reads
    to its end."""
    hosts = ("127.0.1.1", "127.0.1.2")
    pages = 100
    data = tmp_path / "data"
    async with LoopbackWeb(*hosts) as net:
        for ip in hosts:
            site = net[ip]
            site.robots("User-agent: *\nCrawl-delay: 0.01\n")
            for n in range(pages):
                # Big enough that a kill is likely to land while the writer writes.
                body = f"<p>{os.urandom(20_000).hex()}</p>"
                site.page(f"/{n}", f"/{(n + 1) % pages}", f"/{(n + 7) % pages}", body=body)
        seeds = [net[ip].url("/0") for ip in hosts]
        options = ["--warc", "-s", "politeness.min_delay=0", "-s", "state.commit_interval=0.05"]
        command = [sys.executable, "-m", "crawler", *seeds, "--data", str(data), *options]
        # Late enough that URLs were marked done: the writer process is up and has written.
        for kill_after in (80, 40, None):
            start = len(net.hits)
            process = await asyncio.create_subprocess_exec(
                *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            while kill_after is not None and process.returncode is None:
                if len(net.hits) - start >= kill_after:
                    process.send_signal(signal.SIGKILL)
                    break
                await asyncio.sleep(0.002)
            out, err = await asyncio.wait_for(process.communicate(), timeout=60)
            if kill_after is None:
                assert process.returncode == 0, err.decode()
                break
            assert process.returncode == -signal.SIGKILL
            archived = {
                uri
                for path in warc_files(data)
                for kind, uri in complete_records(path)
                if kind == "response"
            }
            with contextlib.closing(sqlite3.connect(data / "state.sqlite")) as state:
                queued = {url for (url,) in state.execute("SELECT url FROM queue")}
            with contextlib.closing(sqlite3.connect(data / "index.sqlite")) as index:
                stored = {url for (url,) in index.execute("SELECT url FROM pages")}
            done = stored - queued
            assert done, "the kill came before any URL was done"
            assert done <= archived, sorted(done - archived)[:5]
    records = read_archive(data)  # every file whole, the killed runs' cut where they broke off
    responses = {r.uri for r in records if r.kind == "response"}
    assert {net[ip].url(f"/{n}") for ip in hosts for n in range(pages)} <= responses
    (line,) = [line for line in out.decode().splitlines() if line.startswith("warc: ")]
    # The figures of the run's own records; `crawl status` says the same, from summary.json.
    status = subprocess.run(
        [sys.executable, "-m", "crawler", "status", "--data", str(data)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert line in status.stdout.splitlines()
    last_file = [r for r in records if r.file == warc_files(data)[-1].name]
    assert line.startswith(f"warc: {len(last_file)} records")


def test_a_writer_process_that_dies_is_an_output_error_and_nothing_counts_stored(
    tmp_path: Path,
) -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    response = Response(
        "http://a.test/",
        200,
        CIMultiDictProxy(CIMultiDict()),
        "text/html",
        None,
        b"ok",
        raw=raw,
        request=b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        peer="127.0.1.1",
    )
    sink = WarcSink(tmp_path, info={"software": "test"})
    sink._process.kill()
    sink.exchange(Exchange("http://a.test/", 0.0, response))
    with pytest.raises(OutputError, match="the WARC writer process stopped answering"):
        sink.close()
    assert sink.stored == 0


@pytest.mark.slow
async def test_the_writer_process_dies_with_a_killed_crawl(tmp_path: Path) -> None:
    async with LoopbackWeb(A) as net:
        site = net[A]
        site.robots("User-agent: *\nCrawl-delay: 0.2\n")
        for n in range(50):
            site.page(f"/{n}", f"/{n + 1}")
        command = [sys.executable, "-m", "crawler", site.url("/0"), "--data", str(tmp_path)]
        process = await asyncio.create_subprocess_exec(
            *command, "--warc", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        while len(net.hits) < 4:
            await asyncio.sleep(0.01)
        writers = subprocess.run(
            ["pgrep", "-P", str(process.pid), "-f", "crawler.output.warc_writer"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        assert len(writers) == 1
        process.send_signal(signal.SIGKILL)
        await process.wait()
        for _ in range(100):
            if not Path(f"/proc/{writers[0]}").exists():
                break
            await asyncio.sleep(0.02)
        assert not Path(f"/proc/{writers[0]}").exists()


async def test_warc_index_lists_every_answer_where_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with LoopbackWeb(A) as net:
        seed = build_site(net)
        await run(warc_config(), [seed], data_dir=tmp_path)
    records = read_archive(tmp_path)
    capsys.readouterr()
    assert main(["warc-index", "--data", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    answers = [r for r in records if r.kind in ("response", "revisit")]
    assert len(lines) == len(answers) and err.strip() == f"crawl warc-index: {len(lines)} records"
    assert lines == sorted(lines)
    for line in lines:
        key, stamp, text = line.split(" ", 2)
        fields = json.loads(text)
        assert key.startswith("127.0.1.1:") and len(stamp) == 14
        path = tmp_path / WARC_DIR / fields["filename"]
        with path.open("rb") as stream:
            stream.seek(int(fields["offset"]))
            member = stream.read(int(fields["length"]))
        record = gzip.decompress(member)
        assert f"WARC-Target-URI: {fields['url']}\r\n".encode() in record
    statuses = {json.loads(line.split(" ", 2)[2])["status"] for line in lines}
    assert {"200", "301", "503"} <= statuses
    # A file broken off: what was whole is not listed as if all were well.
    path = warc_files(tmp_path)[0]
    path.write_bytes(path.read_bytes()[:-100])
    assert main(["warc-index", "--data", str(tmp_path)]) == 2
    assert f"crawl: {path}: cannot read the record at byte" in capsys.readouterr().err
    assert main(["warc-index", "--data", str(tmp_path / "none")]) == 2
    assert "no WARC files in" in capsys.readouterr().err


def test_fresh_keeps_the_warc_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / WARC_DIR).mkdir()
    archive = tmp_path / WARC_DIR / "crawl-20260101000000000-00000.warc.gz"
    archive.write_bytes(b"an archive")
    (tmp_path / "summary.json").write_text("{}")
    seed = "http://127.0.1.1:1/"  # nothing listens: the run ends at once
    main([seed, "--fresh", "--data", str(tmp_path), "-s", "robots.give_up_after=0"])
    err = capsys.readouterr().err
    assert f"deleting summary.json (WARC files in {tmp_path / WARC_DIR} are kept)" in err
    assert archive.read_bytes() == b"an archive"
