"""A page record crosses to the index writer's process as a pickle (crawler.output.records'
`PageRecord.__reduce__`): every field arrives as it left."""

from __future__ import annotations

import dataclasses
import pickle

from crawler.output.records import PageRecord


def test_every_field_of_a_page_record_survives_its_pickle() -> None:
    record = PageRecord(
        url="https://a.test/",
        final_url="https://a.test/home",
        status=200,
        fetched_at=12.5,
        depth=3,
        content_type="text/html",
        title="Home",
        description="the home page",
        language="ja",
        text="ホーム the whole text",
        nosnippet_text="kept out of snippets",
        headings="Home",
        links=("https://a.test/a", "https://a.test/b"),
        nofollow_links=("https://a.test/c",),
        redirects=("https://a.test/",),
        error=None,
        size=2048,
        truncated=True,
        cut="bounds: 1 MiB",
        index=True,
        index_reason=None,
        follow=False,
        follow_reason="meta robots: nofollow",
        sections=2,
        etag='"abc"',
        last_modified="Sat, 28 Nov 2026 10:00:00 GMT",
        digest="d1",
        lastmod=11.0,
        change="changed",
        usage_refusal="noai",
        main_text="the main text",
        markdown="# Home\n\nthe main text",
        main_fallback=None,
        frame_text="the frame",
        fields={"price": ["3", "4"]},
        fields_error="ValueError: no",
    )
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        arrived = pickle.loads(pickle.dumps(record, protocol))
        assert arrived == record
        # Field by field too: a field given to the wrong place in the constructor fails here.
        for field in dataclasses.fields(PageRecord):
            assert getattr(arrived, field.name) == getattr(record, field.name), field.name
