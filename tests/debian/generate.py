#!/usr/bin/env python3
"""Generate the Debian module corpus: one case per class and defined type.

For every module under /usr/share/puppet/modules (Debian's puppet-module-*
packages) this reads manifests/**/*.pp, finds every `class NAME` and
`define NAME` with its parameter list, and writes one case to cases.jsonl:

- a class whose parameters all have defaults (in the signature or the
  module's hiera data): `include NAME`;
- a class with required parameters: `class { 'NAME': p => v, ... }` with
  only the required ones;
- a defined type: `NAME { 'x': p => v, ... }` with only the required ones.

Values come from the parameter's type (the module's and stdlib's type
aliases resolved): String -> 'x', Integer[a, b] -> a, Boolean -> true,
Enum -> its first value, Pattern / Stdlib types -> the first of a list of
plausible strings its regex matches ('/tmp/x', 'http://example.com/x',
'192.0.2.1', ...), Array[T] -> [one T], Hash -> {}, Struct -> its required
keys, Variant -> its first member that yields a value.

  generate.py [--modules DIR] [--out cases.jsonl]

Each line: {"name", "module", "kind" (class|define), "file", "code"}; the
runners compile every case with each fact set in facts/.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*|/\*.*?\*/)
  | (?P<sq>'(?:[^'\\]|\\.)*')
  | (?P<dq>"(?:[^"\\]|\\.)*")
  | (?P<var>\$(?:::)?[a-z_][A-Za-z0-9_]*(?:::[a-z_][A-Za-z0-9_]*)*)
  | (?P<num>-?0[xX][0-9a-fA-F]+|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
  | (?P<name>(?:::)?[A-Za-z_][A-Za-z0-9_-]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<op>=>|==|!=|=~|!~|<=|>=|->|~>|<-|<~|\+=|\*|[\[\](){},=:;?|<>!+\-/%.@&])
  | (?P<other>.)
""", re.X | re.S)
REGEX = re.compile(r"/(?:[^/\\\n]|\\.)*/")

# Plausible strings tried, in order, against a Pattern's regexes.
CANDIDATES = [
    "x", "/tmp/x", "http://example.com/x", "https://example.com/x", "x.example.com", "192.0.2.1",
    "192.0.2.1/24", "2001:db8::1", "0644", "x@example.com", "1", "10", "1s", "10M", "x=y", "x:x",
    "puppet:///modules/x/x", "present", "running", "C:\\x", "salt", "*", "x-x", "0.0.0.0", "tcp",
    "%{x}", "1.0", "file:///tmp/x", "mysql://x:x@localhost/x", "abc", "Xx1", "00:00",
]


def tokens(text):
    """(kind, text, offset) tokens of Puppet source, regex literals recognized
    after the tokens that can precede one in a parameter list."""
    out, pos, prev = [], 0, None
    while pos < len(text):
        if text[pos] == "/" and prev in ("[", ",", "(", "=>", "=", "=~", "!~", "{", "|"):
            m = REGEX.match(text, pos)
            if m:
                out.append(("regex", m.group(0), pos))
                prev, pos = "regex", m.end()
                continue
        m = TOKEN.match(text, pos)
        kind = m.lastgroup
        if kind not in ("ws", "comment"):
            out.append((kind, m.group(0), pos))
            prev = m.group(0) if kind == "op" else kind
        pos = m.end()
    return out


