#!/usr/bin/env python3
"""A hostile SFTP server (protocol version 3) for ferry's download tests.

sshd runs it as the `sftp` subsystem. It serves a made-up tree described by
a JSON file (the first argument) and lies as a compromised target would:
directory listings may hold names with `/`, `..`, absolute paths or NUL
bytes, modes may carry set-id bits, and a directory may contain itself
forever. Real sftp-server cannot be made to say these things, so this
script stands in for it.

The JSON file: {"paths": {PATH: {"kind": "file"|"dir", "mode": INT,
"data": STR, "children": [NAME, ...]}}, "loop": PATH}. PATH keys are the
exact strings a client asks for (a child's path is PARENT + "/" + NAME).
Every path under "loop" is a directory whose only entry is "loop".
"""
import json
import struct
import sys

INIT, VERSION, OPEN, CLOSE, READ = 1, 2, 3, 4, 5
LSTAT, FSTAT, OPENDIR, READDIR, REALPATH, STAT = 7, 8, 11, 12, 16, 17
STATUS, HANDLE, DATA, NAME, ATTRS = 101, 102, 103, 104, 105
OK, EOF, NO_SUCH_FILE, UNSUPPORTED = 0, 1, 2, 8

spec = json.load(open(sys.argv[1]))
paths = spec["paths"]
loop = spec.get("loop")
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
handles = {}


def lookup(path):
    if loop and (path == loop or path.startswith(loop + "/loop")):
        return {"kind": "dir", "mode": 0o755, "children": ["loop"]}
    return paths.get(path)


def string(b):
    return struct.pack(">I", len(b)) + b


def attrs(node):
    kind = 0o040000 if node["kind"] == "dir" else 0o100000
    size = len(node.get("data", "").encode())
    return struct.pack(">IQI", 0x1 | 0x4, size, kind | node["mode"])


def send(kind, body):
    stdout.write(struct.pack(">IB", len(body) + 1, kind) + body)
    stdout.flush()


def status(rid, code, msg=b""):
    send(STATUS, struct.pack(">II", rid, code) + string(msg) + string(b""))


def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = stdin.read(n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf


def take_string(body, at):
    (n,) = struct.unpack_from(">I", body, at)
    return body[at + 4 : at + 4 + n], at + 4 + n


while True:
    (length,) = struct.unpack(">I", read_exact(4))
    packet = read_exact(length)
    kind, body = packet[0], packet[1:]
    if kind == INIT:
        send(VERSION, struct.pack(">I", 3))
        continue
    (rid,) = struct.unpack_from(">I", body)
    arg, _ = take_string(body, 4) if len(body) > 4 else (b"", 0)
    if kind == REALPATH:
        name = arg or b"/"
        send(NAME, struct.pack(">II", rid, 1) + string(name) + string(name) + struct.pack(">I", 0))
    elif kind in (STAT, LSTAT):
        node = lookup(arg.decode())
        if node is None:
            status(rid, NO_SUCH_FILE, b"no such file")
        else:
            send(ATTRS, struct.pack(">I", rid) + attrs(node))
    elif kind in (OPEN, OPENDIR):
        node = lookup(arg.decode())
        if node is None:
            status(rid, NO_SUCH_FILE, b"no such file")
            continue
        handle = str(len(handles)).encode()
        handles[handle] = {"node": node, "path": arg.decode(), "done": False}
        send(HANDLE, struct.pack(">I", rid) + string(handle))
    elif kind == READDIR:
        h = handles.get(arg)
        if h is None or h["done"]:
            status(rid, EOF, b"eof")
            continue
        h["done"] = True
        body = b""
        names = h["node"].get("children", [])
        for name in names:
            child = lookup(h["path"] + "/" + name) or {"kind": "file", "mode": 0o644}
            raw = name.encode()
            body += string(raw) + string(raw) + attrs(child)
        send(NAME, struct.pack(">II", rid, len(names)) + body)
    elif kind == READ:
        h = handles.get(arg)
        at = 4 + 4 + len(arg)
        offset, want = struct.unpack_from(">QI", body, at)
        data = (h or {"node": {}})["node"].get("data", "").encode()
        if offset >= len(data):
            status(rid, EOF, b"eof")
        else:
            send(DATA, struct.pack(">I", rid) + string(data[offset : offset + want]))
    elif kind == FSTAT:
        h = handles.get(arg)
        send(ATTRS, struct.pack(">I", rid) + attrs(h["node"]))
    elif kind == CLOSE:
        handles.pop(arg, None)
        status(rid, OK)
    else:
        status(rid, UNSUPPORTED, b"unsupported")
