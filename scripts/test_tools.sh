#!/usr/bin/env bash
# The system tools some tests start, installed where they are missing and apt-get can (as root):
# Debian's tinyproxy, the forward proxy tests/crawl/test_crawl_users.py starts on loopback. Where
# one cannot be installed, its tests skip and say why; this never fails the set-up.
if ! command -v tinyproxy >/dev/null && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tinyproxy) \
        >/dev/null 2>&1 || echo "tinyproxy could not be installed: the proxy tests skip"
fi
exit 0