def matching(toks, i):
    """Index of the bracket closing toks[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j][1] if toks[j][0] == "op" else None
        if t in pairs:
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def split_top(toks, sep=","):
    parts, cur, depth = [], [], 0
    for t in toks:
        if t[0] == "op" and t[1] in "([{":
            depth += 1
        elif t[0] == "op" and t[1] in ")]}":
            depth -= 1
        if depth == 0 and t[0] == "op" and t[1] == sep:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        parts.append(cur)
    return parts


def definitions(text):
    """[(kind, name, [(type_tokens, var, has_default)])] of a manifest."""
    toks = tokens(text)
    out = []
    for i, (kind, t, _) in enumerate(toks):
        if kind != "name" or t not in ("class", "define") or i + 1 >= len(toks):
            continue
        if i > 0 and toks[i - 1][1] in (".", "=>", "$"):
            continue
        nk, name, _ = toks[i + 1]
        if nk != "name" or not re.match(r"^(::)?[a-z][a-z0-9_]*(::[a-z][a-z0-9_]*)*$", name):
            continue
        params = []
        j = i + 2
        if j < len(toks) and toks[j][1] == "(":
            end = matching(toks, j)
            for p in split_top(toks[j + 1:end]):
                if not p:
                    continue
                eq = next((k for k, x in enumerate(p) if x[0] == "op" and x[1] == "="), None)
                head = p if eq is None else p[:eq]
                var = next((x[1] for x in reversed(head) if x[0] == "var"), None)
                if var is None:
                    continue
                vi = max(k for k, x in enumerate(head) if x[0] == "var")
                ty = [x for x in head[:vi] if not (x[0] == "op" and x[1] == "*")]
                params.append((ty, var.lstrip("$"), eq is not None))
        out.append((t, name.lstrip(":"), params))
    return out


class Types:
    """Type aliases (`type A::B = ...`) of all modules, by lowercase name."""

    def __init__(self, moddir):
        self.aliases = {}
        for mod in sorted(os.listdir(moddir)):
            tdir = os.path.join(moddir, mod, "types")
            for root, _, files in os.walk(tdir, followlinks=True):
                for f in files:
                    if f.endswith(".pp"):
                        with open(os.path.join(root, f), errors="replace") as fh:
                            self.scan(fh.read())

    def scan(self, text):
        toks = tokens(text)
        for i, (kind, t, _) in enumerate(toks):
            if kind == "name" and t == "type" and i + 2 < len(toks) and toks[i + 2][1] == "=":
                self.aliases[toks[i + 1][1].lower()] = toks[i + 3:]

    def parse(self, toks, i=0):
        """(tree, next index); tree = ('type', name, [args]) | ('lit', text) | ('hash', [(k, v)])."""
        kind, t, _ = toks[i]
        if kind == "op" and t == "{":
            end = matching(toks, i)
            entries = []
            for part in split_top(toks[i + 1:end]):
                arrow = next((k for k, x in enumerate(part) if x[1] == "=>"), None)
                if arrow is None:
                    continue
                key, _ = self.parse(part[:arrow])
                val, _ = self.parse(part[arrow + 1:])
                entries.append((key, val))
            return ("hash", entries), end + 1
        if kind == "name" and t[0].isupper() or kind == "name" and t.startswith("::"):
            args = []
            j = i + 1
            if j < len(toks) and toks[j][1] == "[":
                end = matching(toks, j)
                for part in split_top(toks[j + 1:end]):
                    if part:
                        args.append(self.parse(part)[0])
                j = end + 1
            return ("type", t.lstrip(":"), args), j
        return ("lit", t), i + 1

    def value(self, tree, depth=0):
        """Puppet source text of a plausible value of type `tree`, or None."""
        if depth > 40:
            return None
        if tree[0] != "type":
            return None
        _, name, args = tree
        low = name.lower()
        lits = [a[1] for a in args if a[0] == "lit"]
        nums = [int(x) for x in lits if re.match(r"^-?\d+$", x)]
        if low == "string":
            return "'%s'" % ("x" * max(1, nums[0] if nums else 1))
        if low in ("integer", "numeric"):
            return str(nums[0]) if nums else "1"
        if low == "float":
            return str(float(lits[0])) if lits and re.match(r"^-?[\d.]+$", lits[0]) else "1.0"
        if low == "boolean":
            return "true"
        if low == "enum":
            strs = [x for x in lits if x[0] in "'\""]
            return strs[0] if strs else None
        if low == "pattern":
            return self.pattern(lits)
        if low in ("variant", "optional", "notundef"):
            # Unix paths before Windows ones, strings before booleans.
            rank = {"boolean": 1, "undef": 2}
            order = sorted((a for a in args if not (a[0] == "type" and "windows" in a[1].lower())),
                           key=lambda a: rank.get(a[1].lower(), 0) if a[0] == "type" else 0)
            for a in order:
                v = self.value(a, depth + 1)
                if v is not None and v != "undef":
                    return v
            return "'x'" if low != "variant" or not args else None
        if low in ("array", "tuple"):
            inner = [a for a in args if a[0] == "type"]
            if low == "tuple":
                vals = [self.value(a, depth + 1) for a in inner]
                return None if None in vals else "[%s]" % ", ".join(vals)
            v = self.value(inner[0], depth + 1) if inner else "'x'"
            if v is None:
                return None
            return "[%s]" % ", ".join([v] * max(1, nums[0] if nums else 1))
        if low == "hash":
            return "{}"
        if low == "struct":
            if not args or args[0][0] != "hash":
                return "{}"
            out = []
            for key, val in args[0][1]:
                if key[0] == "type" and key[1].lower() == "optional":
                    continue
                if val[0] == "type" and val[1].lower() in ("optional", "undef"):
                    continue
                k = key[1] if key[0] == "lit" else (key[2][0][1] if key[2] and key[2][0][0] == "lit" else None)
                v = self.value(val, depth + 1)
                if k is None or v is None:
                    return None
                out.append("%s => %s" % (k, v))
            return "{%s}" % ", ".join(out)
        if low == "sensitive":
            v = self.value(args[0], depth + 1) if args else "'x'"
            return None if v is None else "Sensitive(%s)" % v
        if low in ("undef",):
            return "undef"
        if low in ("type",):
            return "String"
        if low in ("regexp",):
            return "/x/"
        if low in self.aliases:
            return self.value(self.parse(self.aliases[low])[0], depth + 1)
        return "'x'"

    @staticmethod
    def pattern(lits):
        regexes = []
        for lit in lits:
            if lit.startswith("/"):
                src = lit[1:-1].replace("\\A", "^").replace("\\z", "$").replace("\\Z", "$")
                src = src.replace("\\h", "[0-9a-fA-F]").replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")
                try:
                    regexes.append(re.compile(src))
                except re.error:
                    continue
            elif lit[0] in "'\"":
                try:
                    regexes.append(re.compile(lit[1:-1]))
                except re.error:
                    continue
        for c in CANDIDATES:
            if not regexes or any(r.search(c) for r in regexes):
                return "'%s'" % c.replace("\\", "\\\\")
        return None



def module_data_keys(moddir):
    """Keys a module's hiera data (data/**/*.yaml) sets: class parameters
    without a default in the manifest that the module layer provides."""
    keys = set()
    for root, _, files in os.walk(os.path.join(moddir, "data"), followlinks=True):
        for f in files:
            if f.endswith((".yaml", ".yml")):
                with open(os.path.join(root, f), errors="replace") as fh:
                    for line in fh:
                        m = re.match(r"""^(['"]?)([a-z][a-z0-9_]*(?:::[a-z0-9_]+)+)\1\s*:""", line)
                        if m:
                            keys.add(m.group(2))
    return keys


def case_code(types, kind, name, params, data_keys=frozenset()):
    args = []
    for ty, var, has_default in params:
        if has_default or (kind == "class" and "%s::%s" % (name, var) in data_keys):
            continue
        # Puppet requires every parameter without a default, an Optional one
        # too (Optional only lets undef be given): a plausible value it is.
        tree = types.parse(ty)[0] if ty else None
        v = types.value(tree) if tree is not None else "'x'"
        args.append("%s => %s" % (var, v if v is not None else "'x'"))
    if kind == "define":
        return "%s { 'x':%s }\n" % (name, "".join(" %s," % a for a in args))
    if not args:
        return "include %s\n" % name
    return "class { '%s':%s }\n" % (name, "".join(" %s," % a for a in args))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modules", default="/usr/share/puppet/modules")
    ap.add_argument("--out", default=os.path.join(HERE, "cases.jsonl"))
    args = ap.parse_args()
    types = Types(args.modules)
    cases, seen = [], set()
    for mod in sorted(os.listdir(args.modules)):
        mdir = os.path.join(args.modules, mod, "manifests")
        files = []
        for root, _, names in os.walk(mdir, followlinks=True):
            files += [os.path.join(root, f) for f in names if f.endswith(".pp")]
        data_keys = module_data_keys(os.path.join(args.modules, mod))
        for path in sorted(files):
            with open(path, errors="replace") as fh:
                text = fh.read()
            for kind, name, params in definitions(text):
                if name in seen:
                    continue
                seen.add(name)
                cases.append({"name": name, "module": mod, "kind": kind,
                              "file": os.path.relpath(path, args.modules),
                              "code": case_code(types, kind, name, params, data_keys)})
    with open(args.out, "w") as fh:
        for c in cases:
            fh.write(json.dumps(c, sort_keys=True) + "\n")
    mods = len({c["module"] for c in cases})
    print("%d cases (%d classes, %d defined types) from %d modules -> %s" % (
        len(cases), sum(c["kind"] == "class" for c in cases), sum(c["kind"] == "define" for c in cases),
        mods, os.path.relpath(args.out)), file=sys.stderr)


if __name__ == "__main__":
    main()
