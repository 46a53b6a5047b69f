#!/usr/bin/env python3
"""Servers for the private-origin tests, independent of id3-meter (Python's ssl and http.server):

  certs DIR              a throwaway CA and, signed by it, certificates for 127.0.0.1: good.pem,
                         expired.pem, wrong-name.pem (for other.example only), client.pem (with
                         their .key); other-ca.pem, a CA nobody trusts, and its client-other.pem
  origin DIR CERT KEY [CLIENT_CA]
                         an HTTPS origin on 127.0.0.1 serving DIR; with CLIENT_CA it asks for a
                         client certificate signed by it
  plain DIR              plain HTTP on 127.0.0.1 serving DIR (what https:// to a server without TLS meets)
  proxy                  a forward proxy on 127.0.0.1: CONNECT tunnels and absolute-form GETs,
                         each request logged on stderr as "CONNECT host:port" or "GET url"

Each server prints its port on the first line of stdout once it listens.
"""
import datetime, http.server, os, select, socket, ssl, sys, threading, urllib.parse, urllib.request

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
import ipaddress


def certs(folder):
    os.makedirs(folder, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def key():
        return ec.generate_private_key(ec.SECP256R1())

    def write(name, certificate, private):
        with open(os.path.join(folder, name + ".pem"), "wb") as f:
            f.write(certificate.public_bytes(serialization.Encoding.PEM))
        with open(os.path.join(folder, name + ".key"), "wb") as f:
            f.write(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    def authority(name):
        private = key()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(private.public_key())
                       .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
                       .not_valid_after(now + datetime.timedelta(days=30))
                       .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                       .sign(private, hashes.SHA256()))
        return certificate, private

    def leaf(ca, ca_key, names, before, after, client=False):
        private = key()
        builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
                   .issuer_name(ca.subject).public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(before).not_valid_after(after))
        alternatives = [x509.IPAddress(ipaddress.ip_address(n)) if n[0].isdigit() else x509.DNSName(n) for n in names]
        builder = builder.add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        usage = x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH if client else x509.oid.ExtendedKeyUsageOID.SERVER_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        return builder.sign(ca_key, hashes.SHA256()), private

    ca, ca_key = authority("id3-meter test CA")
    write("ca", ca, ca_key)
    other, other_key = authority("a CA nobody trusts")
    write("other-ca", other, other_key)
    day = datetime.timedelta(days=1)
    write("good", *leaf(ca, ca_key, ["127.0.0.1", "localhost"], now - day, now + 30 * day))
    write("expired", *leaf(ca, ca_key, ["127.0.0.1", "localhost"], now - 30 * day, now - day))
    write("wrong-name", *leaf(ca, ca_key, ["other.example"], now - day, now + 30 * day))
    write("client", *leaf(ca, ca_key, ["meter"], now - day, now + 30 * day, client=True))
    write("client-other", *leaf(other, other_key, ["meter"], now - day, now + 30 * day, client=True))


def serve_folder(folder, context=None):
    """`folder` over HTTP on 127.0.0.1, or HTTPS with `context`; its port on stdout once it listens."""
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=folder, **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if context:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def plain(folder):
    serve_folder(folder)


def origin(folder, cert, key, client_ca=None):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    if client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(client_ca)
    serve_folder(folder, context)


def proxy():
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_CONNECT(self):
            print(f"CONNECT {self.path}", file=sys.stderr, flush=True)
            host, port = self.path.rsplit(":", 1)
            try:
                upstream = socket.create_connection((host, int(port)), timeout=10)
            except OSError:
                self.send_error(502)
                return
            self.send_response(200, "Connection established")
            self.end_headers()
            sockets = [self.connection, upstream]
            while True:
                ready, _, _ = select.select(sockets, [], [], 30)
                if not ready:
                    break
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        upstream.close()
                        return
                    (upstream if s is self.connection else self.connection).sendall(data)

        def do_GET(self):
            print(f"GET {self.path}", file=sys.stderr, flush=True)
            request = urllib.request.Request(self.path, headers={k: v for k, v in self.headers.items() if k.lower() != "proxy-authorization"})
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    body = answer.read()
                    self.send_response(answer.status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
            except urllib.error.HTTPError as error:
                self.send_error(error.code)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "certs":
        certs(sys.argv[2])
    elif command == "origin":
        origin(*sys.argv[2:])
    elif command == "plain":
        plain(sys.argv[2])
    elif command == "proxy":
        proxy()
