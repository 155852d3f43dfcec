"""What the benchmarks share: the loopback webs they crawl (testweb.py, served by aiohttp;
speedweb.py, served by nginx), the pages they are made of (pagegen.py), running their servers and
tools (processes.py), and the machine they ran on (machine.py)."""
