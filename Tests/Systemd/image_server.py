#!/usr/bin/env python3
"""The image host for scripts/test-systemd: serves one JPEG from the repository's corpus on
127.0.0.1 (the container shares the host's network), at full speed as /photo.jpg and trickled
as /slow.jpg so a download is still running when the test stops the daemon. Honours
Range and If-Range (ETag) as a real host does, so the test can see a resumed download, and
logs every request line with its Range header to LOG.

Usage: image_server.py IMAGE PORT_FILE LOG
"""
import hashlib
import http.server
import os
import re
import sys
import time

IMAGE, PORT_FILE, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
BODY = open(IMAGE, "rb").read()
ETAG = '"%s"' % hashlib.sha256(BODY).hexdigest()[:16]
TRICKLE = 32 * 1024          # bytes per second for /slow.jpg
CHUNK = 4 * 1024


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        with open(LOG, "a") as log:
            log.write("%s range=%s if-range=%s\n" % (self.path, self.headers.get("Range"), self.headers.get("If-Range")))
        if self.path not in ("/photo.jpg", "/slow.jpg"):
            self.send_error(404)
            return
        start, end = 0, len(BODY) - 1
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
        ranged = bool(match) and self.headers.get("If-Range") in (None, ETAG)
        if ranged:
            start = int(match.group(1))
            if match.group(2):
                end = min(end, int(match.group(2)))
        if start >= len(BODY) or start > end:
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%d" % len(BODY))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(206 if ranged else 200)
        if ranged:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, len(BODY)))
        self.send_header("Content-Type", "image/jpeg")
        self.send_header("Content-Length", str(end + 1 - start))
        self.send_header("ETag", ETAG)
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        slow = self.path == "/slow.jpg"
        try:
            for offset in range(start, end + 1, CHUNK):
                self.wfile.write(BODY[offset:min(offset + CHUNK, end + 1)])
                self.wfile.flush()
                if slow:
                    time.sleep(CHUNK / TRICKLE)
        except (BrokenPipeError, ConnectionResetError):
            pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
