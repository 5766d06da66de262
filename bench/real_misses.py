#!/usr/bin/env python3
"""Suggestion quality on real agents' failed edits, against Aider's "did you mean".

  real_misses.py [--cases FILE] [--cache DIR] [--mirrors DIR] [--aider-src DIR] [--fresh] ...
  real_misses.py discover --mirrors DIR [--out FILE] [--turns N] [--log PATH] OWNER/NAME...
  real_misses.py discover-openhands --mirrors DIR [--out FILE] OWNER/NAME...

The corpus (bench/real_misses/cases.json) holds references only, from two sources. An Aider
case names a public repository, the commit and path of a chat log committed in it, the line
numbers where a failed edit and the agent's successful retry stand in that log, the path the
edit was for, and the commit whose version of that path is the file as it was at the failure.
An OpenHands case names the repository, commit and session (or output.jsonl line) of a
trajectory, the ids of the failed str_replace and of its retry, and where the rebuild of the
file starts; the file at the failure is rebuilt from the trajectory (real_misses_openhands.py),
from the task's project at its base commit when the trajectory names one. No text of those
projects is stored here: at run time the script clones each repository into a cache directory
(--cache, default $REAL_MISSES_CACHE or ~/.cache/patchgate-real-misses; --mirrors DIR uses
existing clones named OWNER+NAME, or OWNER+NAME/repo, instead of the network), reads the log or
trajectory and the file with git, and extracts the texts.

Every case is verified before it is scored: the failed text (the SEARCH section or old_str that
failed) is absent from the file, and the retry's text is present exactly once. The edit is then
run as `patchgate apply --dry-run --checks none --format json` (old_string = the failed text,
new_string = the failed edit's replacement) in a checkout of the repository at that commit, so
patchgate sees the repository's history: for Aider the earlier edits of the agent's session are
the commits before it (the logged agent commits every edit it applies). An OpenHands miss runs
in a checkout of the task's project with the rebuilt file written over it, or in a scratch
repository holding the file (untracked when the session created it). Scored, per kind, per
agent and overall:

  top-1 / top-3   the first suggestion / one of the first three overlaps the lines the retry
                  matched;
  text-equal      the first suggestion's text is the text of the whole lines the retry's text
                  stands on (a copy-paste retry works);
  none            no suggestion at all.

The same is computed for Aider's own "did you mean" (find_similar_lines from
aider/coders/editblock_coder.py, loaded from an Aider checkout, --aider-src, by default cloned
into the cache at a pinned commit) on the same file and text. Aider shows one window, widened by
5 lines on each side when its first or last line is not exact: "region" uses the window it
matched, "shown" the widened one. A case whose retry is aimed elsewhere (its text shares little
with the failed text) stays in the totals and is also reported apart ("aimed" rows).

--replay runs each miss after the file's last change was applied by `patchgate apply` (a
unified diff, to the working tree), so the edit that came before the miss is in patchgate's own
undo history rather than in a commit (results kept apart): for Aider in a fresh checkout of the
parent of the last commit that changed the file, for OpenHands the session's last applied edit
of the file.

Also printed: the median time of a miss, by the size of the file (whole process, and the
planning step from PATCHGATE_TIMINGS=1: "edits matched" minus "edits digested"); with --again,
also that of the same miss run a second time in the same checkout.

--self-test builds a made-up Aider log and repository, and a made-up OpenHands session, in a
scratch folder and checks that discover finds their misses and the scorer verifies and scores
them.

Results are kept per case and binary in the cache (results-<sha>.jsonl), so an interrupted run
resumes where it stopped; --fresh starts over. PATCHGATE=/path/to/patchgate selects the binary
(default: target/release/patchgate of this checkout). Python 3 standard library and git only.

`discover` proposes cases from the Aider chat logs of clones under --mirrors
(.aider.chat.history.md, a renamed copy such as aider.chat.history.md, or a log under another
name given with --log, its file paths relative to the repository root): every
"SearchReplaceNoExactMatch" failure followed by a retry for the same path (in the same turn, or
one aimed at the same text within --turns user turns) that verifies against a commit of the
repository, with its kind; it prints them as JSON (to --out). `discover-openhands` does the same
for the OpenHands trajectories of clones (session folders and output.jsonl files).
"""

import argparse
import difflib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_misses_openhands as openhands  # noqa: E402  (a sibling module of this script)
DEFAULT_CASES = os.path.join(ROOT, "bench", "real_misses", "cases.json")
AIDER_REPO = "Aider-AI/aider"
AIDER_COMMIT = "5dc9490bb35f9729ef2c95d00a19ccd30c26339c"
KINDS = ("recalled", "stale", "look-alike", "whitespace", "other")
LOOKBACK = 20  # earlier versions of the file looked at for "stale"

HEAD_RE = re.compile(r"^<{5,9} SEARCH>?\s*$")
DIVIDER_RE = re.compile(r"^={5,9}\s*$")
UPDATED_RE = re.compile(r"^>{5,9} REPLACE\s*$")
FAIL_RE = re.compile(r"^## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in (.+?)\s*$")
COMMIT_RE = re.compile(r"^> Commit ([0-9a-f]{7,40}) ")
MODEL_RE = re.compile(r"^> (?:Main )?[Mm]odels?: (\S+)")
USER_RE = re.compile(r"^#### ")
LOG_NAME_RE = re.compile(r"(^|/)\.?aider\.chat\.history[^/]*\.md$")


# --- git --------------------------------------------------------------------------------------

def git(cwd, *args, check=True, text=True):
    run = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=text,
                         env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"})
    if check and run.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd}: {run.stderr.strip()}")
    return run.stdout if run.returncode == 0 else None


def show(repo, commit, path):
    """The text of path at commit (line endings folded to LF), or None."""
    data = git(repo, "show", f"{commit}:{path}", check=False, text=False)
    if data is None:
        return None
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


def local_clone(mirrors, repo):
    if not mirrors:
        return None
    base = os.path.join(mirrors, repo.replace("/", "+"))
    for cand in (os.path.join(base, "repo"), base):
        if os.path.isdir(cand) and git(cand, "rev-parse", "--git-dir", check=False):
            return cand
    return None


def ensure_repo(cache, mirrors, repo, url_template):
    """A bare clone of repo in the cache (made once; from --mirrors if there, else the URL)."""
    dest = os.path.join(cache, "repos", repo.replace("/", "+") + ".git")
    if os.path.isdir(dest) and os.path.exists(os.path.join(dest, ".complete")):
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    src = local_clone(mirrors, repo) or url_template.format(repo=repo)
    part = dest + ".part"
    shutil.rmtree(part, ignore_errors=True)
    git(cache, "clone", "--quiet", "--mirror", src, part)
    os.rename(part, dest)
    open(os.path.join(dest, ".complete"), "w").close()
    return dest


# --- the chat log ---------------------------------------------------------------------------

def block_at(lines, i):
    """(search, replace) of the SEARCH/REPLACE block whose head is lines[i] (0-based), or None."""
    if i >= len(lines) or not HEAD_RE.match(lines[i]):
        return None
    j = i + 1
    while j < len(lines) and not DIVIDER_RE.match(lines[j]):
        if HEAD_RE.match(lines[j]) or UPDATED_RE.match(lines[j]):
            return None
        j += 1
    k = j + 1
    while k < len(lines) and not UPDATED_RE.match(lines[k]):
        k += 1
    if k >= len(lines):
        return None
    search = "".join(l + "\n" for l in lines[i + 1:j])
    replace = "".join(l + "\n" for l in lines[j + 1:k])
    return search, replace


