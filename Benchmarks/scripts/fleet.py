#!/usr/bin/env python3
"""Fleet benchmark: daemons sharing thumbnails through memcached.

Starts, on loopback, an image origin shaped like a distant CDN (every connection through a
shaping proxy: +RTT_MS round trip, at most KIB_PER_S per connection), three memcached nodes and
imagecached daemons (the build's binaries; each with its own cache folder), and measures in one run:

  1. upstream bytes for COUNT thumbnails wanted by two hosts at once, with the tier and without
     (target with: <= 1.02 x the unique bytes; without: ~2 x);
  2. a second, empty host warming the same COUNT from the tier vs from the network (target >= 5 x);
  3. shared-hit latency p50/p99 (thumbnail.show answered from the tier) beside a local disk hit
     and memcached's own bare `mg` round trip for a value of the same size (target p50 <= 2 x bare);
  4. one node killed: the extra upstream share (about 1/3) and the errors (target 0).

The origin's images are COUNT distinct 800x600 JPEGs made here with Pillow.
PARTS picks the measurements (default 1234); without 1 or 2, a host fills the tier before 3.
Usage: Benchmarks/scripts/fleet.sh   (COUNT=500 RTT_MS=20 KIB_PER_S=2048 BIN_DIR=.build/debug PARTS=1234)
"""
import io, json, os, random, shutil, socket, statistics, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from PIL import Image, ImageDraw

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("BIN_DIR", os.path.join(ROOT, ".build", "debug"))
COUNT = int(os.environ.get("COUNT", "500"))
RTT = int(os.environ.get("RTT_MS", "20")) / 1000.0
RATE = int(os.environ.get("KIB_PER_S", "2048")) * 1024
SIZE = 256
PARTS = os.environ.get("PARTS", "1234")
TIMEOUT = os.environ.get("TIMEOUT", "50ms")  # [shared] timeout
WORK = tempfile.mkdtemp(prefix="imagecache-fleet.")
children = []


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def make_images():
    images = {}
    for i in range(COUNT):
        rnd = random.Random(i)
        im = Image.new("RGB", (800, 600), tuple(rnd.randrange(256) for _ in range(3)))
        d = ImageDraw.Draw(im)
        for _ in range(40):
            x, y = rnd.randrange(800), rnd.randrange(600)
            d.ellipse([x, y, x + rnd.randrange(20, 300), y + rnd.randrange(20, 300)], fill=tuple(rnd.randrange(256) for _ in range(3)))
        buf = io.BytesIO(); im.save(buf, "JPEG", quality=85)
        images[f"/img/{i}.jpg"] = buf.getvalue()
    return images


class Origin:
    """The CDN: serves the images and counts the bytes it sent."""
    def __init__(self, images):
        self.images, self.sent, self.lock = images, 0, threading.Lock()
        origin = self
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def do_GET(self):
                body = origin.images.get(self.path.split("?")[0])
                if body is None:
                    self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
                self.send_response(200); self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
                with origin.lock: origin.sent += len(body)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = self.server.server_address[1]

    def bytes_sent(self):
        with self.lock: return self.sent


class ShapingProxy:
    """Per connection: half the RTT each way, and at most RATE bytes/s towards the client."""
    def __init__(self, upstream_port):
        self.listener = socket.socket(); self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0)); self.listener.listen(256)
        self.port, self.upstream = self.listener.getsockname()[1], upstream_port
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            time.sleep(RTT)  # the handshake's round trip
            up = socket.create_connection(("127.0.0.1", self.upstream))
            for a, b, rate in ((client, up, None), (up, client, RATE)):
                threading.Thread(target=self.relay, args=(a, b, rate), daemon=True).start()

    @staticmethod
    def relay(src, dst, rate):
        free_at = 0.0
        try:
            while True:
                chunk = src.recv(16384)
                if not chunk: break
                deliver = max(time.monotonic() + RTT / 2, free_at)
                delay = deliver - time.monotonic()
                if delay > 0: time.sleep(delay)
                dst.sendall(chunk)
                free_at = deliver + (len(chunk) / rate if rate else 0)
        except OSError:
            pass
        for s in (src, dst):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass


