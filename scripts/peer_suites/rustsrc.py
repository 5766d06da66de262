"""Reading codex's Rust unit tests at run time: a small lexer and an evaluator for the literal
expressions the tests build their patches and expectations from.

Only what codex's apply-patch tests use is understood: string literals (normal, raw, byte, with
every escape and line continuations), `let` bindings, `format!` / `concat!` / `vec!`, struct
literals (`UpdateFile { path: PathBuf::from("a"), .. }`), `Some`/`None`/`Ok`/`Err`, and the
identity-like methods (`.to_string()`, `.clone()`, `.display()`, ...). Anything else evaluates to
an `Unknown` value, so a test that changed shape is reported rather than misread.
"""

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

ROOT = "@ROOT@"  # a test's temporary directory; replaced by the case's repository


@dataclass
class Tok:
    kind: str  # str | bstr | ident | num | punct | char
    value: Any
    line: int


class Unknown:
    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"Unknown({self.what})"


_ESC = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "0": "\0", "'": "'", '"': '"'}
_CHAR_RE = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RAW_RE = re.compile(r'(b?)r(#*)"')
_NUM_RE = re.compile(r"[0-9][0-9_]*(?:\.[0-9]+)?[a-z0-9]*")


def _unescape(body: str) -> str:
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n == "\n":  # line continuation: skip the newline and the next line's indentation
            i += 2
            while i < len(body) and body[i] in " \t\n\r":
                i += 1
        elif n == "u":
            end = body.index("}", i)
            out.append(chr(int(body[i + 3 : end], 16)))
            i = end + 1
        elif n == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        else:
            out.append(_ESC[n])
            i += 2
    return "".join(out)


def tokenize(src: str) -> List[Tok]:
    toks: List[Tok] = []
    i, line, n = 0, 1, len(src)
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.index("*/", i)
            line += src.count("\n", i, j)
            i = j + 2
        elif _RAW_RE.match(src, i):
            m = _RAW_RE.match(src, i)
            end_mark = '"' + m.group(2)
            start = m.end()
            end = src.index(end_mark, start)
            text = src[start:end]
            toks.append(Tok("bstr" if m.group(1) else "str", text, line))
            line += text.count("\n")
            i = end + len(end_mark)
        elif c == '"' or src.startswith('b"', i):
            is_bytes = c == "b"
            j = i + (2 if is_bytes else 1)
            start = j
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            text = _unescape(src[start:j])
            toks.append(Tok("bstr" if is_bytes else "str", text, line))
            line += src.count("\n", start, j)
            i = j + 1
        elif c == "'":
            m = _CHAR_RE.match(src, i)
            if m:
                toks.append(Tok("char", _unescape(m.group(1)), line))
                i = m.end()
            else:  # a lifetime
                i += 1
        elif c.isalpha() or c == "_":
            m = _IDENT_RE.match(src, i)
            toks.append(Tok("ident", m.group(0), line))
            i = m.end()
        elif c.isdigit():
            m = _NUM_RE.match(src, i)
            toks.append(Tok("num", m.group(0), line))
            i = m.end()
        elif src.startswith("::", i):
            toks.append(Tok("punct", "::", line))
            i += 2
        elif src.startswith("..", i):
            toks.append(Tok("punct", "..", line))
            i += 2
        elif src.startswith("=>", i):
            toks.append(Tok("punct", "=>", line))
            i += 2
        else:
            toks.append(Tok("punct", c, line))
            i += 1
    return toks


_OPEN = {"(": ")", "[": "]", "{": "}"}


def matching(toks: List[Tok], i: int) -> int:
    """Index of the bracket closing the one at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "punct" and t.value in _OPEN:
            depth += 1
        elif t.kind == "punct" and t.value in _OPEN.values():
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced brackets")


def split_args(toks: List[Tok]) -> List[List[Tok]]:
    """Split a bracket's content at its top-level commas."""
    args, cur, depth = [], [], 0
    for t in toks:
        if t.kind == "punct" and t.value in _OPEN:
            depth += 1
        elif t.kind == "punct" and t.value in _OPEN.values():
            depth -= 1
        if depth == 0 and t.kind == "punct" and t.value == ",":
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        args.append(cur)
    return args


