"""A class under load: one presenter and 30 followers on one local server, through 20 steps of lesson 1,
page switches, a vote, and reloads.

Run from the repository root: `python -m scripts.class_load` (`--followers N`, `--steps N`, `--pause S`;
`--help` lists them). It starts `streamlit run app.py` on a free port of 127.0.0.1 (loopback only),
opens one headless Debian chromium (/usr/bin/chromium) with one browser context per person, so
every follower is its own Streamlit session, and then:

1. the presenter opens lesson 1 in presenter mode and starts a class;
2. every follower opens the class link and waits until it shows lesson 1;
3. the presenter presses Next phase `--steps` times (round 1 draft, verify, commit, round 2 draft, …),
   waiting after each until its own screen shows the new round and phase, then `--pause` seconds,
   as a teacher talks;
4. after the last step every follower must show the presenter's round and phase;
5. the presenter moves to lesson 5 (its question), the glossary and lesson 1 again by the sidebar's
   navigation: after each move every follower must show that page whole, one title, the
   presenter's (else it counts as a broken screen);
6. on lesson 5 every follower votes; `--reloads` followers and the presenter then reload, and the
   presenter's count must still be one vote per follower (else the surplus counts as double votes).

While it runs, the server process's resident memory (VmRSS) and CPU time are read from /proc
every second; it prints their peak and mean, the wall time, the load average at the start and the
end, and how long each of the presenter's steps took to show on its own screen. The exit status is 0 only when
every follower ended on the presenter's round with no broken screen and no double vote, 1 when not, 2 when the run could not be
done (the server did not start, a page never loaded, the deadline passed). Everything is bounded:
the follower count by the server's own class limit, every wait by a timeout, the whole run by
`--deadline`, and the server and browser are stopped on the way out.
"""
import argparse
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from specviz.hosting.config import Classes   # the server's default class limits

ROOT = Path(__file__).resolve().parents[1]

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHASES = ("draft", "verify", "commit")
WAIT_MS = 300_000   # the longest one page may take to show what it should, on a starved machine
LATE_MS = 30_000    # a presenter's step that takes longer is reported with what the followers show