class Memcached:
    def __init__(self):
        self.port = free_port(); self.start()

    def start(self):
        self.proc = subprocess.Popen(["memcached", "-u", "root", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-m", "256"])
        children.append(self.proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try: socket.create_connection(("127.0.0.1", self.port)).close(); return
            except OSError: time.sleep(0.02)
        raise SystemExit("memcached did not start")

    def kill(self):
        self.proc.kill(); self.proc.wait()

    @property
    def address(self): return f"127.0.0.1:{self.port}"


class Daemon:
    def __init__(self, name, servers, prefix, memory_limit="128MiB"):
        folder = os.path.join(WORK, name); os.makedirs(folder)
        self.socket_path = os.path.join(folder, "d.sock")
        config = os.path.join(folder, "cache.conf")
        with open(config, "w") as f:
            f.write(f"""[daemon]
socket = "{self.socket_path}"
state_dir = "{folder}/state"
log_level = warning
max_pending_per_session = 4096
[cache]
cache_dir = "{folder}/cache"
memory_limit = {memory_limit}
[network]
allowed_hosts = 127.0.0.1
allow_http = true
max_connections = 16
max_connections_per_host = 16
[shared]
servers = {", ".join(servers)}
prefix = "{prefix}"
timeout = {TIMEOUT}
""")
        self.proc = subprocess.Popen([os.path.join(BIN, "imagecached"), "--config", config], stderr=open(os.path.join(folder, "log"), "w"))
        children.append(self.proc)
        deadline = time.monotonic() + 30
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX); self.sock.connect(self.socket_path); break
            except OSError:
                if time.monotonic() > deadline: raise SystemExit(f"{name} did not start")
                time.sleep(0.05)
        self.reader = self.sock.makefile("rb"); self.next_id = 0

    def send(self, method, params):
        self.next_id += 1
        self.sock.sendall((json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n").encode())
        return self.next_id

    def read(self): return json.loads(self.reader.readline())

    def call(self, method, params):
        i = self.send(method, params)
        while True:
            m = self.read()
            if m.get("id") == i: return m

    def prefetch(self, urls):
        """Prefetches every URL; returns (seconds, failed items)."""
        start = time.monotonic()
        i = self.send("prefetch", {"urls": urls, "size": SIZE})
        finished, failed, answered = 0, 0, False
        while finished < len(urls) or not answered:
            m = self.read()
            if m.get("id") == i:
                answered = True
                if "error" in m: raise SystemExit(f"prefetch failed: {m}")
            elif m.get("method") == "prefetch.finished":
                finished += 1
                if not m["params"].get("ok"): failed += 1
        return time.monotonic() - start, failed

    def show(self, url, slot=0):
        start = time.monotonic()
        m = self.call("thumbnail.show", {"slot": slot, "url": url, "size": SIZE})
        if "error" in m: raise SystemExit(f"show failed: {m}")
        return time.monotonic() - start, m["result"]["source"], m["result"]["bytes"]

    def tier(self):
        """This host's stats.shared, briefly."""
        shared = self.call("stats", {})["result"].get("shared")
        if not shared: return "no tier"
        nodes = " ".join(f"{n['state']}/{n['errors']}err/{n['ejections']}ej" for n in shared["nodes"])
        return f"tier hits {shared['thumbnailHits']}, writes {shared['writes']} ({shared['writesFailed']} failed), waits {shared['waits']} ({shared['waitsExpired']} expired), nodes {nodes}"

    def stop(self):
        self.proc.terminate(); self.proc.wait(timeout=30)


def percentile(values, p):
    values = sorted(values); return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def bare_mg(node, value_size, rounds=2000):
    s = socket.create_connection(("127.0.0.1", node.port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"ms bench:bare %d T600\r\n" % value_size + b"x" * value_size + b"\r\n"); s.recv(100)
    f = s.makefile("rb"); times = []
    for _ in range(rounds):
        t = time.monotonic(); s.sendall(b"mg bench:bare v\r\n")
        header = f.readline(); f.read(int(header.split()[1]) + 2); times.append(time.monotonic() - t)
    s.close(); return times


def both(a, b, urls):
    results = {}
    ta = threading.Thread(target=lambda: results.__setitem__("a", a.prefetch(urls)))
    tb = threading.Thread(target=lambda: results.__setitem__("b", b.prefetch(urls)))
    ta.start(); tb.start(); ta.join(); tb.join()
    return results["a"], results["b"]


def main():
    print(f"fleet benchmark: {COUNT} images, origin shaped +{RTT*1000:.0f} ms RTT, {RATE // 1024} KiB/s per connection; daemons from {BIN}")
    images = make_images()
    unique = sum(len(b) for b in images.values())
    origin = Origin(images); proxy = ShapingProxy(origin.port)
    urls = [f"http://127.0.0.1:{proxy.port}{path}" for path in images]
    nodes = [Memcached() for _ in range(3)]
    servers = [n.address for n in nodes]
    print(f"unique bytes: {unique} ({unique / COUNT / 1024:.0f} KiB per image)")

    if "1" in PARTS: together(origin, unique, servers, urls)
    if "2" in PARTS: warming(origin, servers, urls)
    if "3" in PARTS: latency(nodes, servers, urls)
    if "4" in PARTS: node_killed(origin, unique, nodes, servers, urls)


def together(origin, unique, servers, urls):
    """1. Two hosts want the same thumbnails at once, with the tier and without."""
    a, b = Daemon("a", servers, "p1:"), Daemon("b", servers, "p1:")
    before = origin.bytes_sent(); (sa, fa), (sb, fb) = both(a, b, urls); upstream = origin.bytes_sent() - before
    print(f"[1] with the tier:    upstream {upstream} = {upstream / unique:.3f} x unique, {sa:.1f} s / {sb:.1f} s, failed {fa + fb}")
    c, d = Daemon("c", [], "p1:"), Daemon("d", [], "p1:")
    before = origin.bytes_sent(); (sc, fc), (sd, fd) = both(c, d, urls); upstream = origin.bytes_sent() - before
    print(f"[1] without the tier: upstream {upstream} = {upstream / unique:.3f} x unique, {sc:.1f} s / {sd:.1f} s, failed {fc + fd}")
    print(f"    a: {a.tier()}\n    b: {b.tier()}")
    for daemon in (a, b, c, d): daemon.stop()


def warming(origin, servers, urls):
    """2. A second, empty host warming from the tier vs from the network."""
    e, f = Daemon("e", servers, "p1:"), Daemon("f", [], "p1:")
    before = origin.bytes_sent(); te, fe = e.prefetch(urls); from_tier_upstream = origin.bytes_sent() - before
    tf, ff = f.prefetch(urls)
    print(f"[2] warming {COUNT}: from the tier {te:.2f} s (upstream {from_tier_upstream} B), from the network {tf:.2f} s: {tf / te:.1f} x faster, failed {fe + ff}")
    print(f"    e: {e.tier()}")
    for daemon in (e, f): daemon.stop()


def latency(nodes, servers, urls):
    """3. Latency: shared hits on an empty host without a memory tier, then its disk hits."""
    sample = urls[:200]
    if "1" not in PARTS and "2" not in PARTS:
        w = Daemon("w", servers, "p1:"); w.prefetch(sample)
        # Its tier writes run in the background: let them end (bounded) before it stops.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            shared = w.call("stats", {})["result"].get("shared", {})
            if shared.get("writes", 0) + shared.get("writesFailed", 0) >= len(sample): break
            time.sleep(0.05)
        w.stop()
    g = Daemon("g", servers, "p1:", memory_limit="0")
    shared, sizes = [], []
    for url in sample:
        t, source, size = g.show(url); shared.append(t); sizes.append(size)
        if source != "shared": print(f"    (not a shared hit: {source}; {g.tier()})")
    # The shared hits' bookkeeping (each entry's index row, published after its answer) ends
    # before the disk hits are timed: a faster shared phase otherwise leaves more of it
    # running into the disk phase, which then measures both.
    deadline = time.monotonic() + 30
    while g.call("stats", {})["result"]["disk"]["entries"] < len(sample) and time.monotonic() < deadline:
        time.sleep(0.01)
    disk = []
    for url in sample:
        t, source, _ = g.show(url); disk.append(t)
        if source != "disk": print(f"    (not a disk hit: {source})")
    bare = bare_mg(nodes[0], int(statistics.mean(sizes)) + 61)
    ms = lambda v: f"{v * 1000:.2f} ms"
    print(f"[3] shared hit p50 {ms(percentile(shared, 50))} p99 {ms(percentile(shared, 99))}; "
          f"disk hit p50 {ms(percentile(disk, 50))} p99 {ms(percentile(disk, 99))}; "
          f"bare mg ({int(statistics.mean(sizes)) + 61} B) p50 {ms(percentile(bare, 50))} p99 {ms(percentile(bare, 99))}; "
          f"shared p50 / bare p50 = {percentile(shared, 50) / percentile(bare, 50):.1f}, shared - disk p50 = {ms(percentile(shared, 50) - percentile(disk, 50))}")
    g.stop()


def node_killed(origin, unique, nodes, servers, urls):
    """4. One node of three killed, two cold hosts (a new prefix: a cold tier)."""
    nodes[2].kill()
    h, i = Daemon("h", servers, "p2:"), Daemon("i", servers, "p2:")
    before = origin.bytes_sent(); (sh, fh), (si, fi) = both(h, i, urls); upstream = origin.bytes_sent() - before
    stats = h.call("stats", {})["result"].get("shared", {})
    states = [n["state"] for n in stats.get("nodes", [])]
    print(f"[4] one node killed:  upstream {upstream} = {upstream / unique:.3f} x unique (extra {upstream / unique - 1:.2f}), "
          f"failed {fh + fi}, node states on h: {states}")
    print(f"    h: {h.tier()}\n    i: {i.tier()}")
    for daemon in (h, i): daemon.stop()


try:
    main()
finally:
    for child in children:
        if child.poll() is None: child.kill()
    shutil.rmtree(WORK, ignore_errors=True)
