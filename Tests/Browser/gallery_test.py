#!/usr/bin/env python3
"""The web gallery (`imagecache gallery`) in a real browser: headless Chromium driven by
WebDriver against the provider simulator, a sandbox imagecached and the gallery, each started
here from the built binaries on free ports and in a temporary folder.

    Tests/Browser/gallery_test.py [BIN_DIR]     (default .build/debug)

Every wait polls with a deadline; nothing sleeps for an event. Each check the gallery
must pass in a real browser is one function below; the script exits 1 if any failed.
With GALLERY_SCREENSHOTS=DIR it writes gallery-grid.png, gallery-fling.png and
gallery-detail.png there (the README's pictures come from `GALLERY_SCREENSHOTS=docs`).
"""
import http.client
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug"))
SHOTS = os.environ.get("GALLERY_SCREENSHOTS")
WIDTH, HEIGHT = 1280, 800
MASK = (1 << 64) - 1


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_for(probe, timeout, what, interval=0.05):
    """Polls `probe` until it returns a truthy value; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except Failure:
            raise
        except Exception as error:  # a page still loading, a socket not there yet
            last = error
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise Failure(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


# The simulator's deterministic totals (Sources/ProviderSimulator/API/SimulatedCatalog.swift).
def fnv1a(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h ^= byte
        h = (h * 0x100000001B3) & MASK
    return h


def mix(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def unsplash_total(query):
    return 50 + mix(fnv1a("unsplash|" + query)) % 1950


def query_with_pages(low, high, stem):
    """A query whose result count makes between `low` and `high` pages of 30."""
    for n in range(1000):
        query = f"{stem} {n}"
        pages = -(-unsplash_total(query) // 30)
        if low <= pages <= high:
            return query, pages
    raise Failure("no query with the wanted page count")


class Processes:
    """The simulator, the daemon and the gallery, stopped and removed whatever happens."""

    def __init__(self):
        self.workspace = tempfile.mkdtemp(prefix="icg-")
        self.children = {}

    def spawn(self, name, argv, log=None):
        out = open(os.path.join(self.workspace, name + ".log"), "wb") if log else subprocess.PIPE
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        self.children[name] = process
        return process

    def first_line(self, process, pattern, timeout):
        deadline = time.monotonic() + timeout
        buffered = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffered += chunk
                for line in buffered.decode(errors="replace").splitlines():
                    match = re.search(pattern, line)
                    if match:
                        return match
        raise Failure(f"no line matching {pattern!r} within {timeout} s: {buffered[-500:]!r}")

    def stop(self, name):
        process = self.children.pop(name, None)
        if process is None or process.poll() is not None:
            return process.returncode if process else None
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait(timeout=10)

    def close(self):
        for name in ["gallery", "daemon", "simulator"]:
            self.stop(name)
        shutil.rmtree(self.workspace, ignore_errors=True)


class Harness:
    def __init__(self):
        self.p = Processes()
        sim = self.p.spawn("simulator", [os.path.join(BIN, "imagecache"), "simulator", "--workspace", self.p.workspace + "/w"])
        info = json.loads(self.p.first_line(sim, r"^\{.*\}$", 60).group(0))
        self.sim = info
        # Search pages go stale after a second, so that with the simulator stopped a search
        # made earlier is answered from the cache marked stale (docs/protocol.md, `search`).
        with open(info["config"]) as f:
            config = f.read()
        config = config.replace("[cache]\n", "[cache]\nsearch_ttl = 1s\n", 1)
        with open(info["config"], "w") as f:
            f.write(config)
        self.p.spawn("daemon", [os.path.join(BIN, "imagecached"), "--config", info["config"]], log=True)
        wait_for(lambda: os.path.exists(info["socket"]), 60, "the daemon's socket")
        gallery = self.p.spawn("gallery", [os.path.join(BIN, "imagecache"), "--socket", info["socket"], "gallery", "--no-open"])
        self.url = self.p.first_line(gallery, r"(http://127\.0\.0\.1:(\d+)/([0-9a-f]+)/)", 60).group(1)
        parsed = urllib.parse.urlparse(self.url)
        self.port = parsed.port
        self.token = parsed.path.strip("/")
        options = Options()
        for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars", "--force-device-scale-factor=1"]:
            options.add_argument(flag)
        chromium = shutil.which("chromium")
        if chromium:
            options.binary_location = chromium
        self.driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
        self.driver.set_script_timeout(60)
        self.driver.set_page_load_timeout(30)

    def close(self):
        try:
            self.driver.quit()
        except Exception:
            pass
        self.p.close()

    # The simulator's log: provider requests and what the image host served.
    def log(self):
        with urllib.request.urlopen(self.sim["log"], timeout=10) as response:
            return json.load(response)

    def searches(self, log=None):
        """Unsplash search requests as (query, page) pairs, in order."""
        log = log or self.log()
        found = []
        for uri in log["api"]["unsplash"]:
            parsed = urllib.parse.urlparse(uri)
            if parsed.path.endswith("/search/photos"):
                q = urllib.parse.parse_qs(parsed.query)
                found.append((q.get("query", [""])[0], int(q.get("page", ["1"])[0])))
        return found

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def load(self):
        self.driver.get(self.url)
        wait_for(lambda: self.js("return document.body.dataset.ready === 'true'"), 30, "the page to connect")

    def type_query(self, text):
        box = self.driver.find_element(By.ID, "query")
        self.js("arguments[0].value = ''; arguments[0].dispatchEvent(new Event('input'))", box)
        # One WebDriver call types the characters one key event after another, at a typist's
        # pace or faster; a call per character would be paced by WebDriver's round trips.
        box.send_keys(text)

    def results_for(self, query, timeout=30):
        try:
            return wait_for(lambda: self.js(
                "const g = window.gallery; return g && g.query === arguments[0] && g.pages.length > 0 && g.grid.items.length > 0"
                " ? {pages: g.pages, totalPages: g.totalPages, items: g.grid.items.length} : null", query), timeout,
                f"results for {query!r}")
        except Failure as failure:
            said = self.js("return [document.getElementById('banner').textContent, document.getElementById('status').textContent]")
            raise Failure(f"{failure}; the page says {said}")

    def state(self):
        return self.js("""
            const g = window.gallery, top = g.grid.root.getBoundingClientRect().top;
            const visible = g.grid.items.filter((i) => i.frame && top + i.frame.y < innerHeight && top + i.frame.y + i.frame.height > 0)
              .map((i) => i.photo.id);
            return {visible, tiles: g.grid.snapshot(), stats: g.grid.stats,
                    photos: g.grid.items.map((i) => ({id: i.photo.id, thumbURL: i.photo.thumbURL, fullURL: i.photo.fullURL}))};""")

    def settled(self):
        """Every photo in view has its tile loaded with the right picture."""
        s = self.state()
        shown = {t["photo"]: t for t in s["tiles"]}
        failed = [t for t in s["tiles"] if t["state"] == "failed"]
        if failed:
            why = self.js("return document.querySelector('.tile[data-state=failed]').title")
            raise Failure(f"tiles failed: {failed[:3]} ({why})")
        if not s["visible"] or any(p not in shown or shown[p]["state"] != "loaded" for p in s["visible"]):
            return None
        return s

    def screenshot(self, name):
        if not SHOTS:
            return
        os.makedirs(SHOTS, exist_ok=True)
        path = os.path.join(SHOTS, name)
        self.driver.save_screenshot(path)
        try:  # smaller files for the docs: 3/4 size, 96 colours (Pillow, when installed)
            from PIL import Image
            with Image.open(path) as image:
                small = image.convert("RGB").resize((image.width * 3 // 4, image.height * 3 // 4), Image.LANCZOS)
                small.quantize(colors=96, dither=Image.Dither.NONE).save(path, optimize=True)
        except ImportError:
            pass


def image_path(url):
    return urllib.parse.urlparse(url).path


def check_tiles(state):
    """No tile shows another photo than its own, and each picture has its photo's shape."""
    for tile in state["tiles"]:
        if tile["shown"]:
            check(tile["shown"] == tile["photo"], f"slot {tile['slot']} shows {tile['shown']} for {tile['photo']}")
        if tile["state"] == "loaded" and tile["naturalWidth"] and tile["photoWidth"]:
            expected = tile["photoHeight"] / tile["photoWidth"]
            actual = tile["naturalHeight"] / tile["naturalWidth"]
            check(abs(actual - expected) / expected < 0.03,
                  f"slot {tile['slot']}'s picture is {tile['naturalWidth']}x{tile['naturalHeight']}, "
                  f"not the shape of {tile['photo']} ({tile['photoWidth']}x{tile['photoHeight']})")
    check(state["stats"]["wrongPhoto"] == 0, f"{state['stats']['wrongPhoto']} answers were for another photo")