def norm_path(p):
    return p.strip().strip("`*'\"").rstrip(":").replace("\\", "/").lstrip("./") if p else p


def block_path(lines, i):
    """The file name written before the block head at lines[i] (Aider's layout), or None."""
    for back in range(1, 4):
        if i - back < 0:
            return None
        l = lines[i - back].strip()
        if not l or l.startswith("```"):
            continue
        return norm_path(l)
    return None


def unquote(line):
    """A line of a message Aider wrote into the log as a block quote ("> " first, "  " last)."""
    if line.startswith("> "):
        line = line[2:]
    elif line.startswith(">"):
        line = line[1:]
    return line[:-2] if line.endswith("  ") else line


def parse_log(text):
    """Failures and SEARCH blocks of an Aider chat log, with 1-based line numbers of their heads.

    A failure's SEARCH text is taken from the agent's own message where the block was written
    (the error message repeats it, but some Aider versions log it as a block quote, which changes
    its whitespace); the echo is only used to find that block.
    """
    lines = text.split("\n")
    failures, blocks, commits, users, models = [], [], [], [], []
    for i, line in enumerate(lines):
        m = FAIL_RE.match(unquote(line).rstrip())
        if m:
            quoted = line.startswith(">")
            body = [unquote(l) if quoted else l for l in lines[i + 1:i + 4000]]
            while body and not body[0].strip():
                body.pop(0)
            b = block_at(body, 0)
            if b:
                failures.append({"echo_line": i + 1, "path": norm_path(m.group(1)), "old": b[0], "new": b[1]})
            continue
        if HEAD_RE.match(line) and not (i > 0 and FAIL_RE.match(unquote(lines[i - 1]).rstrip())):
            b = block_at(lines, i)
            if b:
                blocks.append({"line": i + 1, "path": block_path(lines, i), "old": b[0], "new": b[1]})
        m = COMMIT_RE.match(line)
        if m:
            commits.append((i + 1, m.group(1)))
        if USER_RE.match(line):
            users.append(i + 1)
        m = MODEL_RE.match(line)
        if m:
            models.append((i + 1, m.group(1)))
    # The agent's block each failure echoes: the last one before it with the same text.
    for f in failures:
        own = [b for b in blocks if b["line"] < f["echo_line"] and squash(b["old"]) == squash(f["old"])]
        # The same text sent for several files: the block written for this file.
        own = [b for b in own if b["path"] == f["path"]] or own
        if own:
            f.update(line=own[-1]["line"], old=own[-1]["old"], new=own[-1]["new"])
        else:
            f["line"] = None
    return {"lines": lines, "failures": [f for f in failures if f["line"]], "blocks": blocks,
            "commits": commits, "users": users, "models": models}


def extract(log_text, fail_line, retry_line):
    """(failed old, failed new, retry old, retry new) at those 1-based head lines, or None."""
    lines = log_text.split("\n")
    f = block_at(lines, fail_line - 1)
    r = block_at(lines, retry_line - 1)
    if not f or not r:
        return None
    return f[0], f[1], r[0], r[1]


# --- facts about a case -----------------------------------------------------------------------

def region(text, needle):
    """1-based (start, end) lines of needle's first occurrence in text."""
    at = text.find(needle)
    start = text.count("\n", 0, at) + 1
    n = needle.count("\n") + (0 if needle.endswith("\n") else 1)
    return start, start + max(n, 1) - 1


def ratio(a, b):
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def squash(s):
    return re.sub(r"\s+", "", s)


def trivial(line):
    s = line.strip()
    return len(re.sub(r"[\W_]", "", s)) < 4 or s in ("return", "else:", "pass", "break", "continue")


def whole_lines_squashed(needle, text):
    """Is needle, whitespace removed, the text of some run of whole lines with it removed too?"""
    want = squash(needle)
    if not want:
        return False
    lines = [squash(l) for l in text.split("\n")]
    for i in range(len(lines)):
        if not want.startswith(lines[i]) or not lines[i]:
            continue
        acc = ""
        for l in lines[i:]:
            acc += l
            if acc == want:
                return True
            if len(acc) >= len(want) or not want.startswith(acc):
                break
    return False


def classify(failed, retry, text, earlier):
    """The kind of a miss (see KINDS) and a short reason."""
    if squash(failed) == squash(retry) or whole_lines_squashed(failed, text):
        return "whitespace", "equal to the file's text once whitespace is ignored"
    one = failed.strip()
    if "\n" not in one and len(one) >= 8 and sum(1 for l in text.split("\n") if one in l) == 1:
        return "whitespace", "a line the file has inside a longer line"
    for commit, old in earlier:
        if failed in old or (squash(failed) in squash(old) and squash(failed) not in squash(text)):
            return "stale", f"in the file at {commit[:10] if re.fullmatch('[0-9a-f]{40}', commit) else commit}"
    flines = [l for l in failed.split("\n") if l.strip()]
    tlines = text.split("\n")
    first = flines[0] if flines else ""
    if len(flines) >= 2 and not trivial(first) and sum(1 for l in tlines if l == first) == 1:
        return "recalled", "the first line is exact and unique; the rest differs"
    # Look-alike: a window elsewhere is about as similar to the failed text as the retry's place.
    n = max(1, failed.count("\n"))
    rs, re_ = region(text, retry)
    best_in, best_out = 0.0, 0.0
    sm = difflib.SequenceMatcher(None, autojunk=False)
    sm.set_seq2(failed.rstrip("\n"))
    for i in range(0, max(1, len(tlines) - n + 1)):
        sm.set_seq1("\n".join(tlines[i:i + n]))
        if sm.real_quick_ratio() < 0.6 or sm.quick_ratio() < 0.6:
            continue
        r = sm.ratio()
        if i + n >= rs and i + 1 <= re_:
            best_in = max(best_in, r)
        else:
            best_out = max(best_out, r)
    if best_out >= 0.6 and best_out >= best_in - 0.05:
        return "look-alike", f"a window elsewhere is {best_out:.2f} similar (the retry's place {best_in:.2f})"
    return "other", ""


def aimed(failed, failed_new, retry, retry_new):
    """Does the retry edit what the failed edit was aimed at?"""
    return ratio(failed, retry) >= 0.5 or ratio(failed_new, retry_new) >= 0.6


def earlier_versions(repo, commit, path, n=LOOKBACK):
    out = []
    revs = git(repo, "log", "--format=%H", f"-n{n + 1}", commit, "--", path, check=False) or ""
    for c in revs.split()[1:] if revs.split()[:1] == [commit] else revs.split():
        t = show(repo, c, path)
        if t is not None:
            out.append((c, t))
    # The version at commit itself is the current file; versions of commits before it that
    # touched the file are the candidates. When commit did not touch the file, revs[0] is an
    # older commit and its text equals the current one, which can never make a case stale.
    return out


# --- discover -------------------------------------------------------------------------------

def resolve(repo, sha):
    return (git(repo, "rev-parse", "--verify", "-q", f"{sha}^{{commit}}", check=False) or "").strip() or None