class Failed(Exception):
    """The run could not be done (exit status 2), as opposed to followers ending elsewhere (1)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(log_path: Path):
    """`streamlit run app.py` on a free loopback port; yields (url, pid). Its output goes to a file,
    not a pipe: a pipe nobody reads would stop the server once it filled."""
    port = free_port()
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
                                 "--server.port", str(port), "--server.headless", "true",
                                 "--browser.gatherUsageStats", "false"],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(480):   # a starved CPU can take minutes just to import streamlit
                try:
                    urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                    break
                except OSError:
                    if proc.poll() is not None:
                        break
                    time.sleep(0.5)
            else:
                raise Failed("the server did not answer within four minutes")
            if proc.poll() is not None:
                raise Failed(f"the server exited: {log_path.read_text()[-1000:]}")
            yield url, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


class Sampler:
    """The resident memory and CPU use of one process, read from /proc every `every` seconds in a
    thread. CPU is the process's user + system time over wall time, in percent of one core (two
    busy cores read 200 %)."""

    def __init__(self, pid: int, every: float = 1.0):
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int, float]] = []   # (time, RSS bytes, CPU % since the last sample)
        self.marks: dict[str, float] = {}
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> tuple[int, float]:
        """(RSS in bytes, CPU seconds used so far)."""
        with open(f"/proc/{self.pid}/status") as f:
            rss = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()   # after the command name, which may hold spaces
        ticks = os.sysconf("SC_CLK_TCK")
        return rss, (int(fields[11]) + int(fields[12])) / ticks   # utime + stime

    def _run(self):
        last_t, (_, last_cpu) = time.monotonic(), self._read()
        while not self.stop_event.wait(self.every):
            with contextlib.suppress(OSError, StopIteration):   # the process may have just exited
                rss, cpu = self._read()
                now = time.monotonic()
                self.samples.append((now, rss, 100 * (cpu - last_cpu) / (now - last_t)))
                last_t, last_cpu = now, cpu

    def start(self):
        self.thread.start()
        return self

    def mark(self, name: str):
        """Remember when a stage began, to summarise it alone."""
        self.marks[name] = time.monotonic()

    def stop(self):
        self.stop_event.set()
        self.thread.join()

    def summary(self, since: str | None = None) -> dict:
        start = self.marks.get(since, 0.0) if since else 0.0
        chosen = [s for s in self.samples if s[0] >= start]
        if not chosen:
            return {}
        rss = [s[1] / 2**20 for s in chosen]
        cpu = [s[2] for s in chosen]
        return {"samples": len(chosen), "rss_peak_mib": max(rss), "rss_mean_mib": statistics.fmean(rss),
                "cpu_mean_pct": statistics.fmean(cpu), "cpu_peak_pct": max(cpu)}


def shows(page, shown: int, phase: str, timeout_ms: int = WAIT_MS):
    """Wait until `page` shows lesson 1 at round `shown` (1-based) in `phase`."""
    from playwright.sync_api import expect
    expect(page.locator(".sv-phase.on").first).to_contain_text(phase, timeout=timeout_ms)
    expect(page.get_by_text(re.compile(rf"round {shown}\b")).first).to_be_visible(timeout=timeout_ms)


def late(presenter, followers, step: int, first_ms: int = LATE_MS):
    """Wait until the presenter's screen shows `step`; when it takes longer than `first_ms`, say what
    the presenter and the followers show meanwhile (followers already on the step: the server ran it
    and the presenter's browser did not get its screen; none: the click or its run is late), then
    wait the rest."""
    try:
        shows(presenter, *cursor_after(step), timeout_ms=first_ms)
        return
    except AssertionError:
        pass
    ahead = sum(" {1} round {0} at".format(*cursor_after(step)) in follower_state(page) for page in followers)
    print(f"step {step}: the presenter still shows {follower_state(presenter)} after {first_ms / 1000:.0f} s; "
          f"{ahead} of {len(followers)} followers show the step", flush=True)
    shows(presenter, *cursor_after(step))


def cursor_after(steps: int) -> tuple[int, str]:
    """Lesson 1's round and phase after `steps` presses of Next phase from its start (Ready)."""
    return (steps - 1) // 3 + 1, PHASES[(steps - 1) % 3]


def sidebar(page):
    """Presenter mode folds the sidebar away (the class and the navigation are there): open it."""
    # the folded sidebar stays in the page, hidden: wait for whichever of the two is shown
    page.get_by_test_id("stSidebar").or_(page.get_by_test_id("stExpandSidebarButton")).filter(visible=True).first.wait_for()
    if page.get_by_test_id("stExpandSidebarButton").count():
        page.get_by_test_id("stExpandSidebarButton").click()
    return page.get_by_test_id("stSidebar")


def start_class(browser, url: str):
    """The presenter's page on lesson 1 in presenter mode, with a class started; (page, code)."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(f"{url}/draft_and_verify?presenter=1")
    page.locator("h1").first.wait_for()
    sidebar(page).get_by_role("button", name="Start a class").click()
    banner = page.get_by_test_id("stSidebar").get_by_text(re.compile(r"Class [A-Z2-9]{8}:")).first
    banner.wait_for()
    return page, re.search(r"Class ([A-Z2-9]{8}):", banner.inner_text())[1]


def go(presenter, title: str):
    """The presenter opens the page titled `title` by the sidebar's navigation."""
    from playwright.sync_api import expect
    sidebar(presenter).get_by_test_id("stSidebarNavLink").filter(has_text=title).first.click()
    expect(presenter.locator("h1").first).to_contain_text(title, timeout=WAIT_MS)


def broken(followers, title: str) -> list:
    """The followers that do not show page `title` whole (one title, that one) within the wait."""
    from playwright.sync_api import expect
    bad, until = [], time.monotonic() + WAIT_MS / 1000
    for i, page in enumerate(followers):
        try:
            expect(page.locator("h1").first).to_contain_text(title, timeout=max(1000, 1000 * (until - time.monotonic())))
            if page.locator("h1").count() != 1 or page.get_by_test_id("stException").count():
                bad.append((i, page.locator("h1").all_inner_texts()))
        except AssertionError:
            bad.append((i, follower_state(page)))
    return bad


def answered(presenter, followers: int) -> int:
    """How many answers the presenter's screen counts once every follower has answered (more than
    `followers` would be a double vote)."""
    text = presenter.get_by_text(re.compile(r"of \d+ following students? (have|has) answered")).last
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            n = int(re.search(r"(\d+) of", text.inner_text(timeout=5000))[1])
            if n >= followers:
                return n
        presenter.wait_for_timeout(1000)
    return -1


def join(browser, url: str, code: str, n: int, every: float) -> tuple[list, list]:
    """`n` followers, each in its own browser context (its own session), opening the class link one
    every `every` seconds, as a room scans the code; returns (pages, indices of the pages that never
    showed lesson 1)."""
    from playwright.sync_api import expect
    pages = []
    for _ in range(n):
        page = browser.new_context(viewport={"width": 800, "height": 600}).new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{url}/?class={code}", wait_until="commit")
        pages.append(page)
        page.wait_for_timeout(every * 1000)
    lost, until = [], time.monotonic() + WAIT_MS / 1000
    for i, page in enumerate(pages):   # one wait for all: a page still blank after it counts as lost
        try:
            expect(page.locator("h1").first).to_contain_text(
                "Draft and verify", timeout=max(1000, 1000 * (until - time.monotonic())))
        except AssertionError:
            lost.append(i)
    return pages, lost


def follower_state(page) -> str:
    """What a follower shows, for the report: its title, phase badge and round, and the page and
    screen number in its address (a page there other than the title's: the browser has the switch
    but not its screen; a screen number behind: see appkit.screen)."""
    address = re.search(r"//[^/]+/([^?]*)(?:.*[?&]seen=(\d+))?", page.url)
    where = f" at /{address[1]}" + (f" screen {address[2]}" if address[2] else "") if address else ""
    with contextlib.suppress(Exception):
        title = page.locator("h1").first.inner_text(timeout=1000)
        if page.locator(".sv-phase.on").count() == 0:
            return f"{title}{where}"
        phase = page.locator(".sv-phase.on").first.inner_text(timeout=1000)
        found = re.search(r"round \d+", page.locator("body").inner_text(timeout=1000))
        return f"{title}: {phase.strip()} {found[0] if found else '(no round)'}{where}"
    return f"(nothing readable){where}"


def run(args) -> int:
    from playwright.sync_api import sync_playwright
    t0, load_at_start = time.monotonic(), os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp) / "server.log") as (url, pid):
        sampler = Sampler(pid).start()
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                try:
                    presenter, code = start_class(browser, url)
                    print(f"class {code} on {url}; {args.followers} followers joining", flush=True)
                    sampler.mark("join")
                    followers, lost = join(browser, url, code, args.followers, args.join_every)
                    print(f"{len(followers) - len(lost)} of {len(followers)} followers show lesson 1 after "
                          f"{time.monotonic() - t0:.0f} s" + (f"; never: {[(i, follower_state(followers[i])) for i in lost]}" if lost else ""),
                          flush=True)
                    if lost and args.screenshot:
                        followers[lost[0]].screenshot(path=args.screenshot)
                    sampler.mark("steps")
                    latency = []   # seconds from each click on Next phase to the presenter's own screen showing it
                    for step in range(1, args.steps + 1):
                        if time.monotonic() - t0 > args.deadline:
                            raise Failed(f"the deadline of {args.deadline} s passed at step {step}")
                        clicked = time.monotonic()
                        presenter.get_by_role("button", name="Next phase").click()
                        try:
                            late(presenter, followers, step)
                        except AssertionError:
                            print("step {}: the presenter's screen never showed round {}, {}: it shows {}".format(
                                step, *cursor_after(step), follower_state(presenter)), flush=True)
                            return 1
                        latency.append(time.monotonic() - clicked)
                        print(f"step {step}: presenter on round {cursor_after(step)[0]}, {cursor_after(step)[1]} "
                              f"after {latency[-1]:.1f} s", flush=True)
                        presenter.wait_for_timeout(args.pause * 1000)
                    sampler.mark("check")
                    shown, phase = cursor_after(args.steps)
                    behind = []
                    for i, page in enumerate(followers):
                        try:   # the first ones get the whole wait; later ones have had it meanwhile
                            shows(page, shown, phase)
                        except AssertionError:
                            behind.append((i, follower_state(page)))
                    sampler.mark("pages")
                    broken_screens, double_votes = pages_and_reloads(presenter, followers, args.reloads)
                finally:
                    browser.close()
        finally:
            sampler.stop()
    wall = time.monotonic() - t0
    report(sampler, args, wall, shown, phase, behind, latency, load_at_start)
    print(f"broken screens after page switches: {len(broken_screens)}" + (f" {broken_screens}" if broken_screens else "")
          + f"; double votes after {args.reloads} follower reload(s) and the presenter's: {double_votes}")
    return 1 if behind or broken_screens or double_votes else 0