# ---------------------------------------------------------------------------------------------
# The checks, in the order they run (each leaves the page where the next starts).

def typing_makes_one_provider_request(h):
    h.load()
    # The welcome screen's photo comes from the recent feed, before any search.
    wait_for(lambda: h.js("return document.getElementById('welcome').classList.contains('with-photo')"), 30, "the welcome photo")
    h.screenshot("gallery-welcome.png")
    before = len(h.searches())
    h.type_query("mountain lake")
    h.results_for("mountain lake")
    searches = h.searches()[before:]
    check(searches == [("mountain lake", 1)], f"provider saw {searches}, not one search for the final query")
    sent = h.js("return window.gallery.session.sent.filter((r) => r.method === 'search' && r.params.query).map((r) => r.params.query)")
    check(len(sent) >= 5, f"the page sent {len(sent)} searches while typing; each keystroke from 3 characters should send one")


def first_screen_fetches_only_what_is_in_view(h):
    arrivals_before = len(h.log()["images"]["arrivals"])
    s = wait_for(h.settled, 60, "the first screen's thumbnails")
    check_tiles(s)
    by_path = {}
    for p in s["photos"]:
        for url in (p["thumbURL"], p["fullURL"]):
            by_path[image_path(url)] = p["id"]
    log = h.log()
    # The grid's fetches since the results came (the welcome photo's came before).
    fetched = [by_path.get(path) for path in log["images"]["arrivals"]]
    grid_fetches = [f for f in fetched if f]
    visible = set(s["visible"])
    check(set(grid_fetches) == visible,
          f"fetched {sorted(set(grid_fetches) - visible)} not in view; missed {sorted(visible - set(grid_fetches))}")
    check(len(grid_fetches) == len(visible), f"{len(grid_fetches)} fetches for {len(visible)} tiles in view")
    check(len(s["photos"]) > len(visible), "the whole page fitted on the first screen: nothing proves lazy loading")
    h.screenshot("gallery-grid.png")
    # Scrolling one screen down fetches the photos that came into view, and only those.
    h.js("window.scrollBy(0, innerHeight)")
    s2 = wait_for(h.settled, 60, "the second screen's thumbnails")
    check_tiles(s2)
    fetched2 = [by_path.get(path) for path in h.log()["images"]["arrivals"]]
    new = set(f for f in fetched2 if f) - set(grid_fetches)
    check(new and new <= set(s2["visible"]), f"scrolling fetched {sorted(new)}; in view: {sorted(s2['visible'])}")
    del arrivals_before