def fn_params(toks: List[Tok]) -> Dict[str, List[str]]:
    """fn name -> its parameter names."""
    out = {}
    for i, t in enumerate(toks):
        if t.kind == "ident" and t.value == "fn" and i + 2 < len(toks) and toks[i + 2].value == "(":
            end = matching(toks, i + 2)
            out[toks[i + 1].value] = [
                a[0].value for a in split_args(toks[i + 3 : end]) if a and a[0].kind == "ident"
            ]
    return out


def test_module_start(toks: List[Tok]) -> int:
    """Token index of `mod tests` (0 if the tests are not in such a module)."""
    for i in range(len(toks) - 1):
        if toks[i].value == "mod" and toks[i + 1].value == "tests":
            return i
    return 0


def functions(toks: List[Tok]) -> Dict[str, Tuple[int, List[Tok]]]:
    """fn name -> (line, body tokens), for every `fn` in the file (nested modules included)."""
    out = {}
    for i, t in enumerate(toks):
        if t.kind == "ident" and t.value == "fn" and i + 1 < len(toks):
            name = toks[i + 1].value
            j = i + 2
            while j < len(toks) and not (toks[j].kind == "punct" and toks[j].value in "{;"):
                if toks[j].kind == "punct" and toks[j].value in "([":
                    j = matching(toks, j)
                j += 1
            if j < len(toks) and toks[j].value == "{":
                end = matching(toks, j)
                out[name] = (t.line, toks[j + 1 : end])
    return out


