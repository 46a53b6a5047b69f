#!/usr/bin/env python3
"""Runs id3-meter against a hostile HTTP server on 127.0.0.1 and prints, for each case, the
exit status, wall time, peak RSS (the child's own, from wait4) and the last error or warning it
printed: the hostile-input table of docs/RELIABILITY.md. Stops by itself; talks to 127.0.0.1 only. Usage: scripts/hostile-table.py [BINARY]"""
import http.server, os, socketserver, subprocess, sys, tempfile, threading, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
METER = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/id3-meter")
PART0 = open(os.path.join(ROOT, "samples/spec/hls/part0.ts"), "rb").read()
PLANTED = os.path.join(ROOT, "samples/ts/nielsen.ts")
NULLS = b"".join(b"\x47\x1f\xff\x10" + b"\xff" * 184 for _ in range(2000))


def media(uri, target=2, extinf=2):
    return f"#EXTM3U\n#EXT-X-TARGETDURATION:{target}\n#EXTINF:{extinf},\n{uri}\n#EXT-X-ENDLIST\n".encode()


class Hostile(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def send(self, body, length="actual", more=None, status=200, headers=()):
        """`length`: "actual", a claimed number, or None (none; the body ends when the connection does)."""
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if more is None and length is not None:
            self.send_header("Content-Length", str(len(body) if length == "actual" else length))
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(body)
            while more and more(self.wfile):
                pass
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        path = self.path.lstrip("/")
        routes = {
            "local-file.m3u8": lambda: self.send(media(f"file://{PLANTED}")),
            "listen.m3u8": lambda: self.send(media("tcp://127.0.0.1:45999?listen=1")),
            "redirect.m3u8": lambda: self.send(media("redirect.ts")),
            "redirect.ts": lambda: self.send(b"", status=302, headers=[("Location", f"file://{PLANTED}")]),
            "endless.m3u8": lambda: self.send(media("endless.ts")),
            "endless.ts": lambda: self.send(PART0, more=lambda w: w.write(NULLS) or True),
            "claims.m3u8": lambda: self.send(media("claims.ts")),
            "claims.ts": lambda: self.send(PART0, length=1 << 30),
            "playlist.m3u8": lambda: self.send(b"#EXTM3U\n", more=lambda w: w.write(b"# padding\n" * 100000) or True),
            "trickle.m3u8": lambda: self.send(media("trickle.ts")),
            "trickle.ts": lambda: self.send(PART0[:188], more=lambda w: time.sleep(1) or w.write(b"\x47") or w.flush() or True),
            "many.m3u8": lambda: self.send(("#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + "".join(f"#EXTINF:1,\ns{n}.ts\n" for n in range(100000)) + "#EXT-X-ENDLIST\n").encode()),
            "framerate.m3u8": lambda: self.send(b"#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,FRAME-RATE=inf\nhls/low/low.m3u8\n"),
            "year.m3u8": lambda: self.send(b"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:31536000,\nhttp://127.0.0.1:%d/part0.ts\n#EXT-X-ENDLIST\n" % self.server.server_address[1]),
            "part0.ts": lambda: self.send(PART0),
        }
        sample = os.path.join(ROOT, "samples", path)
        if path not in routes and path.startswith("hls/") and os.path.isfile(sample):
            return self.send(open(sample, "rb").read())
        routes.get(path, lambda: self.send(b"", status=404))()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def run(args):
    """Exit status, seconds, peak RSS in MiB (VmHWM polled from /proc: wait4's ru_maxrss would
    count this process's own memory, which the child shared until exec), first message."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.time()
        child = subprocess.Popen([METER] + args, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        peak = 0
        while child.poll() is None:
            try:
                with open(f"/proc/{child.pid}/status") as status:
                    peak = max([peak] + [int(line.split()[1]) for line in status if line.startswith("VmHWM:")])
            except (OSError, ValueError):
                pass
            time.sleep(0.01)
        seconds = time.time() - started
        err.seek(0)
        lines = [line for line in err.read().decode(errors="replace").splitlines() if line.startswith(("error:", "warning:", "Error:"))]
        return child.returncode, seconds, peak / 1024, (lines[-1] if lines else "")[:170]


def main():
    server = Server(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.NamedTemporaryFile(suffix=".ts", delete=False) as damaged:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/damaged_ts.py"), "300"], stdout=damaged, check=True)
    cases = [
        ("segment file:// (scan)", ["scan", base + "local-file.m3u8"]),
        ("segment tcp listen (scan)", ["scan", base + "listen.m3u8"]),
        ("redirect to file:// (scan)", ["scan", base + "redirect.m3u8"]),
        ("endless segment (scan)", ["scan", base + "endless.m3u8"]),
        ("endless segment (meter)", ["--speed", "max", base + "endless.m3u8"]),
        ("Content-Length 1 GB (scan)", ["scan", base + "claims.m3u8"]),
        ("endless playlist (scan)", ["scan", base + "playlist.m3u8"]),
        ("1 byte/s segment (scan)", ["scan", base + "trickle.m3u8"]),
        ("1 byte/s segment (meter)", ["--speed", "max", base + "trickle.m3u8"]),
        ("100,000 segments, all 404 (scan)", ["scan", base + "many.m3u8"]),
        ("300 MB of damaged TS (scan)", ["scan", damaged.name]),
        ("300 MB of damaged TS (meter)", ["--speed", "max", damaged.name]),
        ("FRAME-RATE=inf (meter)", ["--speed", "max", base + "framerate.m3u8"]),
        ("EXTINF:31536000 (meter)", ["--speed", "max", base + "year.m3u8"]),
        ("--fps 1e-300 --speed max", ["--fps", "1e-300", "--speed", "max", base + "framerate.m3u8"]),
        ("--duration inf", ["--duration", "inf", base + "framerate.m3u8"]),
    ]
    print("| input | exit | seconds | peak RSS MiB | last message |\n|---|---|---|---|---|")
    for name, args in cases:
        status, seconds, peak, line = run(args)
        line = line.replace("|", "/").replace(base, "").replace(ROOT + "/", "").replace(damaged.name, "damaged.ts")
        print(f"| {name} | {status} | {seconds:.1f} | {peak:.1f} | {line} |")
    os.unlink(damaged.name)


main()