def file_at_failure(repo, log, fail, retry, path, failed, retry_old, retry_new):
    """The commit whose version of path verifies the case, preferring the log's own commits."""
    def ok(c):
        t = show(repo, c, path)
        return t is not None and failed not in t and t.count(retry_old) == 1
    before = [s for l, s in log["commits"] if l < retry["line"]]
    after = [s for l, s in log["commits"] if l > retry["line"]]
    cands = []
    if after:
        c = resolve(repo, after[0])
        if c:
            p = resolve(repo, c + "^")
            if p:
                cands.append(p)
    if before:
        c = resolve(repo, before[-1])
        if c:
            cands.append(c)
    for c in cands:
        if ok(c):
            return c
    # Fall back to the versions of the file: the one after which the retry's edit shows up.
    revs = (git(repo, "log", "--all", "--format=%H", "-n400", "--", path, check=False) or "").split()
    revs.reverse()
    texts = {}
    for k, c in enumerate(revs[:-1]):
        t = texts.get(c) or show(repo, c, path)
        nxt = show(repo, revs[k + 1], path)
        texts[revs[k + 1]] = nxt
        if t is None or nxt is None:
            continue
        if failed not in t and t.count(retry_old) == 1 and retry_old not in nxt and retry_new.strip() and retry_new in nxt:
            return c
    return None


def discover(args):
    out = []
    for repo_name in args.repos:
        repo = local_clone(args.mirrors, repo_name)
        if not repo:
            print(f"{repo_name}: no clone under {args.mirrors}", file=sys.stderr)
            continue
        # Aider's default name, and the names people give it when they keep it: without the
        # leading dot, with a suffix (".backup"), in a subfolder.
        paths = {p for p in (git(repo, "log", "--all", "--format=", "--name-only", check=False) or "").split("\n")
                 if LOG_NAME_RE.search(p)}
        # Logs kept under other names (--log), whose paths are relative to the repository root.
        rooted = set(args.log or ())
        paths |= rooted
        n_found = 0
        for lp in sorted(paths):
            best, size = None, -1
            for c in (git(repo, "log", "--all", "--format=%H", "--", lp, check=False) or "").split():
                s = git(repo, "cat-file", "-s", f"{c}:{lp}", check=False)
                if s and int(s) > size:
                    best, size = c, int(s)
            if not best:
                continue
            text = show(repo, best, lp)
            if not text:
                continue
            log = parse_log(text)
            base = "" if lp in rooted else os.path.dirname(lp)
            seen = set()
            for fail in log["failures"]:
                # The retry: the agent's next block for that path in the same turn, or one aimed at
                # the same text in the --turns - 1 turns after it (the user asked it to try again).
                later = [u for u in log["users"] if u > fail["echo_line"]] + [1 << 30] * (args.turns + 1)
                nxt_user = later[args.turns - 1]
                path = os.path.normpath(os.path.join(base, fail["path"])) if base else fail["path"]
                cands = [b for b in log["blocks"] if fail["echo_line"] < b["line"] < nxt_user
                         and b["path"] and (b["path"] == fail["path"] or b["path"].endswith("/" + fail["path"])
                                            or fail["path"].endswith("/" + b["path"]))
                         and b["old"].strip() and b["old"] != fail["old"]]
                cands.sort(key=lambda b: -max(ratio(fail["old"], b["old"]), ratio(fail["new"], b["new"])))
                if os.environ.get("REAL_MISSES_DEBUG"):
                    print(f"  failure at {fail['line']} ({path}): {len(cands)} candidate retries", file=sys.stderr)
                for b in cands[:6]:
                    same_turn = b["line"] < later[0]
                    if not aimed(fail["old"], fail["new"], b["old"], b["new"]) and not (b is cands[0] and same_turn):
                        continue
                    commit = file_at_failure(repo, log, fail, b, path, fail["old"], b["old"], b["new"])
                    if not commit:
                        continue
                    key = (fail["old"], b["line"])
                    if key in seen:
                        break
                    seen.add(key)
                    text_at = show(repo, commit, path)
                    kind, why = classify(fail["old"], b["old"], text_at, earlier_versions(repo, commit, path))
                    model = next((m for l, m in reversed(log["models"]) if l < fail["line"]), None)
                    out.append({
                        "repo": repo_name, "agent": "aider", "model": model,
                        "log": {"path": lp, "commit": best, "failed_line": fail["line"], "retry_line": b["line"]},
                        "path": path, "commit": commit, "kind": kind, "why": why,
                        "aimed": aimed(fail["old"], fail["new"], b["old"], b["new"]),
                    })
                    n_found += 1
                    break
        print(f"{repo_name}: {n_found} cases", file=sys.stderr)
    for i, c in enumerate(out):
        c.setdefault("id", f"{c['repo']}#{c['log']['failed_line']}:{c['path']}")
    data = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(data + "\n")
    else:
        print(data)


def trajectory_sources(repo):
    """Every OpenHands trajectory of a clone: (reference, events, instance), the reference being
    what a case records ({"commit", "session"} or {"commit", "file", "line"})."""
    for commit, folder in openhands.sessions(repo):
        yield {"commit": commit, "session": folder}, openhands.load_session(repo, commit, folder), {}
    for commit, path in openhands.jsonl_files(repo):
        n = (git(repo, "show", f"{commit}:{path}", check=False) or "").count("\n") + 1
        for line in range(1, n + 1):
            events, instance = openhands.load_jsonl(repo, commit, path, line)
            if events:
                yield {"commit": commit, "file": path, "line": line}, events, instance


def load_trajectory(repo, tr):
    if "session" in tr:
        return openhands.load_session(repo, tr["commit"], tr["session"]), {}
    return openhands.load_jsonl(repo, tr["commit"], tr["file"], tr["line"])


def discover_openhands(args):
    """Cases from the OpenHands trajectories committed in clones under --mirrors (see
    real_misses_openhands.py): every failed str_replace with a retry whose file the trajectory
    rebuilds and verifies. A task's project (an evaluation line names it and its base commit)
    is read from its clone under --mirrors when there is one."""
    out = []

    def close(f, r):
        return max(ratio(f["args"].get("old_str") or "", r["args"].get("old_str") or ""),
                   ratio(f["args"].get("new_str") or "", r["args"].get("new_str") or ""))
    seen = set()  # a trajectory copied into several repositories (a fork) counts once
    for repo_name in args.repos:
        repo = local_clone(args.mirrors, repo_name)
        if not repo:
            print(f"{repo_name}: no clone under {args.mirrors}", file=sys.stderr)
            continue
        n_found = 0
        for ref, events, instance in trajectory_sources(repo):
            ws = openhands.workspace(events) or ""
            steps = openhands.steps(events)
            proj, base_commit = openhands.instance_base(instance)
            proj_clone = local_clone(args.mirrors, proj) if proj else None
            where = ref.get("session") or f"{ref['file']}:{ref['line']}"
            for f, retries in openhands.failures(events, close):
                path = f["args"]["path"]
                rel = os.path.relpath(path, ws) if ws and path.startswith(ws + "/") else path.lstrip("/")
                start = show(proj_clone, base_commit, rel) if proj_clone else None
                got, why = openhands.rebuild(steps, path, f["id"], start)
                if got is None:
                    if os.environ.get("REAL_MISSES_DEBUG"):
                        print(f"  {where} {f['id']}: {why}", file=sys.stderr)
                    continue
                text, earlier, base = got
                old, new = f["args"].get("old_str") or "", f["args"].get("new_str") or ""
                # The closest retry whose text is in the file at the failure, once.
                r = next((r for r in retries if text.count(r["args"].get("old_str") or "\0") == 1), None)
                if old in text or r is None:
                    continue
                r_old, r_new = r["args"].get("old_str") or "", r["args"].get("new_str") or ""
                key = (rel, old, new, r_old, r_new, text)
                if key in seen:
                    continue
                seen.add(key)
                kind, why = classify(old, r_old, text, [(f"the session, {k + 1} edit(s) back", t)
                                                        for k, t in enumerate(reversed(earlier))])
                tr = dict(ref, commit=resolve(repo, ref["commit"]), failed_event=f["id"], retry_event=r["id"],
                          base=base)
                case = {"repo": repo_name, "agent": "openhands", "model": openhands.model(events),
                        "project": proj or openhands.project(events), "trajectory": tr, "path": rel}
                if base == "project":
                    case["commit"] = base_commit
                tag = os.path.basename(ref["session"])[:8] if "session" in ref else f"L{ref['line']}"
                case.update(kind=kind, why=why, aimed=aimed(old, new, r_old, r_new),
                            id=f"{repo_name}#{tag}/{f['id']}:{rel}")
                out.append(case)
                n_found += 1
        print(f"{repo_name}: {n_found} cases", file=sys.stderr)
    data = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(data + "\n")
    else:
        print(data)