def fling_cancels_most(h):
    h.js("window.scrollTo(0, 0)")
    wait_for(h.settled, 60, "the top screen")
    log0 = h.log()
    stats0 = h.state()["stats"]
    # A fling: 220 px per frame (about 13 000 px/s) until 200 photos have passed; pages load
    # as the end nears (the loop waits for them, bounded).
    h.js("""
        window.__fling = {done: false, frames: 0, passed: 0};
        const started = performance.now();
        function step() {
          const g = window.gallery, f = window.__fling;
          f.frames++;
          const top = g.grid.root.getBoundingClientRect().top + scrollY;
          const item = g.grid.items[199];
          if (item && item.frame && scrollY > top + item.frame.y) { f.done = true; return; }
          if (performance.now() - started > 45000) { f.done = true; f.timeout = true; return; }
          window.scrollBy(0, 220);
          requestAnimationFrame(step);
        }
        requestAnimationFrame(step);""")
    shot = bool(SHOTS)   # the picture is taken on the way back (below), mid-grid
    polls = 0
    while not h.js("return window.__fling.done"):
        s = h.state()
        check_tiles(s)
        polls += 1
        if not shot and h.js("return window.__fling.frames > 8 && document.querySelectorAll('.tile[data-state=loading]').length >= 8"):
            h.screenshot("gallery-fling.png")
            shot = True
        check(polls < 2000, "the fling never ended")
    check(not h.js("return window.__fling.timeout"), "the fling did not pass 200 photos within 45 s")
    s = wait_for(h.settled, 60, "the screen where the fling stopped")
    check_tiles(s)
    stats = s["stats"]
    shows = stats["shows"] - stats0["shows"]
    recycles = stats["recycles"] - stats0["recycles"]
    log = h.log()
    completed = sum(log["images"]["completed"].values()) - sum(log0["images"]["completed"].values())
    requested = len(log["images"]["arrivals"]) - len(log0["images"]["arrivals"])
    aborted = sum(log["images"]["aborted"].values()) - sum(log0["images"]["aborted"].values())
    print(f"    fling: {shows} shows, {recycles} recycled while loading, {requested} image requests reached the host, "
          f"{completed} completed, {aborted} aborted ({log['images']['abortedBytes'] - log0['images']['abortedBytes']} bytes discarded)")
    check(shows >= 100, f"only {shows} tiles were shown during a fling through 200 photos")
    check(recycles > shows / 2, f"{recycles} of {shows} shows were recycled while loading")
    check(completed < shows / 2, f"{completed} of {shows} thumbnails were downloaded in full: most should have been cancelled")
    if SHOTS:   # a fling back up through the pages: tiles mid-grid, recycled and loading
        h.js("""window.__back = {frames: 0};
            (function step() { window.__back.frames++; if (scrollY > 0 && window.__back.frames < 400) { scrollBy(0, -140); requestAnimationFrame(step); } })();""")
        wait_for(lambda: h.js("return window.__back.frames > 12"), 20, "the fling back")
        h.screenshot("gallery-fling.png")


