"""OpenHands trajectories as a source of real misses (used by bench/real_misses.py).

An OpenHands session committed to a repository is a folder of events (`events/<id>.json`), or
one line of an evaluation's `output.jsonl` (its `history`, with the task's `instance`): the
agent's actions (`edit` = a str_replace_editor call: create, str_replace, insert, undo_edit;
`read` = a view) and the environment's observations, each naming the action it answers
(`cause`). A failed edit is a `str_replace` whose observation says "No replacement was
performed, old_str ... did not appear verbatim"; its retry is the next `str_replace` of the same
file that applied.

The file as it was at the failure is rebuilt from the session itself, never from a copy stored
here: the file's text when the session created it (`create`); for a file of the project, its
text at the task's base commit (an evaluation line names it), or else the agent's own view of
the whole file (`cat -n` of every line, not clipped); then every edit of that file the session
applied before the failure, in order. The rebuild is checked against
every view of the file the agent made before the failure (each shown line must be the line the
rebuild has there), and every applied `str_replace` must find its text exactly once; a session
that changed the file some other way (a shell command naming it) is not used.
"""

import ast
import json
import re
import subprocess

FAILED_RE = re.compile(r"No replacement was performed, old_str .* did not appear verbatim", re.S)
VIEW_HEAD_RE = re.compile(r"^Here's the result of running `cat -n` on (.+?):\n")
VIEW_LINE_RE = re.compile(r"^ *(\d+)\t(.*)$")
# A shell command that may change a file it names (sed -i, moving or copying, git restoring it).
SHELL_WRITE_RE = re.compile(r"sed\s+-i|perl\s+-[a-z]*i|\btee\b|\bmv\b|\bcp\b|\brm\b|\bpatch\b"
                            r"|\bgit\s+(checkout|apply|stash|reset)")


def _git(repo, *args, data=None):
    run = subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True)
    return run.stdout if run.returncode == 0 else None


def load_session(repo, commit, folder):
    """{event id: event} of the session folder at commit (events whose blob is absent are skipped)."""
    listing = (_git(repo, "ls-tree", "--name-only", f"{commit}:{folder}/events") or b"").decode().split()
    names = [n for n in listing if re.fullmatch(r"\d+\.json", n)]
    if not names:
        return {}
    spec = "".join(f"{commit}:{folder}/events/{n}\n" for n in names).encode()
    out = _git(repo, "cat-file", "--batch", data=spec) or b""
    events, pos = {}, 0
    for _ in names:
        nl = out.index(b"\n", pos)
        head = out[pos:nl].split()
        if head[-1] == b"missing":
            pos = nl + 1
            continue
        size = int(head[2])
        try:
            ev = json.loads(out[nl + 1:nl + 1 + size])
            events[int(ev["id"])] = ev
        except (ValueError, KeyError):
            pass
        pos = nl + 1 + size + 1
    return events


def load_jsonl(repo, commit, path, line):
    """({event id: event}, instance) of the 1-based line of an output.jsonl at commit."""
    data = _git(repo, "show", f"{commit}:{path}")
    rows = (data or b"").split(b"\n")
    if not 1 <= line <= len(rows) or not rows[line - 1].strip():
        return {}, {}
    try:
        row = json.loads(rows[line - 1])
    except ValueError:
        return {}, {}
    events = {int(ev["id"]): ev for ev in row.get("history") or [] if isinstance(ev, dict) and "id" in ev}
    return events, row.get("instance") or {}


def _args(ev):
    a = ev.get("args")
    if isinstance(a, str):
        try:
            a = ast.literal_eval(a)
        except (ValueError, SyntaxError):
            return {}
    return {k: (None if v == "None" else v) for k, v in (a or {}).items()}


def steps(events):
    """The session's file actions in order: dicts with id, kind (edit/read/run), args, result."""
    answers = {}
    for ev in events.values():
        cause = ev.get("cause")
        if "observation" in ev and cause is not None:
            answers[int(cause)] = ev.get("content") or ev.get("message") or ""
    out = []
    for i in sorted(events):
        ev = events[i]
        kind = ev.get("action")
        if kind in ("edit", "read", "run"):
            out.append({"id": i, "kind": kind, "args": _args(ev), "result": answers.get(i)})
    return out


def workspace(events):
    """The folder the session's task was uploaded to ("/workspace/django__django__4.2"), or None."""
    for i in sorted(events)[:4]:
        m = re.search(r"<uploaded_files>\s*(\S+)\s*</uploaded_files>", events[i].get("message") or "")
        if m:
            return m.group(1).rstrip("/")
    return None


def project(events):
    """The SWE-bench project of the session ("django/django"), from its workspace name."""
    ws = workspace(events) or ""
    m = re.search(r"/([\w.-]+?)__([\w.-]+?)__[\d.]+$", ws)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def model(events):
    for ev in events.values():
        meta = ev.get("tool_call_metadata") or {}
        m = (meta.get("model_response") or {}).get("model")
        if m:
            return m.rsplit("/", 1)[-1]
    return None


def applied(step):
    r = step["result"]
    return r is not None and not r.startswith("ERROR")


def failed(step):
    return step["args"].get("command") == "str_replace" and FAILED_RE.search(step["result"] or "") is not None


def view_lines(result):
    """{line number: text} shown by a view, and whether it shows the whole file."""
    m = VIEW_HEAD_RE.match(result or "")
    if not m:
        return None, False
    shown = {}
    body = result[m.end():]
    for line in body.split("\n"):
        if "<response clipped>" in line:
            break  # the rest of this line, and of the file, was not shown
        lm = VIEW_LINE_RE.match(line)
        if lm:
            shown[int(lm.group(1))] = lm.group(2)
        elif line.strip() and not shown:
            return None, False
    clipped = "<response clipped>" in body or "NOTE:" in body
    return shown, not clipped


