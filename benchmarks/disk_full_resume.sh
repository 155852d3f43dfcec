#!/bin/bash
# Issue 43's trial: the 20-host speed web crawled into a data directory on a 25 MB filesystem at
# concurrency 64; once the crawl stops for the full disk, the filesystem grows and the same command
# resumes it. Prints both runs' URLs: lines and the pages asked for more than once (nginx's log).
#
#   benchmarks/disk_full_resume.sh WORK [crawl options...]      (as root: it mounts a tmpfs)
#
# WORK: a --work directory bench_speed.py has filled (web/, nginx/), e.g. after
# `../.venv/bin/python bench_speed.py --rounds 1 --only ours-jsonl --work /tmp/b5k`.
# Options go to both runs: --output jsonl, --warc, -s index.writer=process.
set -u
work=${1:?usage: disk_full_resume.sh WORK [crawl options...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
disk=$(mktemp -d /tmp/disk-full-XXXXXX)
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; umount -l "$disk"; rmdir "$disk"' EXIT
sleep 1
mount -t tmpfs -o size=25m tmpfs "$disk"
: >"$work/nginx/access.log"
crawl=("$here/.venv/bin/crawl" "$work/web/seeds.txt" --data "$disk/data" -s concurrency=64
  -s politeness.min_delay=0 -s politeness.per_host_concurrency=8 -s output.min_free_space=0 "$@")
"${crawl[@]}" >"$disk.out1" 2>"$disk.err1"
echo "first run: exit $?; $(grep -h '^URLs' "$disk.out1")"
grep -hv '^crawl: obeying' "$disk.err1"
mount -o remount,size=400m "$disk"
"${crawl[@]}" >"$disk.out2" 2>"$disk.err2"
echo "resumed: exit $?; $(grep -h '^URLs' "$disk.out2")"
sleep 1.5 # nginx writes its log every second
python3 - "$work/nginx/access.log" <<'PY'
import sys
from collections import Counter
asked = Counter()
for line in open(sys.argv[1]):
    uri = line.split('"')[1]
    if uri != "/robots.txt":
        asked[(line.split()[1], uri)] += 1
print(f"pages asked for: {len(asked)}, more than once: {sum(n - 1 for n in asked.values())}")
PY
rm -f "$disk".out? "$disk".err?