def paging_stops_at_total_pages(h):
    query, pages = query_with_pages(3, 5, "harbour")
    h.js("window.scrollTo(0, 0)")
    before = len(h.searches())
    h.type_query(query)
    first = h.results_for(query)
    check(first["totalPages"] == pages, f"the page says {first['totalPages']} pages, the simulator has {pages}")

    def at_end():
        h.js("window.scrollTo(0, document.documentElement.scrollHeight)")
        return h.js("return !document.getElementById('end').hidden && window.gallery.pages.length")

    wait_for(at_end, 60, "the end of the results")
    for _ in range(3):   # scrolling on at the end asks for nothing more
        h.js("window.scrollTo(0, document.documentElement.scrollHeight)")
    # A round trip through the same session: anything the scrolling asked for was sent before it.
    h.driver.execute_async_script("const done = arguments[0]; window.gallery.session.call('stats', {}).then(done, done)")
    page_list = h.js("return window.gallery.pages")
    check(page_list == list(range(1, pages + 1)), f"pages loaded: {page_list}, expected 1…{pages}")
    asked = [p for q, p in h.searches()[before:] if q == query]
    check(sorted(asked) == list(range(1, pages + 1)), f"the provider was asked for pages {asked} of {query!r} ({pages} pages)")
    check("That is all" in h.driver.find_element(By.ID, "end").text, "no end-of-results line")


def detail_view_and_save(h):
    h.js("window.scrollTo(0, 0)")
    s = wait_for(h.settled, 60, "thumbnails to click")
    photo_id = s["visible"][0]
    tile = h.driver.find_element(By.CSS_SELECTOR, f'.tile[data-photo="{photo_id}"]')
    tile.click()
    wait_for(lambda: h.js("return document.querySelector('[data-detail=frame]').dataset.state === 'loaded'"), 60, "the large image")
    expected = h.driver.execute_async_script(
        "const done = arguments[1]; window.gallery.session.call('photo.get', {photo: arguments[0]}).then(done, (e) => done({error: e.message}))",
        photo_id)
    check("error" not in expected, f"photo.get failed: {expected}")
    wait_for(lambda: h.js("return document.querySelector('[data-detail=description]').textContent") == (expected.get("description") or ""),
             10, "the description")
    author = h.driver.find_element(By.CSS_SELECTOR, "[data-detail=author]")
    check(author.text == expected["author"]["name"], f"author {author.text!r}, expected {expected['author']['name']!r}")
    href = author.get_attribute("href")
    query = urllib.parse.parse_qs(urllib.parse.urlparse(href).query)
    check(query.get("utm_source") == ["imagecached"] and query.get("utm_medium") == ["referral"], f"profile link without attribution: {href}")
    check(image_path(href) == image_path(expected["author"]["profileURL"]), f"profile link {href} is not {expected['author']['profileURL']}")
    likes = h.driver.find_element(By.CSS_SELECTOR, "[data-detail=likes]").text
    check(re.sub(r"\D", "", likes) == str(expected["likes"]), f"likes shown {likes!r}, expected {expected['likes']}")
    shown = h.js("return document.querySelector('[data-detail=image]').dataset.photo")
    check(shown == photo_id, f"the large image is of {shown}, not {photo_id}")
    h.driver.find_element(By.CSS_SELECTOR, "[data-detail=save]").click()
    saved = wait_for(lambda: h.js("const c = document.querySelector('[data-detail=saved-path]'); return c && c.textContent"),
                     90, "the saved file's path")
    h.screenshot("gallery-detail.png")
    check(saved.startswith(h.sim["downloads"] + "/"), f"saved to {saved}, outside the download folder")
    with open(saved, "rb") as f:
        head = f.read(3)
    check(head == b"\xff\xd8\xff", f"{saved} is not a JPEG")
    check(os.path.getsize(saved) > 10000, f"{saved} is only {os.path.getsize(saved)} bytes")
    h.js("document.querySelector('[data-detail=close]').click()")


