"""A small threaded HTTP/1.1 file server with Range support (one range per
request: `bytes=a-b`, `bytes=a-`, `bytes=-n`), which Python's http.server
lacks. It counts requests and body bytes sent, per path and in all.

    with RangeServer(root) as srv:
        url = srv.url("family/file.mp4")
"""
import os
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle and
    # delayed ACKs hold each response for 40 ms.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _send(self, body_only_head):
        srv = self.server.owner
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        path = os.path.realpath(os.path.join(srv.root, rel))
        if not path.startswith(srv.root + os.sep) or not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        start, end, status = 0, size - 1, 200
        header = self.headers.get("Range")
        if header:
            m = RANGE.match(header.strip())
            if not m or (not m.group(1) and not m.group(2)):
                self.send_error(416)
                return
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:
                start, end = max(size - int(m.group(2)), 0), size - 1
            if start >= size or start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        length = end - start + 1
        self.send_response(status)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(length))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        sent = 0
        try:
            if not body_only_head:
                with open(path, "rb") as f:
                    f.seek(start)
                    left = length
                    while left > 0:
                        chunk = f.read(min(left, 1 << 16))
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        left -= len(chunk)
                        sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            # A client that has read enough closes the connection (ffprobe
            # does); what was written until then counts, as nginx's
            # $body_bytes_sent.
            self.close_connection = True
        finally:
            srv.count(rel, sent)

    def do_GET(self):
        self._send(False)

    def do_HEAD(self):
        self._send(True)


class RangeServer:
    """Serves `root` on 127.0.0.1 at a free port from a daemon thread."""

    def __init__(self, root, delay=0.0):
        self.root = os.path.realpath(str(root))
        self.lock = threading.Lock()
        self.requests = 0
        self.bytes_sent = 0
        self.per_path = {}
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def count(self, rel, sent):
        with self.lock:
            self.requests += 1
            self.bytes_sent += sent
            r, b = self.per_path.get(rel, (0, 0))
            self.per_path[rel] = (r + 1, b + sent)

    def url(self, rel):
        port = self.httpd.server_address[1]
        return f"http://127.0.0.1:{port}/" + urllib.parse.quote(str(rel))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
