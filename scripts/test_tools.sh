#!/usr/bin/env bash
# The system tools some tests start, installed where they are missing and apt-get can (as root):
# Debian's tinyproxy, the forward proxy tests/crawl/test_crawl_users.py starts on loopback;
# microsocks, the SOCKS5 proxy of tests/crawl/test_crawl_socks.py; and chromium, the headless
# browser that shows the crawl report, the live status page and a replayed archive
# (tests/crawl_report, tests/monitor, tests/output/test_replay.py). Where one cannot be
# installed, its tests skip and say why; this never fails the set-up.
missing=()
command -v tinyproxy >/dev/null || missing+=(tinyproxy)
command -v microsocks >/dev/null || missing+=(microsocks)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") \
        >/dev/null 2>&1 || echo "${missing[*]} could not be installed: their tests skip"
fi
exit 0
