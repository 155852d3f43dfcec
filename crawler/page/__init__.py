"""The page step: a fetched page's bytes and headers in, a `Page` out (SPEC section 7). Pure.

read.py         read_page: META robots, X-Robots-Tag and in-page sections decide what the page
                lets the crawl index and follow
walk.py         the walk over a parsed page, in Python (the reference), and its links
tree.py         what the Python walk asks of selectolax's tree (children, body, ancestry)
compiled.py     the same walk in C (_pagescan.c): loaded, checked, trusted or not, and chosen
exclusion.py    directive words; in-page section markers and stretches
charset.py      the HTML encoding sniff; labels as the WHATWG Encoding Standard reads them
bounds.py       how much of a hostile page is read: the prescan that bounds the parser's work
tag_classes.py  the tags the prescan's model of the tree builder tells apart, and how
sitemap.py      a sitemap's bytes in, its URLs out (XML, text, gzip), within the protocol's caps
requisites.py   what a browser loads to show a page: from its tree, a stylesheet, a srcset
"""

from crawler.page.read import Page, PageRules, read_page

__all__ = ["Page", "PageRules", "read_page"]
