#!/usr/bin/env bash
# The system tools some tests start, installed where they are missing and apt-get can (as root):
# Debian's tinyproxy, the forward proxy tests/crawl/test_crawl_users.py starts on loopback, and
# microsocks, the SOCKS5 proxy of tests/crawl/test_crawl_socks.py. Where one cannot be
# installed, its tests skip and say why; this never fails the set-up.
missing=()
command -v tinyproxy >/dev/null || missing+=(tinyproxy)
command -v microsocks >/dev/null || missing+=(microsocks)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") \
        >/dev/null 2>&1 || echo "${missing[*]} could not be installed: their proxy tests skip"
fi
exit 0
