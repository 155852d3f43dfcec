#!/usr/bin/env python3
"""Ranking on real documentation: does `crawl search NAME` put the page that defines a name
first? (issues 19 and 38)

    python benchmarks/bench_ranking.py [--trees python3,postgresql,javadoc]
        [--root TREE=PATH ...] [--port 8797] [--baseline CRAWL] [--keep DIR] [--json]
        [-s KEY=VALUE ...]

The webs: three HTML documentation trees from three generators, as Debian's packages ship them,
served as they are by a private nginx on loopback (benchmarks/compare_wget.py's), each at
http://127.0.3.1:PORT/TREE/, with a robots.txt that allows everything:

    python3      Python's documentation (Sphinx, ~530 pages): python3-doc
    postgresql   PostgreSQL 15's (DocBook, ~1,170 pages): postgresql-doc-15
    javadoc      Apache Commons Lang 3's API (javadoc, ~730 pages): libcommons-lang3-java-doc

Each crawler crawls each tree into an index of its own (`crawl SEED --data DIR -s
politeness.min_delay=0`), then `crawl search --data DIR --json NAME` is asked for each name of
the tree below: modules, functions, methods, classes, SQL commands, programs, settings, types,
each with the page that defines it, and a few as a new user types them (a phrase in the singular
where the page says the plural). Book indexes, tables of contents, package summaries and class
lists name most of them too. A name counts when its defining page is the first result.

`-s KEY=VALUE` is handed to every crawl (`-s index.stemming=english` measures stemming).
`--baseline CRAWL` runs another build's `crawl` (another checkout's venv) the same way, so the
report gives before and after side by side. Exit status: 0 when ours ranks the defining page first
for every name of every tree, 1 when it does not or could not run (no nginx, no documentation, a
crawl that failed), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compare_wget import OURS_IP, CompareError, nginx_serving

PYTHON = {
    # module names: the module's page
    "itertools": "library/itertools.html",
    "functools": "library/functools.html",
    "heapq": "library/heapq.html",
    "bisect": "library/bisect.html",
    "collections": "library/collections.html",
    "sqlite3": "library/sqlite3.html",
    "argparse": "library/argparse.html",
    "pathlib": "library/pathlib.html",
    "shutil": "library/shutil.html",
    "tempfile": "library/tempfile.html",
    "subprocess": "library/subprocess.html",
    "json": "library/json.html",
    "csv": "library/csv.html",
    "zipfile": "library/zipfile.html",
    "hashlib": "library/hashlib.html",
    "secrets": "library/secrets.html",
    "statistics": "library/statistics.html",
    "decimal": "library/decimal.html",
    "datetime": "library/datetime.html",
    "textwrap": "library/textwrap.html",
    "difflib": "library/difflib.html",
    "pickle": "library/pickle.html",
    "enum": "library/enum.html",
    "weakref": "library/weakref.html",
    "dataclasses": "library/dataclasses.html",
    # functions, methods and classes: the page that documents them
    "os.path.join": "library/os.path.html",
    "json.dumps": "library/json.html",
    "re.sub": "library/re.html",
    "subprocess.run": "library/subprocess.html",
    "functools.lru_cache": "library/functools.html",
    "collections.OrderedDict": "library/collections.html",
    "itertools.groupby": "library/itertools.html",
    "asyncio.gather": "library/asyncio-task.html",
    "shutil.rmtree": "library/shutil.html",
    "heapq.heappush": "library/heapq.html",
    "bisect.insort": "library/bisect.html",
    "textwrap.dedent": "library/textwrap.html",
    "tempfile.mkdtemp": "library/tempfile.html",
    "str.join": "library/stdtypes.html",
    "contextlib.contextmanager": "library/contextlib.html",
    # as a new user types them: a phrase in the singular where the page says the plural, a
    # builtin a hundred pages mention
    "list comprehension": "tutorial/datastructures.html",
    "zip": "library/functions.html",
    # a type: the page of its type, not the built-in functions' page that gives it a line
    "range": "library/stdtypes.html",
    "bytearray": "library/stdtypes.html",
    "frozenset": "library/stdtypes.html",
}
POSTGRESQL = {
    # SQL commands: their reference page
    "CREATE INDEX": "sql-createindex.html",
    "CREATE TABLE": "sql-createtable.html",
    "ALTER TABLE": "sql-altertable.html",
    "CREATE VIEW": "sql-createview.html",
    "CREATE EXTENSION": "sql-createextension.html",
    "CREATE ROLE": "sql-createrole.html",
    "CREATE FUNCTION": "sql-createfunction.html",
    "CREATE TRIGGER": "sql-createtrigger.html",
    "VACUUM": "sql-vacuum.html",
    "EXPLAIN": "sql-explain.html",
    "COPY": "sql-copy.html",
    "REINDEX": "sql-reindex.html",
    "CLUSTER": "sql-cluster.html",
    "TRUNCATE": "sql-truncate.html",
    "GRANT": "sql-grant.html",
    "LISTEN": "sql-listen.html",
    "NOTIFY": "sql-notify.html",
    "INSERT": "sql-insert.html",
    "UPDATE": "sql-update.html",
    "DELETE": "sql-delete.html",
    # programs: their reference page
    "pg_dump": "app-pgdump.html",
    "pg_restore": "app-pgrestore.html",
    "psql": "app-psql.html",
    "initdb": "app-initdb.html",
    "pg_basebackup": "app-pgbasebackup.html",
    "pg_upgrade": "pgupgrade.html",
    "pgbench": "pgbench.html",
    # functions, settings, types, views: the page that documents them
    "jsonb_set": "functions-json.html",
    "to_char": "functions-formatting.html",
    "generate_series": "functions-srf.html",
    "string_agg": "functions-aggregate.html",
    "row_number": "functions-window.html",
    # a book index lists these with the table of string functions, which points on here
    "regexp_replace": "functions-matching.html",
    "regexp_match": "functions-matching.html",
    "regexp_split_to_array": "functions-matching.html",
    "regexp_instr": "functions-matching.html",
    "work_mem": "runtime-config-resource.html",
    "max_connections": "runtime-config-connection.html",
    "autovacuum_naptime": "runtime-config-autovacuum.html",
    "pg_stat_activity": "monitoring-stats.html",
    "pg_hba.conf": "auth-pg-hba-conf.html",
    "tsvector": "datatype-textsearch.html",
    # a type: its type's page, not its functions'
    "uuid": "datatype-uuid.html",
    "xml": "datatype-xml.html",
    "json": "datatype-json.html",
    "int4range": "rangetypes.html",
    "WITH RECURSIVE": "queries-with.html",
    "BRIN": "brin.html",
}
JAVADOC = {
    # classes: their page (the package summary and the class index list each one too)
    **{
        name: f"org/apache/commons/lang3/{name}.html"
        for name in (
            "StringUtils", "ArrayUtils", "ObjectUtils", "Validate", "RandomStringUtils",
            "SystemUtils", "BooleanUtils", "CharUtils", "ClassUtils", "EnumUtils", "LocaleUtils",
            "RegExUtils", "SerializationUtils", "StringEscapeUtils", "ThreadUtils", "Range",
            "Conversion", "CharSequenceUtils", "NotImplementedException",
        )
    },
    **{
        name: f"org/apache/commons/lang3/{package}/{name}.html"
        for package, names in (
            ("builder", ("EqualsBuilder", "HashCodeBuilder", "ToStringBuilder",
                         "CompareToBuilder", "ReflectionToStringBuilder", "ToStringStyle")),
            ("time", ("DateUtils", "DateFormatUtils", "FastDateFormat", "StopWatch",
                      "DurationFormatUtils")),
            ("tuple", ("Pair", "Triple", "ImmutablePair", "MutablePair")),
            ("math", ("NumberUtils", "Fraction")),
            ("reflect", ("FieldUtils", "MethodUtils", "ConstructorUtils", "TypeUtils")),
            ("exception", ("ExceptionUtils",)),
            ("concurrent", ("ConcurrentUtils", "BasicThreadFactory", "TimedSemaphore")),
            ("mutable", ("MutableInt",)),
        )
        for name in names
    },
    # methods: their class's page
    "StringUtils.isBlank": "org/apache/commons/lang3/StringUtils.html",
    "ArrayUtils.addAll": "org/apache/commons/lang3/ArrayUtils.html",
    "DateUtils.addDays": "org/apache/commons/lang3/time/DateUtils.html",
}  # fmt: skip


@dataclass(frozen=True)
class Tree:
    """A documentation tree: where Debian puts it, its package, a page it must hold, and the
    page that defines each name."""

    root: Path
    package: str
    probe: str
    defined_in: dict[str, str]


TREES = {
    "python3": Tree(
        Path("/usr/share/doc/python3/html"), "python3-doc", "library/itertools.html", PYTHON
    ),
    "postgresql": Tree(
        Path("/usr/share/doc/postgresql-doc-15/html"),
        "postgresql-doc-15",
        "sql-createindex.html",
        POSTGRESQL,
    ),
    "javadoc": Tree(
        Path("/usr/share/doc/libcommons-lang3-java/api"),
        "libcommons-lang3-java-doc",
        "org/apache/commons/lang3/StringUtils.html",
        JAVADOC,
    ),
}
ROBOTS = "User-agent: *\nAllow: /\n"


def crawl_and_rank(
    crawl: str, work: Path, name: str, seed: str, tree: str, settings: Sequence[str] = ()
) -> dict[str, Any]:
    data = work / f"{name}-{tree}-data"
    command = [crawl, seed, "--data", str(data), "-s", "politeness.min_delay=0"]
    command += [argument for setting in settings for argument in ("-s", setting)]
    command += ["-s", "politeness.per_host_concurrency=4", "-s", "concurrency=8"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CompareError(f"{name}: crawl exited {done.returncode}: {done.stderr[-400:]}")
    results = {}
    for api, page in TREES[tree].defined_in.items():
        search = [crawl, "search", "--data", str(data), "--json", "--limit", "3", api]
        found = subprocess.run(search, capture_output=True, text=True, check=False)
        hits = [json.loads(line) for line in found.stdout.splitlines() if line.strip()]
        first = hits[0]["url"].split(f"/{tree}/", 1)[-1] if hits else None
        results[api] = {"first": first, "expected": page, "ok": first == page}
    return results


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--trees", default=",".join(TREES), help=f"comma-separated, of {', '.join(TREES)}"
    )
    parser.add_argument("--root", action="append", default=[], metavar="TREE=PATH",
                        help="where a tree is, if not where Debian puts it")  # fmt: skip
    parser.add_argument("--port", type=int, default=8797)
    parser.add_argument("--baseline", metavar="CRAWL", help="another build's crawl executable")
    parser.add_argument("--keep", type=Path, help="keep the indexes and logs here")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting for every crawl, as `crawl -s` takes it")  # fmt: skip
    args = parser.parse_args(argv)
    args.trees = [name.strip() for name in args.trees.split(",") if name.strip()]
    unknown = [name for name in args.trees if name not in TREES]
    if unknown:
        parser.error(f"unknown tree {', '.join(unknown)}")
    roots = {}
    for given in args.root:
        name, _, path = given.partition("=")
        if name not in TREES or not path:
            parser.error(f"--root {given}: expected TREE=PATH, TREE one of {', '.join(TREES)}")
        roots[name] = Path(path)
    args.roots = {name: roots.get(name, TREES[name].root) for name in args.trees}
    return args


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    web = work / "web"
    web.mkdir(parents=True)
    for name, root in args.roots.items():
        if not (root / TREES[name].probe).is_file():
            raise CompareError(f"no {name} documentation in {root}: apt-get install "
                               f"{TREES[name].package}")  # fmt: skip
        (web / name).symlink_to(root.resolve(), target_is_directory=True)
    (web / "robots.txt").write_text(ROBOTS)
    crawlers = {"ours": str(Path(sys.executable).parent / "crawl")}
    if args.baseline:
        crawlers["baseline"] = args.baseline
    nginx = work / "nginx"
    nginx.mkdir()
    result: dict[str, Any] = {name: {} for name in crawlers}
    with nginx_serving(nginx, web, args.port):
        for tree in args.trees:
            index = "index.html" if tree != "javadoc" else "allclasses-index.html"
            seed = f"http://{OURS_IP}:{args.port}/{tree}/{index}"
            for name, crawl in crawlers.items():
                result[name][tree] = crawl_and_rank(crawl, work, name, seed, tree, args.settings)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            result = run(args, args.keep.resolve())
        else:
            with tempfile.TemporaryDirectory(prefix="bench-ranking-") as temporary:
                result = run(args, Path(temporary))
    except CompareError as error:
        print(f"bench_ranking: {error}", file=sys.stderr)
        return 1
    every = all(row["ok"] for tree in result["ours"].values() for row in tree.values())
    if args.json:
        print(json.dumps(result, indent=1))
        return 0 if every else 1
    names = list(result)
    for tree in args.trees:
        print(f"{tree} ({args.roots[tree]})")
        print(f"{'name':<28} " + " ".join(f"{name:<40}" for name in names) + "  defined in")
        for api, page in TREES[tree].defined_in.items():
            cells = []
            for name in names:
                row = result[name][tree][api]
                cells.append(f"{'first' if row['ok'] else row['first'] or 'nothing'!s:<40}")
            print(f"{api:<28} " + " ".join(cells) + f"  {page}")
        print()
    for name in names:
        counts = ", ".join(
            f"{tree} {sum(row['ok'] for row in result[name][tree].values())} of "
            f"{len(TREES[tree].defined_in)}"
            for tree in args.trees
        )
        print(f"{name}: the defining page first for {counts}")
    print(
        f"bar: the defining page first for every name of every tree: {'PASS' if every else 'FAIL'}"
    )
    return 0 if every else 1


if __name__ == "__main__":
    sys.exit(main())
