"""What tests share that is not a fixture: a loopback web of real servers (loopback.py), and the
crawl's helpers (crawling.py). Fixtures and markers are in tests/conftest.py."""
