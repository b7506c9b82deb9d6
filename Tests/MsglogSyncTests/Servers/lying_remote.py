"""A malicious sync remote: a proxy in front of a real `msglog serve` that
forwards every request until the test names a lie, then tells it.

    lying_remote.py TARGET_PORT MODE_FILE

MODE_FILE holds the lie (read again for each request; missing or empty:
forward everything):
    push-applied SEQ   a push is not forwarded: every change is answered
                       "applied as SEQ" (the server never saw it)
    pull-skip          a pull's page of three or more loses its second record
    pull-duplicate     a pull's page has its first record twice
    pull-head SEQ      a pull's Msglog-Head says SEQ
    pull-join          a pull's page is the server's next two pages as one
    redirect           every request is answered 302 to elsewhere
    flood MIB          a pull is answered by frames of 2 MiB of junk, MIB
                       MiB in all, as fast as the client takes them
    trickle SECONDS    every request is answered with a head and then one
                       byte every SECONDS, for ever
    continue SECONDS   every request is answered with 100 Continue every
                       SECONDS, for ever
    hold-bases SECONDS a request for the bases is forwarded SECONDS late
                       (honest, but slow: the test acts meanwhile)
    pull-another-log   a pull (not a check) is refused 409 as another log,
                       after the push before it was done
    push-unchanged     a push is not forwarded: every change is answered
                       "unchanged"
    hello-horizon H    the hello says the history begins at seq H
    push-reorder       a push is forwarded; its answer's outcomes come back
                       in reverse order, each with its own change number
    push-refused-behind a push is not forwarded: every change is answered
                       "refused", the head said to be 1
    trim-lie H SEQ     the hello says the history begins at seq H (and its
                       head is past it), and the bases are one empty list
                       of stream main at SEQ ("none": no base at all)
    lose-track-after N the first N pushes are forwarded, every later one is
                       refused 409 as lost track (counted from when the
                       lie is named)
Pulls that only check (limit=0) are always forwarded, so a sync gets as
far as the lie. Every request is logged to MODE_FILE.log as a line
"METHOD PATH". Listens on 127.0.0.1 and prints "port N"; ends when its
parent does.
"""
import http.client
import json
import os
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse

target = int(sys.argv[1])
mode_path = sys.argv[2]
lock = threading.Lock()
pushes = {"lie": None, "count": 0}


def mode():
    try:
        words = open(mode_path).read().split()
    except OSError:
        return "", []
    return (words[0], words[1:]) if words else ("", [])


def forward(method, path, body, headers):
    connection = http.client.HTTPConnection("127.0.0.1", target, timeout=60)
    sent = {k: v for k, v in headers.items() if k.lower() in ("content-type", "accept", "authorization", "user-agent")}
    sent["Host"] = "127.0.0.1:%d" % target
    connection.request(method, path, body=body if body else None, headers=sent)
    answer = connection.getresponse()
    data = answer.read()
    kept = [(k, v) for k, v in answer.getheaders() if k.lower() not in ("content-length", "transfer-encoding", "connection")]
    connection.close()
    return answer.status, answer.reason, kept, data


def frames(data):
    out, at = [], 0
    while at + 4 <= len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        out.append(data[at + 4:at + 4 + length])
        at += 4 + length
    return out


def framed(records):
    return b"".join(struct.pack(">I", len(r)) + r for r in records)


def send(connection, status, reason, headers, body):
    head = "HTTP/1.1 %d %s\r\n" % (status, reason)
    for name, value in headers:
        head += "%s: %s\r\n" % (name, value)
    head += "Content-Length: %d\r\n\r\n" % len(body)
    connection.sendall(head.encode("latin-1") + body)