# --- Aider's "did you mean" -----------------------------------------------------------------

def load_aider(src):
    """aider/coders/editblock_coder.py of an Aider checkout, its heavy imports stubbed."""
    for name in ("aider", "aider.coders"):
        mod = types.ModuleType(name)
        mod.__path__ = []
        sys.modules.setdefault(name, mod)
    stubs = {"aider.utils": {}, "aider.dump": {"dump": lambda *a, **k: None},
             "aider.coders.base_coder": {"Coder": object},
             "aider.coders.editblock_prompts": {"EditBlockPrompts": object}}
    for name, attrs in stubs.items():
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod
    path = os.path.join(src, "aider", "coders", "editblock_coder.py")
    spec = importlib.util.spec_from_file_location("aider.coders.editblock_coder", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def aider_judge(aider, failed, text, rs, re_, want):
    shown = aider.find_similar_lines(failed, text)
    if not shown:
        return {"none": True, "top1": False, "shown": False, "equal": False}
    content = text.splitlines()
    chunk = shown.split("\n")
    n = len(failed.splitlines())
    start = next((i for i in range(len(content) - len(chunk) + 1) if content[i:i + len(chunk)] == chunk), None)
    if start is None:
        return {"none": False, "top1": False, "shown": False, "equal": False}
    end = start + len(chunk)  # exclusive, 0-based
    if len(chunk) == n:
        core = (start, end)
    elif start > 0:
        core = (start + 5, start + 5 + n)
    elif end < len(content):
        core = (end - 5 - n, end - 5)
    else:
        core = (start, end)
    over = lambda a, b: a + 1 <= re_ and b >= rs
    return {"none": False, "top1": over(*core), "shown": over(start, end),
            "equal": "\n".join(content[core[0]:core[1]]).rstrip("\n") == want}


def aider_applies(aider, failed, failed_new, text, rs, re_):
    """Would Aider's own lenient replace (replace_most_similar_chunk) apply the failed edit, and
    where: None (it would not), "right" (its change overlaps the retry's lines), or "wrong"."""
    try:
        out = aider.replace_most_similar_chunk(text, failed, failed_new)
    except Exception:  # Aider's matcher raising on odd input is "would not apply"
        return None
    if not out:
        return None
    a, b = text.split("\n"), out.split("\n")
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    changed = [(i1 + 1, max(i1 + 1, i2)) for tag, i1, i2, _, _ in sm.get_opcodes() if tag != "equal"]
    return "right" if any(x <= re_ and y >= rs for x, y in changed) else "wrong"


# --- scoring --------------------------------------------------------------------------------

def run_patchgate(pg, wt, path, old, new, scratch):
    patch = os.path.join(scratch, "edit.json")
    with open(patch, "w", encoding="utf-8") as f:
        json.dump([{"file_path": path, "old_string": old, "new_string": new}], f)
    env = {**os.environ, "PATCHGATE_TIMINGS": "1"}
    t0 = time.perf_counter()
    run = subprocess.run([pg, "apply", patch, "--dry-run", "--checks", "none", "--format", "json"],
                         cwd=wt, capture_output=True, text=True, env=env)
    wall = (time.perf_counter() - t0) * 1000
    marks = dict((m.group(2).strip(), float(m.group(1)))
                 for m in re.finditer(r"timing:\s+([\d.]+) ms\s+(.+)", run.stderr))
    plan = None
    if "plan: edits matched" in marks and "plan: edits digested" in marks:
        plan = marks["plan: edits matched"] - marks["plan: edits digested"]
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        return None, wall, plan, f"exit {run.returncode}: {run.stderr.strip()[:300]}"
    return report, wall, plan, None


def drop_worktree(repo, wt):
    git(repo, "worktree", "remove", "--force", wt, check=False)
    # patchgate's history pins of that working tree: the next case must not see them.
    for ref in (git(repo, "for-each-ref", "--format=%(refname)", "refs/patchgate", check=False) or "").split():
        git(repo, "update-ref", "-d", ref, check=False)


def replay_last_change(repo, case, text, ctx):
    """A fresh checkout of the parent of the last commit that changed the file, with that change
    applied through `patchgate apply` (working tree, no commit), so that patchgate's own history
    holds the edit that came before the miss. Returns (worktree, patch_id) or (None, why)."""
    last = (git(repo, "log", "-1", "--format=%H", case["commit"], "--", case["path"], check=False) or "").strip()
    parent = resolve(repo, last + "^") if last else None
    if not parent:
        return None, "the file's last change is the repository's first commit"
    ctx["replays"] = ctx.get("replays", 0) + 1
    wt = os.path.join(ctx["scratch"], f"replay{ctx['replays']}")
    git(repo, "worktree", "prune")
    if repo in ctx.get("sparse", ()) or git(repo, "worktree", "add", "--quiet", "--detach", "--force", wt,
                                            parent, check=False) is None:
        # See aider_worktree: a clone without some blobs gets the file alone.
        git(repo, "worktree", "remove", "--force", wt, check=False)
        ctx.setdefault("sparse", set()).add(repo)
        git(repo, "worktree", "add", "--quiet", "--detach", "--force", "--no-checkout", wt, parent)
        git(wt, "sparse-checkout", "set", "--no-cone", "/" + case["path"])
        git(wt, "checkout", "--quiet", "--detach", parent)
    diff = git(repo, "diff", "--no-color", "--no-ext-diff", "--no-renames", parent, last, "--", case["path"])
    patch = os.path.join(ctx["scratch"], "replay.diff")
    with open(patch, "w", encoding="utf-8") as f:
        f.write(diff)
    run = subprocess.run([ctx["pg"], "apply", patch, "--input", "diff", "--checks", "none", "--format", "json"],
                         cwd=wt, capture_output=True, text=True)
    try:
        with open(os.path.join(wt, case["path"]), encoding="utf-8", newline="") as f:
            now = f.read().replace("\r\n", "\n")
        pid = json.loads(run.stdout).get("patch_id")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        now, pid = None, None
    if now != text or not pid:
        drop_worktree(repo, wt)
        return None, f"patchgate did not reproduce {last[:10]} (exit {run.returncode})"
    return wt, pid


def aider_case(case, ctx):
    """(failed, failed_new, retry, retry_new, text, repo) of a case from an Aider log, or an error."""
    repo = ensure_repo(ctx["cache"], ctx["mirrors"], case["repo"], ctx["url"])
    log_text = show(repo, case["log"]["commit"], case["log"]["path"])
    if log_text is None:
        return "log not readable at its commit"
    texts = extract(log_text, case["log"]["failed_line"], case["log"]["retry_line"])
    if texts is None:
        return "no SEARCH/REPLACE block at the recorded lines"
    text = show(repo, case["commit"], case["path"])
    if text is None:
        return f"{case['path']} not readable at {case['commit'][:10]}"
    return (*texts, text, repo)


def aider_worktree(case, repo, text, ctx):
    """A checkout at the case's commit (the file's last change replayed through patchgate with
    --replay): (worktree, patch id or None, whether to drop it after), or (None, why, _)."""
    if ctx.get("replay"):
        wt, replayed = replay_last_change(repo, case, text, ctx)
        return wt, replayed, True
    if repo in ctx.get("sparse", ()):
        return sparse_worktree(repo, case, ctx), None, True
    wt = ctx["worktrees"].get(repo)
    try:
        if wt is None:
            git(repo, "worktree", "prune")  # left over from an interrupted run
            wt = os.path.join(ctx["scratch"], f"wt{len(ctx['worktrees'])}")
            ctx["worktrees"][repo] = wt
            git(repo, "worktree", "add", "--quiet", "--detach", "--force", wt, case["commit"])
        else:
            git(wt, "checkout", "--quiet", "--force", "--detach", case["commit"])
            git(wt, "clean", "-qfdx")
    except RuntimeError:
        # A clone that lacks some blobs (a mirror without its largest files) cannot check out
        # the whole tree: check out only the file, in a worktree of its own.
        del ctx["worktrees"][repo]
        git(repo, "worktree", "remove", "--force", wt, check=False)
        ctx.setdefault("sparse", set()).add(repo)
        return sparse_worktree(repo, case, ctx), None, True
    return wt, None, False


def sparse_worktree(repo, case, ctx):
    """A worktree at the case's commit with only the case's file checked out (sparse)."""
    ctx["sparse_n"] = ctx.get("sparse_n", 0) + 1
    wt = os.path.join(ctx["scratch"], f"sp{ctx['sparse_n']}")
    git(repo, "worktree", "prune")
    git(repo, "worktree", "add", "--quiet", "--detach", "--force", "--no-checkout", wt, case["commit"])
    git(wt, "sparse-checkout", "set", "--no-cone", "/" + case["path"])
    git(wt, "checkout", "--quiet", "--detach", case["commit"])
    return wt


def trajectory_case(case, ctx):
    """(failed, failed_new, retry, retry_new, text, earlier, base) of a case from an OpenHands
    session: the file rebuilt from the session (real_misses_openhands.py), or an error."""
    repo = ensure_repo(ctx["cache"], ctx["mirrors"], case["repo"], ctx["url"])
    tr = case["trajectory"]
    events, _ = load_trajectory(repo, tr)
    if not events:
        return f"no trajectory at {tr.get('session') or tr.get('file')}@{tr['commit'][:10]}"
    texts = openhands.texts(events, tr["failed_event"], tr["retry_event"])
    if texts is None:
        return "no str_replace pair at the recorded events"
    path, failed, failed_new, retry, retry_new = texts
    start = None
    if case.get("commit"):
        project = ensure_repo(ctx["cache"], ctx["mirrors"], case["project"], ctx["url"])
        start = show(project, case["commit"], case["path"])
        if start is None:
            return f"{case['path']} not readable at {case['commit'][:10]} of {case['project']}"
    got, why = openhands.rebuild(openhands.steps(events), path, tr["failed_event"], start)
    if got is None:
        return f"rebuild: {why}"
    text, earlier, base = got
    if base != tr.get("base", base):
        return f"rebuild started at {base}, the case says {tr['base']}"
    return failed, failed_new, retry, retry_new, text, earlier, base


def trajectory_worktree(case, text, earlier, base, ctx):
    """A scratch repository holding the rebuilt file, as the agent's workspace had it: a file of
    the project (the rebuild started from a view) is committed as the session found it and
    changed in the working tree; a file the session created is untracked. With --replay the
    session's last change of the file is applied through patchgate. (worktree, patch id or None,
    True), or (None, why, _)."""
    ctx["tj"] = ctx.get("tj", 0) + 1
    wt = os.path.join(ctx["scratch"], f"tj{ctx['tj']}")
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@invalid"]
    if case.get("commit"):
        # The task's project at its base commit, with its history, as the agent had it.
        project = ensure_repo(ctx["cache"], ctx["mirrors"], case["project"], ctx["url"])
        git(project, "worktree", "prune")
        git(project, "worktree", "add", "--quiet", "--detach", "--force", wt, case["commit"])
        ctx.setdefault("tj_projects", []).append((project, wt))
    else:
        os.makedirs(wt)
        git(wt, "init", "-q")
        git(wt, *ident, "commit", "-q", "--allow-empty", "-m", "workspace")
    target = os.path.join(wt, case["path"])
    os.makedirs(os.path.dirname(target), exist_ok=True)

    def put(t):
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(t)
    if base.startswith("view:"):
        put((earlier or [text])[0])
        git(wt, "add", case["path"])
        git(wt, *ident, "commit", "-q", "-m", "the file as the session found it")
    if not ctx.get("replay"):
        put(text)
        return wt, None, True
    if not earlier:
        return None, "the session did not change the file before the failure", True
    put(earlier[-1])
    # The last change as a unified diff between the two versions, through patchgate.
    tmp = os.path.join(ctx["scratch"], f"tjdiff{ctx['tj']}")
    for side, t in (("o", earlier[-1]), ("n", text)):
        os.makedirs(os.path.dirname(os.path.join(tmp, side, case["path"])), exist_ok=True)
        with open(os.path.join(tmp, side, case["path"]), "w", encoding="utf-8", newline="") as f:
            f.write(t)
    run = subprocess.run(["git", "diff", "--no-index", "--no-color", "--src-prefix=a/", "--dst-prefix=b/",
                          f"o/{case['path']}", f"n/{case['path']}"], cwd=tmp, capture_output=True, text=True)
    diff = run.stdout.replace(f"a/o/{case['path']}", f"a/{case['path']}")
    diff = diff.replace(f"b/n/{case['path']}", f"b/{case['path']}")
    patch = os.path.join(tmp, "last.diff")
    with open(patch, "w", encoding="utf-8") as f:
        f.write(diff)
    run = subprocess.run([ctx["pg"], "apply", patch, "--input", "diff", "--checks", "none", "--format", "json"],
                         cwd=wt, capture_output=True, text=True)
    try:
        with open(target, encoding="utf-8", newline="") as f:
            now = f.read()
        pid = json.loads(run.stdout).get("patch_id")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        now, pid = None, None
    if now != text or not pid:
        return None, f"patchgate did not reproduce the session's last change (exit {run.returncode})", True
    return wt, pid, True


def drop_trajectory_worktree(case, ctx):
    wt = os.path.join(ctx["scratch"], f"tj{ctx['tj']}")
    if case.get("commit") and ctx.get("tj_projects"):
        drop_worktree(ctx["tj_projects"][-1][0], wt)
    shutil.rmtree(wt, ignore_errors=True)


def score_case(case, ctx):
    if "trajectory" in case:
        got = trajectory_case(case, ctx)
        if isinstance(got, str):
            return {"error": got}
        failed, failed_new, retry, retry_new, text, earlier, base = got
    else:
        got = aider_case(case, ctx)
        if isinstance(got, str):
            return {"error": got}
        failed, failed_new, retry, retry_new, text, repo = got
    if failed in text:
        return {"error": "unverified: the failed text is in the file"}
    if text.count(retry) != 1:
        return {"error": f"unverified: the retry's text occurs {text.count(retry)} times"}
    rs, re_ = region(text, retry)
    if "trajectory" in case:
        wt, replayed, drop = trajectory_worktree(case, text, earlier, base, ctx)
        if wt is None:
            drop_trajectory_worktree(case, ctx)
    else:
        wt, replayed, drop = aider_worktree(case, repo, text, ctx)
    if wt is None:
        return {"error": f"replay: {replayed}"}
    if not ctx.get("replay"):
        replayed = None
    try:
        report, wall, plan, err = run_patchgate(ctx["pg"], wt, case["path"], failed, failed_new, ctx["scratch"])
        again = None
        if ctx.get("again") and report is not None:
            # The same miss once more, in the same checkout: what patchgate kept from the first
            # run (its look-back at the file's history) is there now.
            _, wall2, plan2, _ = run_patchgate(ctx["pg"], wt, case["path"], failed, failed_new, ctx["scratch"])
            again = {"wall_ms": wall2, "plan_ms": plan2}
    finally:
        if "trajectory" in case:
            drop_trajectory_worktree(case, ctx)
        elif drop:
            drop_worktree(repo, wt)
    if report is None:
        return {"error": f"patchgate: {err}"}
    edit = report["edits"][0]
    sugg = edit.get("suggestions") or []
    over = [s["start_line"] <= re_ and s["end_line"] >= rs for s in sugg]
    # The whole lines the retry's text stands on, trailing blank lines aside (an str_replace
    # retry may start or end inside a line; an Aider retry is whole lines already).
    want = "\n".join(text.split("\n")[rs - 1:re_]).rstrip("\n")
    res = {
        "status": edit["status"], "lines": text.count("\n") + 1, "old_lines": failed.count("\n"),
        "retry": [rs, re_], "wall_ms": wall, "plan_ms": plan, "replayed": replayed, "again": again,
        "pg": {"none": not sugg, "top1": bool(over[:1] and over[0]), "top3": any(over[:3]),
               "equal": bool(sugg) and (sugg[0].get("text") or "").rstrip("\n") == want,
               "equal3": any((s.get("text") or "").rstrip("\n") == want for s in sugg[:3]),
               "top": [[s["start_line"], s["end_line"], s["kind"], round(s.get("similarity", 0), 3),
                        s.get("note")] for s in sugg[:3]]},
    }
    if ctx["aider"] is not None:
        res["aider"] = aider_judge(ctx["aider"], failed, text, rs, re_, want)
        res["aider"]["applies"] = aider_applies(ctx["aider"], failed, failed_new, text, rs, re_)
    return res


def pct(n, d):
    return f"{100.0 * n / d:.0f} %" if d else "–"


def table(rows):
    print("| set | cases | patchgate top-1 | top-3 | text-equal | none | Aider top-1 (region) | Aider top-1 (shown ±5) | Aider text-equal | Aider none |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, rs in rows:
        n = len(rs)
        if not n:
            continue
        c = lambda f: sum(1 for r in rs if f(r))
        a = [r for r in rs if "aider" in r]
        print(f"| {label} | {n} | {pct(c(lambda r: r['pg']['top1']), n)} | {pct(c(lambda r: r['pg']['top3']), n)} | "
              f"{pct(c(lambda r: r['pg']['equal']), n)} | {c(lambda r: r['pg']['none'])} | "
              f"{pct(sum(1 for r in a if r['aider']['top1']), len(a))} | "
              f"{pct(sum(1 for r in a if r['aider']['shown']), len(a))} | "
              f"{pct(sum(1 for r in a if r['aider']['equal']), len(a))} | "
              f"{sum(1 for r in a if r['aider']['none'])} |")


def report(cases, results):
    done = [(c, results[c["id"]]) for c in cases if c["id"] in results]
    ok = [(c, r) for c, r in done if "error" not in r]
    errs = [(c, r) for c, r in done if "error" in r]
    for c, r in ok:
        # A trajectory's project is the one the agent worked on, not the repository holding it.
        r["kind"], r["aimed"], r["repo"] = c["kind"], c.get("aimed", True), c.get("project") or c["repo"]
    rs = [r for _, r in ok]
    projects = sorted({r["repo"] for r in rs})

    def count(key):
        n = {}
        for c, _ in ok:
            n[c.get(key) or "?"] = n.get(c.get(key) or "?", 0) + 1
        return ", ".join(f"{m} {k}" for m, k in sorted(n.items(), key=lambda kv: -kv[1]))
    print(f"\n{len(rs)} verified cases from {len(projects)} projects "
          f"({len(errs)} of {len(done)} not scored); agents: {count('agent')}; models: {count('model')}")
    for c, r in errs:
        print(f"- not scored: {c['id']}: {r['error']}")
    print()
    rows = [(f"{k}", [r for r in rs if r["kind"] == k]) for k in KINDS]
    rows.append(("**all**", rs))
    for agent in sorted({c.get("agent") or "?" for c, _ in ok}):
        rows.append((f"from {agent}", [r for c, r in ok if (c.get("agent") or "?") == agent]))
    rows.append(("aimed at the retry's region", [r for r in rs if r["aimed"]]))
    rows.append(("retry elsewhere", [r for r in rs if not r["aimed"]]))
    table(rows)
    applied = [r for r in rs if r["status"] != "not_found"]
    print(f"\npatchgate: status other than not_found: {len(applied)} "
          + ", ".join(sorted({r['status'] for r in applied})))
    a = [r["aider"].get("applies") for r in rs if "aider" in r]
    if a:
        print(f"Aider's replace_most_similar_chunk (pinned version) would apply {sum(1 for x in a if x)} "
              f"of {len(a)}: {sum(1 for x in a if x == 'right')} at the retry's lines, "
              f"{sum(1 for x in a if x == 'wrong')} elsewhere")
    times = [("", rs)]
    if any(r.get("again") for r in rs):
        times.append((" (the same miss again, --again)", [r["again"] for r in rs if r.get("again")]))
    for what, runs in times:
        print(f"\n| file size{what} | cases | whole run, median | planning, median | planning, max |")
        print("|---|---:|---:|---:|---:|")
        lines = [r["lines"] for r in rs] if not what else [r["lines"] for r in rs if r.get("again")]
        for lo, hi in ((0, 200), (200, 1000), (1000, 5000), (5000, 1 << 40)):
            b = [t for t, n in zip(runs, lines) if lo <= n < hi]
            if not b:
                continue
            plans = [r["plan_ms"] for r in b if r["plan_ms"] is not None]
            label = f"{lo}–{hi - 1} lines" if hi < 1 << 40 else f"{lo}+ lines"
            print(f"| {label} | {len(b)} | {statistics.median(r['wall_ms'] for r in b):.1f} ms | "
                  + (f"{statistics.median(plans):.2f} ms | {max(plans):.2f} ms |" if plans else "– | – |"))


# --- self-test ------------------------------------------------------------------------------

def self_test(pg):
    """Discover and score one made-up stale miss in a scratch repository; exit non-zero on a fault."""
    tmp = tempfile.mkdtemp(prefix="pg-real-misses-test-")
    try:
        mirrors = os.path.join(tmp, "mirrors")
        repo = os.path.join(mirrors, "example+shop", "repo")
        os.makedirs(repo)
        git(repo, "init", "-q")
        ident = ["-c", "user.name=t", "-c", "user.email=t@invalid"]
        def commit(files, msg):
            for path, text in files.items():
                with open(os.path.join(repo, path), "w", encoding="utf-8") as f:
                    f.write(text)
            git(repo, "add", "-A")
            git(repo, *ident, "commit", "-qm", msg)
            return git(repo, "rev-parse", "--short=7", "HEAD").strip()
        v1 = "def total(items):\n    s = 0\n    for i in items:\n        s += i.price\n    return s\n\n\ndef tax(x):\n    return x * 0.2\n"
        v2 = v1.replace("i.price", "i.price * i.qty")
        commit({"shop.py": v1}, "first")
        c2 = commit({"shop.py": v2}, "qty")
        failed = "    for i in items:\n        s += i.price\n"
        retry = "    for i in items:\n        s += i.price * i.qty\n"
        v3 = v2.replace(retry, retry.replace("s +=", "s = s +"))
        log = (
            "# aider chat started at 2025-01-01 10:00:00\n\n> Model: test-model with diff edit format  \n\n"
            "#### use s = s + in total  \n\nshop.py\n```python\n<<<<<<< SEARCH\n" + failed
            + "=======\n" + failed.replace("s +=", "s = s +") + ">>>>>>> REPLACE\n```\n\n"
            "> # 1 SEARCH/REPLACE block failed to match!\n\n"
            "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in shop.py\n"
            "<<<<<<< SEARCH\n" + failed + "=======\n" + failed.replace("s +=", "s = s +")
            + ">>>>>>> REPLACE\n\nThe SEARCH section must exactly match an existing block of lines\n\n"
            "shop.py\n```python\n<<<<<<< SEARCH\n" + retry + "=======\n"
            + retry.replace("s +=", "s = s +") + ">>>>>>> REPLACE\n```\n\n> Applied edit to shop.py  \n")
        c3 = commit({"shop.py": v3}, "s = s +")
        log += f"> Commit {c3} s = s +  \n"
        commit({".aider.chat.history.md": log}, "log")
        out = os.path.join(tmp, "cases.json")
        saved = sys.argv
        sys.argv = ["real_misses.py", "discover", "--mirrors", mirrors, "--out", out, "example/shop"]
        try:
            main()
        finally:
            sys.argv = saved
        with open(out) as f:
            cases = json.load(f)
        assert len(cases) == 1, cases
        c = cases[0]
        assert c["kind"] == "stale" and c["path"] == "shop.py" and c["aimed"], c
        assert git(repo, "rev-parse", c["commit"]).strip() == git(repo, "rev-parse", c2).strip(), c
        ctx = {"cache": os.path.join(tmp, "cache"), "mirrors": mirrors, "url": "{repo}", "pg": pg,
               "aider": None, "scratch": tmp, "worktrees": {}}
        res = score_case(c, ctx)
        assert "error" not in res, res
        assert res["retry"] == [3, 4] and res["status"] == "not_found", res
        # The same miss after the file's last change was applied through patchgate.
        rep = score_case(c, dict(ctx, replay=True))
        assert "error" not in rep and rep["replayed"] and rep["pg"] == res["pg"], rep
        # A case whose retry is not in the file at its commit is reported, not scored.
        bad = dict(c, commit=git(repo, "rev-parse", "HEAD~3").strip())
        assert "error" in score_case(bad, ctx)
        # A renamed copy of the log whose retry comes three user turns after the failure: found
        # only with a wider --turns.
        head = "shop.py\n```python\n<<<<<<< SEARCH\n" + retry
        log2 = "# a renamed copy\n" + log.replace(head, "#### try again  \n\nI will.\n\n" * 3 + head)
        commit({"aider.chat.history.md": log2}, "renamed log")

        def found(*extra):
            sys.argv = ["real_misses.py", "discover", "--mirrors", mirrors, "--out", out, *extra, "example/shop"]
            try:
                main()
            finally:
                sys.argv = saved
            with open(out) as f:
                return sorted(c["log"]["path"] for c in json.load(f))
        assert found() == [".aider.chat.history.md"], found()
        assert found("--turns", "5") == [".aider.chat.history.md", "aider.chat.history.md"], found("--turns", "5")
        # A log kept under another name (a test fixture) is read when named with --log.
        os.makedirs(os.path.join(repo, "fixtures"))
        commit({"fixtures/chat.md": log}, "a log kept as a fixture")
        assert found() == [".aider.chat.history.md"], found()
        assert found("--log", "fixtures/chat.md") == [".aider.chat.history.md", "fixtures/chat.md"], \
            found("--log", "fixtures/chat.md")
        self_test_openhands(pg, tmp, mirrors, ident)
        print("self-test passed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def self_test_openhands(pg, tmp, mirrors, ident):
    """A made-up OpenHands session (create, an applied edit, a view, a failed str_replace of the
    text the edit changed, the retry): discover-openhands finds it as a stale miss, the scorer
    rebuilds the file and scores it, also replayed; a view that disagrees with the rebuild, or a
    shell command that rewrote the file, makes the session unusable."""
    repo = os.path.join(mirrors, "example+sessions", "repo")
    os.makedirs(repo)
    git(repo, "init", "-q")
    ws = "/workspace/example__app__1.0"
    v1 = "def total(items):\n    s = 0\n    for i in items:\n        s += i.price\n    return s\n"
    v2 = v1.replace("i.price", "i.price * i.qty")

    def session(folder, view_of=v2):
        def obs(i, cause, kind, content):
            return {"id": i, "source": "environment", "cause": cause, "observation": kind, "content": content}

        def act(i, kind, **args):
            return {"id": i, "source": "agent", "action": kind, "args": repr(args)}
        shown = "".join(f"{k:6}\t{line}\n" for k, line in enumerate(view_of.split("\n")[:-1], 1))
        evs = [
            {"id": 0, "source": "agent", "action": "system", "message": "You are OpenHands agent"},
            {"id": 1, "source": "user", "action": "message",
             "message": f"<uploaded_files>\n{ws}\n</uploaded_files>\nFix the total."},
            act(2, "edit", path=f"{ws}/shop.py", command="create", file_text=v1),
            obs(3, 2, "edit", f"File created successfully at: {ws}/shop.py"),
            act(4, "edit", path=f"{ws}/shop.py", command="str_replace", old_str="i.price", new_str="i.price * i.qty"),
            obs(5, 4, "edit", f"The file {ws}/shop.py has been edited."),
            act(6, "read", path=f"{ws}/shop.py", view_range=None),
            obs(7, 6, "read", f"Here's the result of running `cat -n` on {ws}/shop.py:\n" + shown),
            act(8, "edit", path=f"{ws}/shop.py", command="str_replace",
                old_str="    for i in items:\n        s += i.price\n",
                new_str="    for i in items:\n        s = s + i.price\n"),
            obs(9, 8, "edit", "ERROR:\nNo replacement was performed, old_str `    for i in items:\n        "
                              f"s += i.price\n` did not appear verbatim in {ws}/shop.py."),
            act(10, "edit", path=f"{ws}/shop.py", command="str_replace",
                old_str="    for i in items:\n        s += i.price * i.qty\n",
                new_str="    for i in items:\n        s = s + i.price * i.qty\n"),
            obs(11, 10, "edit", f"The file {ws}/shop.py has been edited."),
        ]
        for ev in evs:
            path = os.path.join(repo, folder, "events", f"{ev['id']}.json")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(ev, f)
        git(repo, "add", "-A")
        git(repo, *ident, "commit", "-qm", folder)

    session("sessions/good")
    session("sessions/bad-view", view_of=v1)  # the view shows the text before the edit: not rebuildable
    out = os.path.join(tmp, "oh.json")
    saved = sys.argv
    sys.argv = ["real_misses.py", "discover-openhands", "--mirrors", mirrors, "--out", out, "example/sessions"]
    try:
        main()
    finally:
        sys.argv = saved
    with open(out) as f:
        cases = json.load(f)
    assert [c["trajectory"]["session"] for c in cases] == ["sessions/good"], cases
    c = cases[0]
    assert c["kind"] == "stale" and c["path"] == "shop.py" and c["aimed"], c
    assert c["trajectory"]["failed_event"] == 8 and c["trajectory"]["retry_event"] == 10, c
    assert c["trajectory"]["base"] == "create:2", c
    ctx = {"cache": os.path.join(tmp, "cache-oh"), "mirrors": mirrors, "url": "{repo}", "pg": pg,
           "aider": None, "scratch": tmp, "worktrees": {}}
    res = score_case(c, ctx)
    assert "error" not in res, res
    assert res["retry"] == [3, 4] and res["status"] == "not_found", res
    rep = score_case(c, dict(ctx, replay=True))
    assert "error" not in rep and rep["replayed"], rep
    # A shell command that rewrites the file between the create and the failure.
    create = {"path": "/w/a.py", "command": "create", "file_text": "x\n"}
    ok, why = openhands.rebuild(
        openhands.steps({0: {"id": 0, "action": "edit", "args": repr(create)},
                         1: {"id": 1, "cause": 0, "observation": "edit", "content": "File created successfully"},
                         2: {"id": 2, "action": "run", "args": repr({"command": "sed -i s/x/y/ a.py"})}}),
        "/w/a.py", 3)
    assert ok is None and "shell command" in why, why


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "discover-openhands":
        ap = argparse.ArgumentParser(prog="real_misses.py discover-openhands")
        ap.add_argument("repos", nargs="+", help="OWNER/NAME of clones under --mirrors")
        ap.add_argument("--mirrors", required=True)
        ap.add_argument("--out")
        return discover_openhands(ap.parse_args(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "discover":
        ap = argparse.ArgumentParser(prog="real_misses.py discover")
        ap.add_argument("repos", nargs="+", help="OWNER/NAME of clones under --mirrors")
        ap.add_argument("--mirrors", required=True)
        ap.add_argument("--out")
        ap.add_argument("--log", action="append",
                        help="also read this path as an Aider log (file paths in it relative to the repository root)")
        ap.add_argument("--turns", type=int, default=3,
                        help="look for the retry up to this many user turns after the failure (default 3)")
        return discover(ap.parse_args(sys.argv[2:]))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=DEFAULT_CASES, help="the corpus (default bench/real_misses/cases.json)")
    ap.add_argument("--cache", default=os.environ.get("REAL_MISSES_CACHE")
                    or os.path.join(os.path.expanduser("~"), ".cache", "patchgate-real-misses"))
    ap.add_argument("--mirrors", help="a folder of existing clones named OWNER+NAME (or OWNER+NAME/repo)")
    ap.add_argument("--url", default="https://github.com/{repo}.git", help="where to clone from")
    ap.add_argument("--aider-src", help="an Aider checkout (default: cloned into the cache at a pinned commit)")
    ap.add_argument("--no-aider", action="store_true", help="score patchgate only")
    ap.add_argument("--only", help="score only cases whose id contains this")
    ap.add_argument("--fresh", action="store_true", help="ignore the results kept from earlier runs")
    ap.add_argument("--again", action="store_true",
                    help="run each miss a second time in the same checkout and report its time apart "
                         "(what patchgate keeps between runs, such as its look-back, is there then)")
    ap.add_argument("--replay", action="store_true",
                    help="run each miss on the parent of the file's last change, that change applied "
                         "through patchgate (its history then holds it), instead of at the commit")
    ap.add_argument("--show", type=int, default=0, help="print up to N cases whose top suggestion missed")
    ap.add_argument("--dump", help="write the per-case results (JSON) to this file")
    ap.add_argument("--self-test", action="store_true",
                    help="discover and score a made-up miss in a scratch repository, then exit")
    args = ap.parse_args()
    pg = os.path.abspath(os.environ.get("PATCHGATE") or os.path.join(ROOT, "target", "release", "patchgate"))
    if not os.access(pg, os.X_OK):
        sys.exit(f"{pg} not found: run `cargo build --release` or set PATCHGATE")
    if args.self_test:
        return self_test(pg)
    with open(args.cases, encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    if args.only:
        cases = [c for c in cases if args.only in c["id"]]
    os.makedirs(args.cache, exist_ok=True)
    aider = None
    if not args.no_aider:
        src = args.aider_src
        if not src:
            # Only the one module is needed: read it from the pinned commit, no checkout.
            repo = ensure_repo(args.cache, args.mirrors, AIDER_REPO, args.url)
            src = os.path.join(args.cache, "aider-src", AIDER_COMMIT)
            target = os.path.join(src, "aider", "coders", "editblock_coder.py")
            if not os.path.exists(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                code = git(repo, "show", f"{AIDER_COMMIT}:aider/coders/editblock_coder.py")
                with open(target + ".part", "w", encoding="utf-8") as f:
                    f.write(code)
                os.rename(target + ".part", target)
        aider = load_aider(src)
    with open(pg, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    kept = os.path.join(args.cache, f"results-{digest}{'-replay' if args.replay else ''}"
                                    f"{'-again' if args.again else ''}.jsonl")
    results = {}
    if os.path.exists(kept) and not args.fresh:
        with open(kept, encoding="utf-8") as f:
            for line in f:
                try:
                    r = json.loads(line)
                    results[r["id"]] = r["result"]
                except (json.JSONDecodeError, KeyError):
                    pass
    scratch = tempfile.mkdtemp(prefix="pg-real-misses-")
    ctx = {"cache": args.cache, "mirrors": args.mirrors, "url": args.url, "pg": pg, "aider": aider,
           "scratch": scratch, "worktrees": {}, "replay": args.replay, "again": args.again}
    # A case that ended in an error (a clone that failed, say) is tried again on the next run.
    todo = [c for c in cases if c["id"] not in results or "error" in results[c["id"]]]
    try:
        with open(kept, "a", encoding="utf-8") as out:
            for k, case in enumerate(todo):
                try:
                    res = score_case(case, ctx)
                except (RuntimeError, OSError) as e:
                    res = {"error": str(e)[:300]}
                results[case["id"]] = res
                out.write(json.dumps({"id": case["id"], "result": res}) + "\n")
                out.flush()
                print(f"\r{k + 1}/{len(todo)} scored", end="", file=sys.stderr)
        print(file=sys.stderr)
    finally:
        for repo, wt in ctx["worktrees"].items():
            git(repo, "worktree", "remove", "--force", wt, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"patchgate: {pg} (sha256 {digest}); corpus: {os.path.relpath(args.cases)}; "
          + ("each miss after its file's last change was replayed through patchgate" if args.replay
             else "each miss in a checkout at its commit"))
    report(cases, results)
    misses = [(c, results[c["id"]]) for c in cases if c["id"] in results
              and "error" not in results[c["id"]] and not results[c["id"]]["pg"]["top1"]]
    for c, r in misses[: args.show]:
        at = c["commit"][:10] if "commit" in c else f"event {c['trajectory']['failed_event']}"
        print(f"\n--- {c['id']} {c['kind']} {c['path']}@{at}: retry at {r['retry']}, "
              f"top {r['pg']['top']}, aider {r.get('aider')}")
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as f:
            json.dump({c["id"]: results.get(c["id"]) for c in cases}, f, indent=1)


if __name__ == "__main__":
    main()
