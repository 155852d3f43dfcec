"""The exit statuses of `crawl`.

0 success; 1 nothing could be crawled: the host of every seed was given up (it did not
resolve, its certificate failed, it stayed unreachable); 2 bad input (arguments, files, config,
seeds, search queries), output that cannot be written, or a data directory another crawl is
using; 75 (EX_TEMPFAIL of sysexits.h) stopped by a full disk (or a quota, or a read-only
filesystem) under the data directory, the WARC directory or the log file, or too little free
space to start: free space and run the same command to resume; 130 stopped by SIGINT (Ctrl-C),
143 stopped by SIGTERM (128 + the signal's number, as a
shell reports a process the signal killed, so a supervisor tells a stop it asked for from an
interrupt).
"""

__all__ = [
    "DISK_FULL_ADVICE",
    "EXIT_BAD_INPUT",
    "EXIT_DISK_FULL",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_CRAWLED",
    "EXIT_OK",
    "EXIT_TERMINATED",
]

EXIT_OK = 0
EXIT_NOTHING_CRAWLED = 1
EXIT_BAD_INPUT = 2
EXIT_DISK_FULL = 75
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


DISK_FULL_ADVICE = "stopped; free space and run the same command to resume"
"""What a crawl a full disk stopped says after the error."""