def rebuild(steps_, path, before, start=None):
    """((text, earlier, base), None): the text of path just before the step with id `before`, the
    texts it had before (oldest first) and where the rebuild started ("create:<id>" or
    "view:<id>" or "project" when `start`, the file at the task's base commit, is given); or
    (None, why)."""
    text, history, earlier, base = start, [], [], ("project" if start is not None else None)
    name = path.rsplit("/", 1)[-1]
    for st in steps_:
        if st["id"] >= before:
            break
        a = st["args"]
        if st["kind"] == "run":
            cmd = a.get("command") or ""
            writes = SHELL_WRITE_RE.search(cmd) or re.search(r">>?\s*\S*" + re.escape(name), cmd)
            if name in cmd and writes and text is not None:
                return None, f"event {st['id']} ran a shell command that may change {name}"
            continue
        if a.get("path") != path:
            continue
        if st["kind"] == "read":
            shown, whole = view_lines(st["result"])
            if shown is None:
                continue
            if text is None:
                if whole and shown and min(shown) == 1 and sorted(shown) == list(range(1, max(shown) + 1)):
                    text = "".join(shown[k] + "\n" for k in sorted(shown))
                    base = f"view:{st['id']}"
                continue
            lines = text.split("\n")
            for k, v in shown.items():
                if k > len(lines) or lines[k - 1].expandtabs() != v.expandtabs():
                    return None, f"the view at event {st['id']} disagrees with the rebuild at line {k}"
            continue
        if not applied(st):
            continue
        cmd = a.get("command")
        if cmd == "create":
            history.append(text)
            text, base = a.get("file_text") or "", base or f"create:{st['id']}"
        elif text is None:
            return None, f"event {st['id']} edits {name} before the session showed or created it whole"
        elif cmd == "str_replace":
            old, new = (a.get("old_str") or "").expandtabs(), (a.get("new_str") or "").expandtabs()
            t = text.expandtabs()
            if t.count(old) != 1:
                return None, f"the applied str_replace at event {st['id']} matches {t.count(old)} times"
            history.append(text)
            text = t.replace(old, new, 1)
        elif cmd == "insert":
            try:
                n = int(a.get("insert_line"))
            except (TypeError, ValueError):
                return None, f"event {st['id']}: insert without a line"
            lines = text.expandtabs().split("\n")
            history.append(text)
            text = "\n".join(lines[:n] + (a.get("new_str") or "").expandtabs().split("\n") + lines[n:])
        elif cmd == "undo_edit":
            if not history:
                return None, f"event {st['id']}: undo with nothing to undo"
            text = history.pop()
        else:
            continue
        if history and history[-1] is not None:
            earlier.append(history[-1])
    if text is None:
        return None, "the session neither created the file nor showed it whole before the failure"
    return (text, earlier, base), None


def texts(events, failed_id, retry_id):
    """(path, failed old, failed new, retry old, retry new) of two str_replace steps, or None."""
    by = {st["id"]: st for st in steps(events)}
    f, r = by.get(failed_id), by.get(retry_id)
    if not f or not r or f["args"].get("path") != r["args"].get("path"):
        return None
    return (f["args"]["path"], f["args"].get("old_str") or "", f["args"].get("new_str") or "",
            r["args"].get("old_str") or "", r["args"].get("new_str") or "")


def failures(events, similar, window=6):
    """Every failed str_replace with its candidate retries: the next `window` applied str_replace
    steps of the same file, the ones whose texts are most like the failed one's first
    (`similar(step, step)`, higher is closer)."""
    sts = steps(events)
    out = []
    for k, st in enumerate(sts):
        if st["kind"] != "edit" or not failed(st):
            continue
        path = st["args"].get("path")
        later = [r for r in sts[k + 1:] if r["kind"] == "edit" and r["args"].get("path") == path
                 and r["args"].get("command") == "str_replace" and applied(r)][:window]
        if later:
            out.append((st, sorted(later, key=lambda r: (-similar(st, r), r["id"]))))
    return out


def sessions(repo):
    """(commit, folder) of every OpenHands session folder in the repository's history (a folder
    holding events/0.json), each at the newest commit that has it."""
    seen = {}
    for c in (_git(repo, "log", "--all", "--format=%H", "--", "*/events/0.json") or b"").decode().split():
        names = (_git(repo, "ls-tree", "-r", "--name-only", c) or b"").decode().split("\n")
        for n in names:
            if n.endswith("/events/0.json"):
                seen.setdefault(n[: -len("/events/0.json")], c)
    return [(c, f) for f, c in sorted(seen.items())]


def jsonl_files(repo):
    """(commit, path) of every evaluation output (a file named output.jsonl) in the repository's
    history, each at the newest commit that has it."""
    seen = {}
    for c in (_git(repo, "log", "--all", "--format=%H", "--", "*output.jsonl") or b"").decode().split():
        for n in (_git(repo, "ls-tree", "-r", "--name-only", c) or b"").decode().split("\n"):
            if n.endswith("output.jsonl"):
                seen.setdefault(n, c)
    return [(c, f) for f, c in sorted(seen.items())]


def instance_base(instance):
    """(project, base commit) of an evaluation line's task, or (None, None)."""
    repo = instance.get("repo") if isinstance(instance, dict) else None
    base = instance.get("base_commit") if isinstance(instance, dict) else None
    if isinstance(base, dict):
        base = base.get("sha")
    return (repo, base) if repo and base else (None, None)