def test_attrs(toks: List[Tok]) -> Dict[str, List[str]]:
    """fn name -> the attribute words before it (`test`, `cfg`, `windows`, ...)."""
    out: Dict[str, List[str]] = {}
    words: List[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "punct" and t.value == "#" and i + 1 < len(toks) and toks[i + 1].value == "[":
            end = matching(toks, i + 1)
            words += [x.value for x in toks[i + 2 : end] if x.kind == "ident"]
            i = end + 1
            continue
        if t.kind == "ident" and t.value == "fn":
            out[toks[i + 1].value] = words
            words = []
        elif t.kind == "ident" and t.value not in ("pub", "async", "unsafe"):
            words = []
        i += 1
    return out


def rust_format(fmt: str, args: List[Any], named: Dict[str, Any]) -> Any:
    out, pos, i = [], 0, 0
    while i < len(fmt):
        c = fmt[i]
        if fmt.startswith("{{", i):
            out.append("{")
            i += 2
        elif fmt.startswith("}}", i):
            out.append("}")
            i += 2
        elif c == "{":
            end = fmt.index("}", i)
            spec = fmt[i + 1 : end].split(":")[0]
            if spec == "":
                val = args[pos]
                pos += 1
            elif spec.isdigit():
                val = args[int(spec)]
            else:
                val = named.get(spec, Unknown(spec))
            if isinstance(val, Unknown):
                return Unknown(f"format argument {spec or pos}")
            out.append(str(val))
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Evaluator:
    """Evaluates literal-ish Rust expressions with a scope of `let` bindings."""

    def __init__(
        self,
        scope: Optional[Dict[str, Any]] = None,
        fns: Optional[Dict[str, Tuple[int, List[Tok]]]] = None,
    ):
        self.scope: Dict[str, Any] = dict(scope or {})
        self.fns = fns or {}
        self.history: Dict[str, List[Any]] = {}  # every value a name was bound to, in order
        self.fn_params: Dict[str, List[str]] = {}

    def run_lets(self, body: List[Tok]) -> None:
        """Evaluate every top-level `let NAME = EXPR;` of a function body, in order."""
        i = 0
        while i < len(body):
            t = body[i]
            if t.kind == "punct" and t.value in _OPEN:
                i = matching(body, i) + 1
                continue
            if t.kind == "ident" and t.value == "let":
                j = i + 1
                if body[j].value == "mut":
                    j += 1
                name = body[j].value if body[j].kind == "ident" else None
                k = j
                while not (body[k].kind == "punct" and body[k].value in "=;"):
                    if body[k].kind == "punct" and body[k].value in _OPEN:
                        k = matching(body, k)
                    k += 1
                end = k
                while end < len(body) and not (
                    body[end].kind == "punct" and body[end].value == ";"
                ):
                    if body[end].kind == "punct" and body[end].value in _OPEN:
                        end = matching(body, end)
                    end += 1
                if name and body[k].value == "=":
                    try:
                        self.scope[name] = self.eval(body[k + 1 : end])
                    except (ValueError, IndexError, KeyError, TypeError):
                        self.scope[name] = Unknown(name)
                    self.history.setdefault(name, []).append(self.scope[name])
                i = end + 1
                continue
            i += 1

    def eval(self, toks: List[Tok]) -> Any:
        value, i = self._expr(toks, 0)
        return value

    # -- recursive descent ------------------------------------------------------------------

    def _expr(self, toks: List[Tok], i: int) -> Tuple[Any, int]:
        while i < len(toks) and toks[i].kind == "punct" and toks[i].value in "&*":
            i += 1
        if i < len(toks) and toks[i].kind == "ident" and toks[i].value == "mut":
            i += 1
        val, i = self._primary(toks, i)
        return self._postfix(val, toks, i)

    def _primary(self, toks: List[Tok], i: int) -> Tuple[Any, int]:
        t = toks[i]
        if t.kind in ("str", "char"):
            return t.value, i + 1
        if t.kind == "bstr":
            return t.value.encode("latin-1") if isinstance(t.value, str) else t.value, i + 1
        if t.kind == "num":
            return int(re.sub(r"[^0-9]", "", t.value) or 0), i + 1
        if t.kind == "punct" and t.value in "([":
            end = matching(toks, i)
            inner = toks[i + 1 : end]
            items = [self.eval(a) for a in split_args(inner)]
            trailing_comma = bool(inner) and inner[-1].kind == "punct" and inner[-1].value == ","
            if t.value == "(" and len(items) == 1 and not trailing_comma:
                return items[0], end + 1
            return (tuple(items) if t.value == "(" else list(items)), end + 1
        if t.kind != "ident":
            return Unknown(str(t.value)), i + 1
        # a path: A::B::C
        path = [t.value]
        i += 1
        while i + 1 < len(toks) and toks[i].value == "::" and toks[i + 1].kind == "ident":
            path.append(toks[i + 1].value)
            i += 2
        name = path[-1]
        if i < len(toks) and toks[i].value == "!":  # a macro
            end = matching(toks, i + 1)
            return self._macro(name, split_args(toks[i + 2 : end])), end + 1
        if i < len(toks) and toks[i].value == "(":
            end = matching(toks, i)
            args = [self.eval(a) for a in split_args(toks[i + 1 : end])]
            if "::".join(path[-2:]) in ("Vec::new", "String::new"):
                return ([] if path[-2] == "Vec" else ""), end + 1
            return self._call(name, args), end + 1
        if i < len(toks) and toks[i].value == "{" and name[:1].isupper():
            end = matching(toks, i)
            return self._struct(name, toks[i + 1 : end]), end + 1
        if name in ("true", "false"):
            return name == "true", i
        if name == "None":
            return None, i
        if len(path) == 1 and name in self.scope:
            return self.scope[name], i
        return Unknown("::".join(path)), i

    def _user_fn(self, name: str, args: List[Any]) -> Any:
        """Call a helper of the test module (`wrap_patch`, `heredoc_script`, `args_bash`, ...)."""
        line, body = self.fns[name]
        params = self.fn_params.get(name, [])
        inner = Evaluator(dict(zip(params, args)), self.fns)
        inner.fn_params = self.fn_params
        inner.run_lets(body)
        # the function's value: its tail expression (after the last top-level `;`)
        start, i = 0, 0
        while i < len(body):
            if body[i].kind == "punct" and body[i].value in _OPEN:
                i = matching(body, i) + 1
                continue
            if body[i].kind == "punct" and body[i].value == ";":
                start = i + 1
            i += 1
        tail = body[start:]
        return inner.eval(tail) if tail else Unknown(f"{name}()")

    def _struct(self, name: str, toks: List[Tok]) -> Dict[str, Any]:
        out: Dict[str, Any] = {"_type": name}
        for field in split_args(toks):
            if not field or field[0].value == "..":
                continue
            key = field[0].value
            if len(field) >= 2 and field[1].value == ":":
                out[key] = self.eval(field[2:])
            else:
                out[key] = self.scope.get(key, Unknown(key))
        return out

    def _macro(self, name: str, args: List[List[Tok]]) -> Any:
        if name == "vec":
            return [self.eval(a) for a in args]
        if name == "concat":
            vals = [self.eval(a) for a in args]
            if any(not isinstance(v, str) for v in vals):
                return Unknown("concat!")
            return "".join(vals)
        if name == "format":
            fmt = self.eval(args[0])
            positional, named = [], dict(self.scope)
            for a in args[1:]:
                if len(a) >= 2 and a[0].kind == "ident" and a[1].value == "=":
                    named[a[0].value] = self.eval(a[2:])
                else:
                    positional.append(self.eval(a))
            if not isinstance(fmt, str):
                return Unknown("format!")
            return rust_format(fmt, positional, named)
        return Unknown(f"{name}!")

    def _call(self, name: str, args: List[Any]) -> Any:
        if name == "strs_to_strings" and len(args) == 1:
            return args[0]
        if name in self.fns and not name.startswith("test_"):
            return self._user_fn(name, args)
        if name in ("from", "Some", "new") and len(args) == 1:
            return args[0]
        if name == "new" and not args:
            return Unknown("new()")
        if name in ("Ok", "Err"):
            return (name, args[0] if args else None)
        if name == "tempdir":
            return {"_dir": ROOT}
        if name[:1].isupper() and len(args) == 1:  # a tuple variant: InvalidPatchError("..")
            return {"_type": name, "0": args[0]}
        return Unknown(f"{name}()")

    def _postfix(self, val: Any, toks: List[Tok], i: int) -> Tuple[Any, int]:
        while i < len(toks):
            t = toks[i]
            if t.kind == "punct" and t.value == "?":
                i += 1
                continue
            if not (t.kind == "punct" and t.value == "." and i + 1 < len(toks)):
                break
            name = toks[i + 1].value
            i += 2
            args: List[Any] = []
            if i < len(toks) and toks[i].value == "(":
                end = matching(toks, i)
                args = [self.eval(a) for a in split_args(toks[i + 1 : end])]
                i = end + 1
            val = self._method(val, name, args)
        return val, i

    def _method(self, val: Any, name: str, args: List[Any]) -> Any:
        if isinstance(val, Unknown):
            return val
        if name in (
            "to_string",
            "clone",
            "into",
            "display",
            "to_path_buf",
            "abs",
            "as_path",
            "to_owned",
            "as_str",
            "as_deref",
            "unwrap",
            "expect",
        ):
            if name == "unwrap" and isinstance(val, tuple) and val and val[0] == "Ok":
                return val[1]
            return val
        if name == "path" and isinstance(val, dict) and "_dir" in val:
            return val["_dir"]
        if name == "join" and isinstance(val, str) and args and isinstance(args[0], str):
            return val.rstrip("/") + "/" + args[0]
        if name == "new" and not args:
            return val
        if isinstance(val, dict) and name in val:
            return val[name]
        return Unknown(f".{name}()")


def find_macro_calls(body: List[Tok], name: str) -> List[Tuple[int, List[List[Tok]]]]:
    """Every `name!(...)` in a token list: (line, argument token lists)."""
    out = []
    for i in range(len(body) - 2):
        t = body[i]
        if t.kind == "ident" and t.value == name and body[i + 1].value == "!":
            end = matching(body, i + 2)
            out.append((t.line, split_args(body[i + 3 : end])))
    return out


def find_calls(body: List[Tok], name: str) -> List[Tuple[int, List[List[Tok]]]]:
    """Every call `name(...)` (not a definition) in a token list."""
    out = []
    for i in range(len(body) - 1):
        t = body[i]
        if (
            t.kind == "ident"
            and t.value == name
            and body[i + 1].value == "("
            and not (i > 0 and body[i - 1].value == "fn")
        ):
            end = matching(body, i + 1)
            out.append((t.line, split_args(body[i + 2 : end])))
    return out


def contains_ident(toks: List[Tok], *names: str) -> bool:
    return any(t.kind == "ident" and t.value in names for t in toks)
