"""What a site's owner says about the use of its content, and what that means for the crawl's
purpose. Pure: no I/O, no clock.

    purposes.py  what a crawl may be for (search, ai-input, ai-train), as bits and words
    vocab.py     each signal's values read: Content-Signal, Content-Usage, noai, TDMRep
    signals.py   `UsageSignal`: one statement, where it came from; the decision for a purpose
    tdmrep.py    /.well-known/tdmrep.json read, bounded, and matched to a path
    headers.py   the signals of an answer's headers (X-Robots-Tag's noai: crawler.page.read)

Where each signal's lines apply in a robots.txt is crawler.robots' (groups and paths, as for
Allow and Disallow); what they mean for a purpose is this package's. The README's table of
signals says the same as `vocab.py`, with its sources.
"""

from crawler.usage.purposes import PURPOSES, Purpose, purpose_bit, refused_bits
from crawler.usage.signals import (
    UsageSignal,
    refusal,
    refused_purposes,
    refusing_kinds,
    signals_from_json,
    signals_json,
)
from crawler.usage.tdmrep import TdmRep, TdmRule, read_tdmrep

__all__ = [
    "PURPOSES",
    "Purpose",
    "TdmRep",
    "TdmRule",
    "UsageSignal",
    "purpose_bit",
    "read_tdmrep",
    "refusal",
    "refused_bits",
    "refused_purposes",
    "refusing_kinds",
    "signals_from_json",
    "signals_json",
]
