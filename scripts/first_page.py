"""A newcomer's first page, timed: seconds from `streamlit run app.py` to the home page's title and to
its "Start the race" button, over a few fresh servers.

Run from the repository root: `python -m scripts.first_page` (`--runs N`, default 3). Each run starts
`streamlit run app.py` on a free port of 127.0.0.1 with a fresh server process (its models not yet
loaded), while one headless Debian chromium (/usr/bin/chromium), started before the clock as a
newcomer's browser is already open, opens the home page at 1024×768 in presenter mode. It prints one
line per run (server up, title drawn, race button drawn, load average) and their medians; the
figures of docs/benchmarks.md came from it. tests/browser/test_browser_first_page.py proves by
structure that the page draws while the models load; this script gives the seconds, which no test
asserts (a busy machine is slower, not wrong).
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(browser) -> dict:
    """One fresh server, timed from its start to the title and to the race button."""
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    port = free_port()
    started = time.monotonic()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
                               "--server.port", str(port), "--server.headless", "true",
                               "--browser.gatherUsageStats", "false"],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:   # the address answers once the server is up
            try:
                page.goto(f"http://127.0.0.1:{port}/?presenter=1", timeout=2_000)
                break
            except Exception:
                if server.poll() is not None:
                    raise SystemExit("the server stopped before it answered")
                time.sleep(0.1)
        up = time.monotonic() - started
        page.locator("h1").first.wait_for(timeout=600_000)
        title = time.monotonic() - started
        page.get_by_role("button", name="Start the race").wait_for(timeout=600_000)
        race = time.monotonic() - started
        return {"up": up, "title": title, "race": race, "load": os.getloadavg()[0]}
    finally:
        page.close()
        server.terminate()
        server.wait()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh servers to time (default 3)")
    args = ap.parse_args(argv)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        runs = []
        for i in range(args.runs):
            r = one_run(browser)
            runs.append(r)
            print(f"run {i + 1}: server up {r['up']:.1f} s, title {r['title']:.1f} s, race button {r['race']:.1f} s "
                  f"(load average {r['load']:.1f})", flush=True)
        browser.close()
    med = {k: statistics.median(r[k] for r in runs) for k in ("up", "title", "race")}
    print(f"median of {len(runs)}: server up {med['up']:.1f} s, title {med['title']:.1f} s, "
          f"race button {med['race']:.1f} s")


if __name__ == "__main__":
    main()