def foreign_requests_are_refused(h):
    base = f"127.0.0.1:{h.port}"

    def status(path, headers):
        connection = http.client.HTTPConnection("127.0.0.1", h.port, timeout=10)
        connection.putrequest("GET", path, skip_host=True)
        for k, v in headers.items():
            connection.putheader(k, v)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        connection.close()
        return response.status

    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    t = "/" + h.token
    cases = [
        ("the page with its token", t + "/", {"Host": base}, 200),
        ("no token", "/", {"Host": base}, 403),
        ("a wrong token", "/" + "0" * len(h.token) + "/", {"Host": base}, 403),
        ("a foreign Host (DNS rebinding)", t + "/", {"Host": f"evil.example:{h.port}"}, 403),
        ("a foreign Origin", t + "/app.js", {"Host": base, "Origin": "http://evil.example"}, 403),
        ("a WebSocket from a foreign Origin", t + "/ws", dict(upgrade, Host=base, Origin="http://evil.example"), 403),
        ("a WebSocket without the token", "/ws", dict(upgrade, Host=base, Origin=f"http://{base}"), 403),
        ("a file the daemon never delivered", t + "/image?path=" + urllib.parse.quote("/etc/passwd"), {"Host": base}, 404),
        ("the daemon's config", t + "/image?path=" + urllib.parse.quote(h.sim["config"]), {"Host": base}, 404),
    ]
    for name, path, headers, expected in cases:
        got = status(path, headers)
        check(got == expected, f"{name}: HTTP {got}, expected {expected}")
    # In the browser: a page of another origin (the simulator's) cannot open a session.
    h.driver.get(h.sim["log"])
    outcome = h.driver.execute_async_script("""
        const done = arguments[1];
        const ws = new WebSocket(arguments[0]);
        ws.onopen = () => done('opened');
        ws.onerror = () => done('refused');""", f"ws://{base}{t}/ws")
    check(outcome == "refused", f"a WebSocket from another origin was {outcome}")


def offline_shows_stale_and_says_so(h):
    h.load()
    check(h.p.stop("simulator") is not None, "the simulator did not stop")
    h.type_query("mountain lake")
    h.results_for("mountain lake", timeout=60)
    wait_for(lambda: h.js("return document.getElementById('grid').classList.contains('stale')"), 20, "the stale mark")
    banner = h.driver.find_element(By.ID, "banner")
    check("stale" in banner.text, f"banner says {banner.text!r}")
    s = wait_for(h.settled, 60, "cached thumbnails while offline")
    check_tiles(s)
    h.type_query("zebra crossing at dusk")
    wait_for(lambda: "network is unavailable" in h.driver.find_element(By.ID, "banner").text, 30,
             "the network-unavailable message")
    check(h.js("return window.gallery.grid.items.length") == 0, "an unanswered search still shows photos")


CHECKS = [
    typing_makes_one_provider_request,
    first_screen_fetches_only_what_is_in_view,
    fling_cancels_most,
    paging_stops_at_total_pages,
    detail_view_and_save,
    foreign_requests_are_refused,
    offline_shows_stale_and_says_so,
]


def main():
    started = time.monotonic()
    h = Harness()
    failed = 0
    try:
        for check_function in CHECKS:
            t0 = time.monotonic()
            try:
                check_function(h)
                print(f"ok    {check_function.__name__} ({time.monotonic() - t0:.1f} s)", flush=True)
            except Exception as error:
                failed += 1
                print(f"FAIL  {check_function.__name__}: {error}", flush=True)
                try:  # what the page was waiting for
                    print("    page:", h.js("""const g = window.gallery; return g && {banner: document.getElementById('banner').textContent,
                        status: document.getElementById('status').textContent, query: g.query, searches: (g.searchLog || []).slice(-4),
                        pending: [...g.session.pending.keys()].map((id) => g.session.sent.find((r) => r.id === id)).filter(Boolean)
                          .map((r) => r.method + ' ' + JSON.stringify(r.params)).slice(0, 12)}"""), flush=True)
                except Exception:
                    pass
                if not isinstance(error, Failure):
                    traceback.print_exc()
    finally:
        daemon_log = os.path.join(h.p.workspace, "daemon.log")
        if failed and os.path.exists(daemon_log):
            with open(daemon_log, errors="replace") as f:
                print("--- imagecached log (last 40 lines) ---\n" + "".join(f.readlines()[-40:]))
        h.close()
    print(f"{len(CHECKS) - failed} of {len(CHECKS)} browser checks passed in {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