def pages_and_reloads(presenter, followers, reloads: int) -> tuple[list, int]:
    """Steps 5 and 6 of the module's list: (broken screens as (page, follower, what it showed), double votes)."""
    bad = []
    go(presenter, "Biased admission")
    bad += [("Biased admission", *b) for b in broken(followers, "Biased admission")]
    for page in followers:
        with contextlib.suppress(Exception):
            page.get_by_role("radiogroup").last.get_by_text("exactly p(A)", exact=True).click()
    counted = answered(presenter, len(followers))
    for page in followers[:reloads]:
        page.reload(wait_until="commit")
    presenter.reload()
    presenter.locator("h1").first.wait_for()
    bad += [("Biased admission, reloaded", *b) for b in broken(followers[:reloads], "Biased admission")]
    for page in followers[:reloads]:   # a reloaded follower may try again: the class refuses it
        with contextlib.suppress(Exception):
            page.get_by_role("radiogroup").last.get_by_text("more than p(A)", exact=True).click(timeout=5000)
    after = answered(presenter, len(followers))
    print(f"votes counted: {counted} before the reloads, {after} after; {len(followers)} followers", flush=True)
    for title in ("Glossary", "Draft and verify"):
        go(presenter, title)
        bad += [(title, *b) for b in broken(followers, title)]
    return bad, max(0, counted - len(followers)) + max(0, after - len(followers))


