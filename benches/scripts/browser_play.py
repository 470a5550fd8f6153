#!/usr/bin/env python3
"""Plays MP4 files in headless Chromium's <video> element and reports, per
file, whether it loaded, its duration, the frames it decoded and where
playback ended: the browser check of the hybrid MP4 writer
(docs/write-side.md, "Hybrid MP4").

    benches/scripts/browser_play.py FILE.mp4...

Needs `chromium` (Debian package) and the `websocket-client` Python
package (the page is driven over the DevTools protocol). Each file is
opened from its folder over file://; the page waits for the first frame (`loadeddata`), seeks to the
middle and then to the last 50 ms, and after each seek needs a decoded
frame (`readyState` >= HAVE_CURRENT_DATA); it writes one JSON line into
the page, which the script polls over the DevTools protocol. Exit code 1 when any file fails.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PAGE = """<!doctype html><html><body><pre id=out>pending</pre>
<video id=v muted playsinline src="%s"></video>
<script>
const v = document.getElementById('v'), out = document.getElementById('out');
const done = (what) => {
  const q = v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : {};
  out.textContent = JSON.stringify({what, duration: v.duration, currentTime: v.currentTime,
    frames: q.totalVideoFrames || 0, error: v.error ? v.error.code + ' ' + v.error.message : null});
};
v.addEventListener('error', () => done('error'));
let seeks = 0;
v.addEventListener('loadeddata', () => { v.currentTime = v.duration / 2; });
v.addEventListener('seeked', () => {
  seeks += 1;
  if (seeks == 1) { v.currentTime = Math.max(0, v.duration - 0.05); } else { done(v.readyState >= 2 ? 'decoded' : 'seeked, no frame'); }
});
setTimeout(() => done('timeout, readyState ' + v.readyState), 20000);
</script></body></html>"""


def poll_page(chromium, url, seconds=30):
    """Opens `url` in a headless Chromium driven over the DevTools protocol
    and polls what the page writes into its `#out` element until it is no
    longer `pending` (real time, at most `seconds`)."""
    import time
    import urllib.request

    import websocket  # pip install websocket-client

    port = 9300 + os.getpid() % 500
    profile = tempfile.mkdtemp(prefix="mediaslice-chromium-")
    proc = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required",
         "--allow-file-access-from-files", f"--remote-debugging-port={port}", f"--user-data-dir={profile}",
         url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ws_url = None
        for _ in range(100):
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
                ws_url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
                break
            except Exception:
                time.sleep(0.2)
        if not ws_url:
            return {"what": "no DevTools endpoint"}
        # No Origin header: a Chromium from 111 on refuses a DevTools
        # WebSocket whose Origin it was not told to allow.
        ws = websocket.create_connection(ws_url, timeout=10, suppress_origin=True)
        expr = "document.getElementById('out').textContent"
        for i in range(int(seconds * 5)):
            ws.send(json.dumps({"id": i + 1, "method": "Runtime.evaluate", "params": {"expression": expr}}))
            while True:
                msg = json.loads(ws.recv())
                if msg.get("id") == i + 1:
                    break
            text = msg.get("result", {}).get("result", {}).get("value", "pending")
            if text != "pending":
                return json.loads(text)
            time.sleep(0.2)
        return {"what": f"pending after {seconds} s"}
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def play(chromium, path):
    """Plays one MP4 file from its folder over file:// (see the module
    docstring)."""
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=folder, delete=False) as f:
        f.write(PAGE % html.escape(os.path.basename(path)))
        page = f.name
    try:
        return poll_page(chromium, "file://" + page)
    finally:
        os.unlink(page)


def main():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("skip: chromium is not installed")
        return 0
    bad = 0
    for p in sys.argv[1:]:
        r = play(chromium, p)
        ok = r.get("what") == "decoded" and not r.get("error")
        bad += not ok
        print(("ok   " if ok else "FAIL ") + os.path.basename(p) + " " + json.dumps(r))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
