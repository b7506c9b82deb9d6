"""An HTTP server that answers from a script, byte for byte: the answers
`msglog serve` never sends (close-delimited bodies, chunk extensions,
malformed heads, silence), over plain TCP or TLS.

    scripted_server.py SCRIPT.json [--tls CERT KEY] [--ipv6]

SCRIPT.json: {"answers": [ANSWER, ...], "log": PATH}. Each request that
arrives (on any connection, in order) takes the next ANSWER:
    {"pieces": [[TEXT, DELAY_MS, GATE], ...], "then": "keep" | "close" | "abort" | "hang"}
TEXT is sent as Latin-1 (so any byte can be written), each piece after
its delay and, when GATE is a path, once that file exists (a test opens
the gate when it has seen what came before: ordering without timing).
Then the connection is kept for the next request, closed (with TLS:
close_notify first), aborted (TLS: closed without close_notify), or held
open and silent until the server is killed. With no answer left, a
request's connection is closed. Every request is logged to PATH as a JSON
line: {"connection": N, "request": TEXT}. Listens on 127.0.0.1 (on [::1]
with --ipv6) and prints "port N".
"""
import json
import os
import socket
import ssl
import sys
import threading
import time

script = json.load(open(sys.argv[1]))
answers = list(script["answers"])
log_path = script["log"]
lock = threading.Lock()
context = None
if "--tls" in sys.argv:
    at = sys.argv.index("--tls")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[at + 1], sys.argv[at + 2])


def log(entry):
    with lock:
        with open(log_path, "a") as out:
            out.write(json.dumps(entry) + "\n")


def read_request(connection, pending):
    """One request (head and Content-Length body) as text, or None at the end."""
    while b"\r\n\r\n" not in pending[0]:
        data = connection.recv(65536)
        if not data:
            return None
        pending[0] += data
    head, rest = pending[0].split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        data = connection.recv(65536)
        if not data:
            return None
        rest += data
    pending[0] = rest[length:]
    return (head + b"\r\n\r\n" + rest[:length]).decode("latin-1")


def serve(raw, number):
    connection = raw
    try:
        if context is not None:
            connection = context.wrap_socket(raw, server_side=True)
        pending = [b""]
        while True:
            request = read_request(connection, pending)
            if request is None:
                break
            log({"connection": number, "request": request})
            with lock:
                answer = answers.pop(0) if answers else None
            if answer is None:
                break
            for text, delay, gate in answer.get("pieces", []):
                time.sleep(delay / 1000)
                waited = 0
                while gate and not os.path.exists(gate) and waited < 6000:
                    time.sleep(0.01)
                    waited += 1
                connection.sendall(text.encode("latin-1"))
            then = answer.get("then", "keep")
            if then == "hang":
                while True:
                    time.sleep(60)
            if then == "abort":
                raw.close()
                return
            if then == "close":
                break
        if context is not None:
            try:
                connection = connection.unwrap()
            except (ssl.SSLError, OSError):
                pass
    except (ssl.SSLError, OSError) as error:
        log({"connection": number, "error": str(error)})
    finally:
        try:
            connection.close()
        except OSError:
            pass
        raw.close()


ipv6 = "--ipv6" in sys.argv
listener = socket.socket(socket.AF_INET6 if ipv6 else socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("::1" if ipv6 else "127.0.0.1", 0))
listener.listen(16)
print("port", listener.getsockname()[1], flush=True)
count = 0
while True:
    raw, _ = listener.accept()
    count += 1
    threading.Thread(target=serve, args=(raw, count), daemon=True).start()
