#!/usr/bin/env python3
"""Packages media files for HLS and DASH with `mediaslice package --hls
--dash` and plays both in headless Chromium: the HLS multivariant playlist
with hls.js, the DASH manifest with dash.js (both pinned in
`benches/scripts/players/package-lock.json`, installed with `npm ci` when
missing). The browser check of the packager (docs/write-side.md).

    benches/scripts/stream_play.py [--bin target/release/mediaslice] [--segment 2s] [--live] [--ts] FILE...
    benches/scripts/stream_play.py [--bin ...] --during SECONDS [--ts]

With `--live`, each file (MPEG-TS) is piped into `package - OUT` instead
(live mode), and the finished output is played.

With `--ts`, each file is also packaged with `--hls --ts` (MPEG-TS
segments; with `--live`, piped into `package - OUT --hls --ts`) and that
playlist played by hls.js; there a non-fatal `bufferSeekOverHole` is
allowed (see main()).

With `--during SECONDS`, the players join a live packaging while it runs:
ffmpeg encodes SECONDS of a test picture and tone in real time (`-re`,
libx264 and AAC into MPEG-TS, as a camera or an encoder would send it)
into `package - OUT --hls --dash`; once three segments are out, dash.js
opens the dynamic MPD and hls.js the live playlist, each at normal speed,
and each passes when playback advances 6 seconds with no player or
<video> error while the packager is still running (the MPD still
`dynamic`, the playlist without `#EXT-X-ENDLIST`). With `--ts` too, a
second real-time encode goes into `package - OUT --hls --ts` and hls.js
joins its live playlist of MPEG-TS segments the same way.

The output folder is served over HTTP on 127.0.0.1 beside the players;
the page attaches the player to a muted <video>, plays at 4x and reports
one JSON line: it passes when playback gets past 90% of the duration (or
ends) with no ERROR event of the player and no <video> error. Exit code 1
when any file fails; 0 with a `skip:` line when chromium or npm is
missing. Needs the `websocket-client` Python package.
"""
import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_play import poll_page  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PLAYERS = os.path.join(HERE, "players")

PAGE = """<!doctype html><html><body><pre id=out>pending</pre>
<video id=v muted playsinline></video>
<script src="/players/%(lib)s"></script>
<script>
const v = document.getElementById('v'), out = document.getElementById('out');
const errors = [];
let finished = false;
const done = (what) => {
  if (finished) return;
  finished = true;
  const q = v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : {};
  out.textContent = JSON.stringify({what, duration: v.duration, currentTime: v.currentTime,
    frames: q.totalVideoFrames || 0, errors, videoError: v.error ? v.error.code + ' ' + v.error.message : null});
};
v.addEventListener('error', () => done('video error'));
v.addEventListener('loadedmetadata', () => { if (!%(live)s) v.playbackRate = 4; v.play(); });
let t0 = null;
v.addEventListener('timeupdate', () => {
  if (%(live)s) {
    if (t0 === null && v.currentTime > 0) t0 = v.currentTime;
    if (t0 !== null && v.currentTime - t0 >= 6) done('played');
  } else if (v.duration > 0 && v.currentTime >= 0.9 * v.duration) done('played');
});
v.addEventListener('ended', () => done('played'));
const url = '%(url)s';
if ('%(kind)s' === 'hls') {
  const h = new Hls();
  h.on(Hls.Events.ERROR, (e, d) => { errors.push((d.fatal ? 'fatal ' : '') + d.type + ' ' + d.details); if (d.fatal) done('player error'); });
  h.loadSource(url);
  h.attachMedia(v);
} else {
  const p = dashjs.MediaPlayer().create();
  p.on(dashjs.MediaPlayer.events.ERROR, (e) => { errors.push(JSON.stringify(e.error || e)); done('player error'); });
  p.initialize(v, url, true);
}
setTimeout(() => done('timeout, readyState ' + v.readyState), %(timeout_ms)d);
</script></body></html>"""

LIBS = {"hls": "hls.js/dist/hls.min.js", "dash": "dashjs/dist/modern/umd/dash.all.min.js"}
ENTRY = {"hls": "master.m3u8", "dash": "manifest.mpd"}


