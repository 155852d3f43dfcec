"""The other tools the benchmarks measure ours against, each run as a script in a process of its
own: Scrapy (scrapy_bench_spider.py, speed_scrapy.py) and a bare aiohttp + selectolax loop
(speed_bare.py)."""