def answer(connection, method, path, body, headers):
    name, args = mode()
    query = urllib.parse.parse_qs(urllib.parse.urlparse(path).query)
    is_pull = path.startswith("/api/sync/pull")
    checks_only = is_pull and query.get("limit", ["4096"])[0] == "0"
    if name == "redirect":
        send(connection, 302, "Found", [("Location", "http://elsewhere.example/")], b"")
        return
    if name == "trickle":
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
        while True:
            time.sleep(float(args[0]))
            connection.sendall(b" ")
    if name == "continue":
        while True:
            connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            time.sleep(float(args[0]))
    if name == "hold-bases" and path.startswith("/api/sync/bases"):
        time.sleep(float(args[0]))
    if name == "push-applied" and path.startswith("/api/sync/push"):
        changes = json.loads(body)["changes"]
        _, _, _, hello = forward("GET", "/api/sync?protocol=1", b"", headers)
        outcomes = [{"change": c["change"], "result": "applied", "seq": int(args[0]), "rebased": False} for c in changes]
        reply = json.dumps({"head": json.loads(hello)["head"], "outcomes": outcomes}).encode()
        send(connection, 200, "OK", [("Content-Type", "application/json")], reply)
        return
    if name == "push-unchanged" and path.startswith("/api/sync/push"):
        changes = json.loads(body)["changes"]
        _, _, _, hello = forward("GET", "/api/sync?protocol=1", b"", headers)
        outcomes = [{"change": c["change"], "result": "unchanged"} for c in changes]
        reply = json.dumps({"head": json.loads(hello)["head"], "outcomes": outcomes}).encode()
        send(connection, 200, "OK", [("Content-Type", "application/json")], reply)
        return
    if name == "push-refused-behind" and path.startswith("/api/sync/push"):
        changes = json.loads(body)["changes"]
        outcomes = [{"change": c["change"], "result": "refused", "error": "item was already removed",
                     "reason": {"code": "item-removed", "id": "00000000-0000-4000-8000-000000000001", "seq": 1}}
                    for c in changes]
        reply = json.dumps({"head": 1, "outcomes": outcomes}).encode()
        send(connection, 200, "OK", [("Content-Type", "application/json")], reply)
        return
    if name == "push-reorder" and path.startswith("/api/sync/push"):
        status, reason, kept, data = forward(method, path, body, headers)
        answer = json.loads(data)
        answer["outcomes"].reverse()
        send(connection, status, reason, kept, json.dumps(answer).encode())
        return
    if name in ("hello-horizon", "trim-lie") and path.startswith("/api/sync?"):
        status, reason, kept, data = forward(method, path, body, headers)
        hello = json.loads(data)
        hello["horizon"] = int(args[0])
        if name == "trim-lie":
            hello["head"] = max(hello["head"], int(args[0]) + 8)
        send(connection, status, reason, kept, json.dumps(hello).encode())
        return
    if name == "trim-lie" and path.startswith("/api/sync/bases"):
        data = b""
        if args[1] != "none":
            base = {"op": "base", "stream": "main", "seq": int(args[1]), "version": 1, "items": []}
            data = (json.dumps(base) + "\n").encode()
        send(connection, 200, "OK", [("Content-Type", "application/x-ndjson")], data)
        return
    if name == "lose-track-after" and path.startswith("/api/sync/push"):
        with lock:
            if pushes["lie"] != (name, args):
                pushes["lie"], pushes["count"] = (name, args), 0
            pushes["count"] += 1
            passed = pushes["count"] <= int(args[0])
        if not passed:
            refusal = {"error": "change 2 comes before change 1 was done", "kind": "lost-track"}
            send(connection, 409, "Conflict", [("Content-Type", "application/json")], json.dumps(refusal).encode())
            return
    if name == "pull-another-log" and is_pull and not checks_only:
        refusal = {"error": "its event at seq 1 is not the replica's", "kind": "another-log"}
        send(connection, 409, "Conflict", [("Content-Type", "application/json")], json.dumps(refusal).encode())
        return
    if name == "flood" and is_pull and not checks_only:
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.msglog.records\r\nMsglog-Head: 1000000\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
        frame = struct.pack(">I", 2 << 20) + bytes(2 << 20)
        for _ in range(int(args[0]) // 2):
            connection.sendall(b"%x\r\n" % len(frame) + frame + b"\r\n")
        connection.sendall(b"0\r\n\r\n")
        return
    status, reason, kept, data = forward(method, path, body, headers)
    if is_pull and not checks_only and status == 200:
        records = frames(data)
        if name == "pull-skip" and len(records) >= 3:
            records = records[:1] + records[2:]
        if name == "pull-duplicate" and records:
            records = records[:1] + records
        if name == "pull-head":
            kept = [(k, args[0] if k.lower() == "msglog-head" else v) for k, v in kept]
        if name == "pull-join" and records:
            after = int(query["after"][0]) + len(records)
            more = path.replace("after=%s" % query["after"][0], "after=%d" % after)
            more = more.replace("&check=%s" % query["check"][0], "") if "check" in query else more
            _, _, _, next_page = forward(method, more, b"", headers)
            records += frames(next_page)
        data = framed(records)
    send(connection, status, reason, kept, data)


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        pending = b""
        while True:
            while b"\r\n\r\n" not in pending:
                data = self.request.recv(65536)
                if not data:
                    return
                pending += data
            head, pending = pending.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                headers[key.strip()] = value.strip()
            length = int(headers.get("Content-Length", headers.get("content-length", "0")))
            while len(pending) < length:
                data = self.request.recv(65536)
                if not data:
                    return
                pending += data
            body, pending = pending[:length], pending[length:]
            with lock:
                with open(mode_path + ".log", "a") as log:
                    log.write("%s %s\n" % (method, path))
            try:
                answer(self.request, method, path, body, headers)
            except OSError:
                return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def outlive_no_parent(parent):
    """Ends with the test process, however that ends (a test that failed
    may never get to stop this server)."""
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


threading.Thread(target=outlive_no_parent, args=(os.getppid(),), daemon=True).start()
server = Server(("127.0.0.1", 0), Handler)
print("port", server.server_address[1], flush=True)
server.serve_forever()