def players_ready():
    if all(os.path.exists(os.path.join(PLAYERS, "node_modules", lib)) for lib in LIBS.values()):
        return True
    if not shutil.which("npm"):
        return False
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PLAYERS, check=True,
                   stdout=subprocess.DEVNULL)
    return True


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(QuietHandler, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def play_page(chromium, root, server, name, folder, kind, live, allow=()):
    """Writes the player page `name` for `kind` (hls or dash) over the
    output in `folder` of the served root and plays it: the page's JSON
    report, and whether it passed (played, no player or <video> error but
    the non-fatal ones in `allow`)."""
    page = os.path.join(root, f"{name}.html")
    with open(page, "w") as p:
        p.write(PAGE % {"lib": LIBS[kind], "url": f"/{folder}/{ENTRY[kind]}", "kind": kind,
                        "timeout_ms": 30000 if live else 60000, "live": "true" if live else "false"})
    url = f"http://127.0.0.1:{server.server_address[1]}/{name}.html"
    res = poll_page(chromium, url, seconds=40 if live else 75)
    errors = [e for e in res.get("errors") or [] if e not in allow]
    ok = res.get("what") == "played" and not errors and not res.get("videoError")
    return res, ok


def during(chromium, root, server, binary, seconds, segment, ts=False):
    """The `--during` check (see the module docstring), of CMAF segments
    (HLS and DASH) or, with `ts`, MPEG-TS ones (HLS); the number of
    failures."""
    import time
    folder = "during-ts" if ts else "during"
    out = os.path.join(root, folder)
    opts, kinds, ext = (["--hls", "--ts"], ("hls",), ".ts") if ts else (["--hls", "--dash"], ("dash", "hls"), ".m4s")
    first = "media.m3u8" if ts else "manifest.mpd"
    allow = ("mediaError bufferSeekOverHole",) if ts else ()
    enc = subprocess.Popen(
        ["ffmpeg", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", str(seconds),
         "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p",
         "-c:a", "aac", "-f", "mpegts", "-"],
        stdout=subprocess.PIPE)
    pkg = subprocess.Popen([binary, "package", "-", out] + opts + ["--segment", segment],
                           stdin=enc.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    enc.stdout.close()
    bad = 0
    try:
        deadline = time.time() + seconds
        segs = lambda: [f for f in os.listdir(out) if f.endswith(ext)] if os.path.isdir(out) else []
        while len(segs()) < 3 or not os.path.exists(os.path.join(out, first)):
            if time.time() > deadline or pkg.poll() is not None:
                print(f"FAIL {folder}: no three segments while the input ran ({pkg.poll()})")
                return 1
            time.sleep(0.5)
        for kind in kinds:
            res, played = play_page(chromium, root, server, f"{folder}-{kind}", folder, kind, live=True, allow=allow)
            running = pkg.poll() is None
            with open(os.path.join(out, ENTRY[kind] if kind == "dash" else "media.m3u8")) as f:
                text = f.read()
            still_live = 'type="dynamic"' in text if kind == "dash" else "#EXT-X-ENDLIST" not in text
            ok = played and running and still_live
            bad += not ok
            print(("ok   " if ok else "FAIL ") + f"{kind:4} during a live packaging{' (TS segments)' if ts else ''} "
                  f"(packager running: {running}, "
                  f"manifest still live: {still_live}) " + json.dumps(res))
    finally:
        enc.kill()
        pkg.wait()
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/mediaslice")
    ap.add_argument("--segment", default="2s")
    ap.add_argument("--live", action="store_true", help="package through a pipe (live mode)")
    ap.add_argument("--ts", action="store_true", help="also HLS with MPEG-TS segments (package --ts), by hls.js")
    ap.add_argument("--during", type=int, metavar="SECONDS",
                    help="join a live packaging of SECONDS of real-time input while it runs")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("skip: chromium is not installed")
        return 0
    try:
        import websocket  # noqa: F401  (pip install websocket-client)
    except ImportError:
        print("skip: the websocket-client Python package is missing")
        return 0
    if not players_ready():
        print("skip: npm is not installed and the players are missing")
        return 0
    root = tempfile.mkdtemp(prefix="mediaslice-play-")
    os.symlink(os.path.join(PLAYERS, "node_modules"), os.path.join(root, "players"))
    server = serve(root)
    bad = 0
    try:
        if a.during and shutil.which("ffmpeg") is None:
            print("skip: --during needs ffmpeg (its real-time encode is the live input); not installed here")
        elif a.during:
            bad += during(chromium, root, server, a.bin, a.during, a.segment)
            if a.ts:
                bad += during(chromium, root, server, a.bin, a.during, a.segment, ts=True)
        # (output folder, package options, players, label) per file.
        # TS: a video with B-frames presents its first picture one
        # reorder delay (80 ms in the corpus files) after its first decode
        # time, where the audio starts, and hls.js steps over that hole at
        # the start with a non-fatal `bufferSeekOverHole` ERROR event;
        # ffmpeg's own `-f hls` TS output of the same file gets the same
        # event, so it is allowed there and only there (fMP4 has no hole).
        runs = [("", ["--hls", "--dash"], ("hls", "dash"), "", ())]
        if a.ts:
            runs.append(("-ts", ["--hls", "--ts"], ("hls",), " (TS segments)", ("mediaError bufferSeekOverHole",)))
        for n, f in enumerate(a.files):
            for suffix, opts, kinds, label, allow in runs:
                folder = f"out{n}{suffix}"
                with open(f, "rb") as src:
                    r = subprocess.run([a.bin, "package", "-" if a.live else f, os.path.join(root, folder)] + opts +
                                       ["--segment", a.segment],
                                       stdin=src if a.live else subprocess.DEVNULL, capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"FAIL {f}{label}: package: {r.stderr.strip()}")
                    bad += 1
                    continue
                for kind in kinds:
                    res, ok = play_page(chromium, root, server, f"play{n}{suffix}-{kind}", folder, kind, live=False,
                                        allow=allow)
                    bad += not ok
                    print(("ok   " if ok else "FAIL ") + f"{kind:4} {os.path.basename(f)}{label} " + json.dumps(res))
    finally:
        server.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
