"""Replay as an archivist would: pywb (the Webrecorder project's wayback machine) serves WARC files
on loopback, and headless Chromium loads a page from it, its scripts run.

`Wayback(work, {"name": warc_dir, ...})` makes a pywb collection of each directory's WARC files
in `work` (`wb-manager init` and `add`), and as a context manager runs `wayback` on a free port of
127.0.0.1 (framed replay off, so that a page is the top document and `--dump-dom` sees it); the
server is stopped on leaving, whatever happened, and dies with the process that started it."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from selectolax.lexbor import LexborHTMLParser

from support.keyvalue import _die_with_parent

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_BIN = Path(sys.executable).parent
WAYBACK = shutil.which("wayback", path=str(_BIN)) or shutil.which("wayback")
WB_MANAGER = shutil.which("wb-manager", path=str(_BIN)) or shutil.which("wb-manager")
REPLAY_TIMESTAMP = "2099"
"""Asked of every URL: pywb gives the capture closest to it, the latest."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Wayback:
    def __init__(self, work: Path, collections: Mapping[str, Path]) -> None:
        assert WAYBACK is not None and WB_MANAGER is not None, "pywb is not installed"
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        (work / "config.yaml").write_text("framed_replay: false\n", "utf-8")
        for name, warc_dir in collections.items():
            files = sorted(str(path) for path in warc_dir.glob("*.warc.gz"))
            assert files, f"no WARC file in {warc_dir}"
            for command in (["init", name], ["add", name, *files]):
                subprocess.run(
                    [WB_MANAGER, *command], cwd=work, check=True, capture_output=True, timeout=120
                )
        self.port = _free_port()
        self._server: subprocess.Popen[bytes] | None = None

    def url(self, collection: str, url: str) -> str:
        """Where pywb replays `url` from `collection`."""
        return f"http://127.0.0.1:{self.port}/{collection}/{REPLAY_TIMESTAMP}/{url}"

    def __enter__(self) -> Wayback:
        assert WAYBACK is not None
        self._server = subprocess.Popen(
            [WAYBACK, "-p", str(self.port), "-b", "127.0.0.1"],
            cwd=self.work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # never outlives the tests, however they end
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return self
            except OSError:
                if self._server.poll() is not None or time.monotonic() > deadline:
                    self._stop()
                    raise AssertionError("pywb did not start") from None
                time.sleep(0.1)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop()

    def _stop(self) -> None:
        server = self._server
        if server is not None and server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # as root, Chromium refuses to start with its sandbox
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            # Virtual time runs until the network and the timers are idle: the page has loaded,
            # its stylesheets and images with it, and its load handlers have run.
            "--virtual-time-budget=15000",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def browser_dom(url: str, profile: Path) -> LexborHTMLParser:
    """The DOM headless Chromium holds once the page at `url` has loaded and its scripts ran."""
    return LexborHTMLParser(_chromium(profile, "--dump-dom", url).stdout)


def screenshot(url: str, path: Path, profile: Path, size: tuple[int, int] = (900, 640)) -> None:
    """A PNG of the page at `url` as headless Chromium shows it, `size` pixels."""
    _chromium(profile, f"--screenshot={path}", f"--window-size={size[0]},{size[1]}", url)
    assert path.is_file()