def report(sampler: Sampler, args, wall: float, shown: int, phase: str, behind: list, latency: list, load: tuple):
    """Print the outcome, the presenter's step latency, and the server's memory and CPU, for the
    whole run and for the steps alone."""
    print(f"\n{args.followers - len(behind)} of {args.followers} followers ended on the presenter's round "
          f"{shown}, {phase}" + (f"; not: {behind}" if behind else ""))
    print(f"wall time {wall:.0f} s")
    print(f"presenter's step (click to its own screen showing it): median {statistics.median(latency):.1f} s, "
          f"max {max(latency):.1f} s over {len(latency)} steps")
    for label, since in (("whole run (server start to last check)", None), ("joining and the steps", "join"),
                         ("the steps and the final check", "steps")):
        s = sampler.summary(since)
        if s:
            print(f"server, {label}: RSS peak {s['rss_peak_mib']:.0f} MiB, mean {s['rss_mean_mib']:.0f} MiB; "
                  f"CPU mean {s['cpu_mean_pct']:.0f} %, peak {s['cpu_peak_pct']:.0f} % of one core "
                  f"({s['samples']} samples, one a second)")
    print(f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) at the start "
          f"{' '.join(f'{x:.1f}' for x in load)}, now {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def main() -> int:
    limit = Classes().max_followers
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--followers", type=int, default=30, help=f"followers, 1 to {limit} (the server's class limit)")
    p.add_argument("--steps", type=int, default=20, help="presses of Next phase, 1 to 90")
    p.add_argument("--pause", type=float, default=2.0, help="seconds the presenter waits after each step")
    p.add_argument("--join-every", type=float, default=1.0, help="seconds between two followers opening the link")
    p.add_argument("--reloads", type=int, default=5, help="followers that reload after voting")
    p.add_argument("--screenshot", help="where to save the screen of the first follower that never showed lesson 1")
    p.add_argument("--deadline", type=float, default=3600, help="seconds the whole run may take")
    args = p.parse_args()
    if not 1 <= args.followers <= limit or not 1 <= args.steps <= 90 or not 0 <= args.pause <= 60:
        p.error(f"--followers must be 1 to {limit}, --steps 1 to 90, --pause 0 to 60")
    if not Path(CHROMIUM).exists():
        print(f"no chromium at {CHROMIUM} (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    try:
        return run(args)
    except Failed as e:
        print(f"could not finish: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
