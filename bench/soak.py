#!/usr/bin/env python3
"""Soak: thousands of apply / --commit / --branch / undo / recover cycles on one repository, with
random SIGKILLs of patchgate (and of `recover`), checked against a model after every cycle.

    python3 bench/soak.py                    # 10,000 cycles, release build of this checkout
    python3 bench/soak.py --cycles 300 --seed 7 --bin target/release/patchgate

Each cycle runs one operation on the same repository: `apply` (working tree), `apply --commit`,
`apply --branch soak`, or `undo` (the newest patch still in effect). About 40 % of the operations
are killed with SIGKILL, either after a random delay (0 to 1.3 times that operation's usual
duration) or at one of the transaction's named points (PATCHGATE_FAULT_ABORT_AT). A killed
operation is followed by `recover`, which is itself killed in about a third of those cycles (at a
random moment or at one of its own points) and then run again until one finishes.

After every cycle the script checks, against its own model of the repository (never against what
patchgate reports):
- the working tree is exactly the state before the operation or exactly the state after it, as a
  whole (not file by file); HEAD and the `soak` branch are each either unchanged or one new commit
  on top of the old tip, and they agree with the working tree (a commit moved iff its files are
  the new ones); a committed file holds the new bytes;
- nothing is left over: no ref under `refs/patchgate/txn/`, no history pin without its entry, no
  journal in `.git/patchgate/txn/`, no `*.patchgate-*.tmp` or `*.lock` file anywhere, no
  `index.lock`;
- `.git/patchgate` (without the mutex) stays under --max-patchgate-bytes, and its history under 50
  entries.
At the end `git fsck --strict` must be clean. The first failure stops the run with the cycle, the
operation and the difference, and keeps the repository for inspection. Figures: BENCHMARKS.md (l).
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

APPLY_POINTS = ["staged", "journaled", "before-verify", "before-switch", "after-switch",
                "before-cleanup", "history-pinned"]
COMMIT_POINTS = ["before-cas", "after-cas", "index-written", "after-index"]
RECOVER_POINTS = ["recover-before-rename", "recover-restored", "recover-unpinned"]
BRANCH = "soak"
HISTORY_KEPT = 50


class Failure(Exception):
    pass


def git_env(home):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("GIT_") or k.startswith("PATCHGATE_"):
            del env[k]
    env.update({
        "HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C",
        "GIT_AUTHOR_NAME": "Soak", "GIT_AUTHOR_EMAIL": "soak@example.invalid",
        "GIT_COMMITTER_NAME": "Soak", "GIT_COMMITTER_EMAIL": "soak@example.invalid",
    })
    return env


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.scratch = tempfile.mkdtemp(prefix="patchgate-soak-")
        self.repo = os.path.join(self.scratch, "repo")
        self.env = git_env(self.scratch)
        self.bin = os.path.join(self.scratch, "patchgate")
        # A private copy: rebuilding the checkout during a long soak must not swap the binary.
        shutil.copy2(args.bin, self.bin)
        self.token = 0
        self.created = 0
        self.landed = 0          # history entries written so far (applies and undos that landed)
        self.stack = []          # patches in effect, newest last: dict(kind, before, after, age)
        self.durations = {}      # op -> list of unkilled durations (s)
        self.stats = {"cycles": 0, "ops": {}, "kills": 0, "kills_timed": 0, "kills_point": 0,
                      "recover_kills": 0, "recover_runs": 0, "outcome_after_kill": {"old": 0, "new": 0},
                      "max_patchgate_bytes": 0, "max_history": 0, "unkilled_exit": {}}

    # -- plumbing -----------------------------------------------------------------------------

    def git(self, *args, input=None, check=True):
        p = subprocess.run(["git", *args], cwd=self.repo, env=self.env, input=input,
                           capture_output=True, timeout=120)
        if check and p.returncode != 0:
            raise Failure(f"git {' '.join(args)}: {p.stderr.decode(errors='replace')}")
        return p.stdout

    def spawn(self, args, abort_at=None):
        env = dict(self.env)
        if abort_at:
            env["PATCHGATE_FAULT_ABORT_AT"] = abort_at
        return subprocess.Popen([self.bin, *args], cwd=self.repo, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def run(self, op, args, kill):
        """Runs patchgate; `kill` is None, ("point", name) or ("delay", seconds). Returns
        (killed, returncode, stdout)."""
        start = time.monotonic()
        p = self.spawn(args, abort_at=kill[1] if kill and kill[0] == "point" else None)
        if kill and kill[0] == "delay":
            try:
                p.wait(timeout=kill[1])
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
        try:
            out, err = p.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise Failure(f"{op}: hung for more than {self.args.timeout} s: {args}")
        killed = p.returncode == -signal.SIGKILL
        if not kill:
            self.durations.setdefault(op, []).append(time.monotonic() - start)
            self.durations[op] = self.durations[op][-50:]
        if p.returncode < 0 and not killed:
            raise Failure(f"{op}: died of signal {-p.returncode}: {err.decode(errors='replace')}")
        return killed, p.returncode, out, err

    def usual(self, op):
        d = self.durations.get(op)
        return sorted(d)[len(d) // 2] if d else 0.05

    # -- the repository and its model -----------------------------------------------------------

    def fresh(self):
        self.token += 1
        return f"t{self.token:07d}"

    def setup(self):
        os.makedirs(self.repo)
        self.git("init", "-q", "-b", "main")
        self.git("config", "core.autocrlf", "false")
        self.git("config", "gc.auto", "0")
        for i in range(12):
            sub = ["", "src/", "src/deep/", "docs/"][i % 4]
            eol = "\r\n" if i % 3 == 1 else "\n"
            lines = [f"line {j} of file {i}: {self.fresh()}" for j in range(8)]
            body = eol.join(lines) + ("" if i == 5 else eol)
            data = (b"\xef\xbb\xbf" if i == 7 else b"") + body.encode()
            path = os.path.join(self.repo, f"{sub}f{i:02d}.txt")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial")
        self.git("branch", BRANCH)
        self.work = self.worktree()
        self.branch_files = dict(self.work)

    def worktree(self):
        files = {}
        for root, dirs, names in os.walk(self.repo):
            if root == self.repo:
                dirs[:] = [d for d in dirs if d != ".git"]
            for n in names:
                p = os.path.join(root, n)
                rel = os.path.relpath(p, self.repo)
                if ".patchgate-" in n or n.endswith(".lock"):
                    raise Failure(f"left over in the working tree: {rel}")
                with open(p, "rb") as f:
                    files[rel] = f.read()
        return files

    def refs(self):
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)").decode()
        return dict(line.split(" ", 1) for line in out.splitlines())

    def blobs(self, rev, paths):
        """The bytes of `rev:path` for each path (None when absent), in one git process."""
        if not paths:
            return {}
        req = "".join(f"{rev}:{p}\n" for p in paths).encode()
        out = self.git("cat-file", "--batch", input=req)
        res, i = {}, 0
        for p in paths:
            nl = out.index(b"\n", i)
            head = out[i:nl].decode()
            if head.endswith(" missing"):
                res[p], i = None, nl + 1
                continue
            size = int(head.split()[2])
            res[p] = out[nl + 1:nl + 1 + size]
            i = nl + 1 + size + 1
        return res

    def parent(self, commit):
        return self.git("rev-parse", f"{commit}^").decode().strip()

    # -- operations ----------------------------------------------------------------------------

    def make_edits(self, files, op):
        """1-3 changes on `files` (a dict): token replacements, sometimes a create, a delete or a
        move of a file the soak created. Returns (edits, new files dict).

        Working-tree and `--commit` patches touch disjoint files (even and odd numbers, `new/w*`
        and `new/c*`): a commit takes a file's uncommitted changes along (as `git commit <paths>`
        does), and the undo of such a commit commits them too, so undoing the patches below it
        would rightly be refused as "changed since" (BENCHMARKS.md (l)); the model keeps clear
        of that on purpose."""
        new = dict(files)
        edits = []
        kind = {"apply": "w", "commit": "c", "branch": "b"}[op]
        parity = {"w": 0, "c": 1, "b": None}[kind]
        base = sorted(p for p in new if os.path.basename(p).startswith("f")
                      and (parity is None or int(os.path.basename(p)[1:3]) % 2 == parity))
        for path in self.rng.sample(base, self.rng.randint(1, 3)):
            text = new[path].decode("utf-8-sig" if new[path].startswith(b"\xef\xbb\xbf") else "utf-8")
            toks = [w for w in text.replace("\r", " ").replace("\n", " ").split() if w.startswith("t")
                    and w[1:].isdigit()]
            old, tok = self.rng.choice(toks), self.fresh()
            edits.append({"file_path": path, "old_string": old, "new_string": tok})
            new[path] = new[path].replace(old.encode(), tok.encode())
        made = sorted(p for p in new if p.startswith(f"new/{kind}"))
        r = self.rng.random()
        if r < 0.35 or not made:
            self.created += 1
            path = f"new/{kind}{self.created % 5}/n{self.created:06d}.txt"
            body = f"created {self.fresh()}\n".encode()
            edits.append({"file_path": path, "create": True, "new_string": body.decode()})
            new[path] = body
        elif r < 0.6:
            path = self.rng.choice(made)
            edits.append({"file_path": path, "delete": True})
            del new[path]
        elif r < 0.8:
            path = self.rng.choice(made)
            self.created += 1
            dest = f"new/{kind}{self.created % 5}/n{self.created:06d}.txt"
            edits.append({"file_path": path, "move_to": dest})
            new[dest] = new.pop(path)
        return edits, new

    def cycle(self, n):
        refs0 = self.refs()
        head0, branch0 = refs0["refs/heads/main"], refs0[f"refs/heads/{BRANCH}"]
        undo_p = 0.0 if not self.stack else min(0.6, 0.15 + 0.1 * len(self.stack))
        # The history keeps the newest 50 entries: undo before a patch in effect could fall out
        # of it, so the model never has to guess what the pruning dropped.
        if self.stack and self.landed - self.stack[0]["landed_at"] >= HISTORY_KEPT - 20:
            undo_p = 1.0
        if self.rng.random() < undo_p:
            op, entry = "undo", self.stack[-1]
            args = ["undo", "--format", "json"]
            target = entry["kind"]
            if target == "branch":
                want_files = dict(self.branch_files)
                for p in entry["after"]:
                    want_files.pop(p, None)
                want_files.update(entry["before"])
            else:
                want_files = dict(self.work)
                for p in entry["after"]:
                    want_files.pop(p, None)
                want_files.update(entry["before"])
        else:
            op = self.rng.choice(["apply", "commit", "branch"])
            target = {"apply": "work", "commit": "commit", "branch": "branch"}[op]
            files = self.branch_files if op == "branch" else self.work
            edits, want_files = self.make_edits(files, op)
            patch = os.path.join(self.scratch, "patch.json")
            with open(patch, "w") as f:
                json.dump({"message": f"soak {n}", "edits": edits}, f)
            args = ["apply", patch, "--checks", "none", "--format", "json"]
            args += {"apply": [], "commit": ["--commit"], "branch": ["--branch", BRANCH]}[op]
            old_files = files
            changed = {p for p in set(old_files) | set(want_files) if old_files.get(p) != want_files.get(p)}
            entry = {"kind": target, "before": {p: old_files[p] for p in changed if p in old_files},
                     "after": {p: want_files[p] for p in changed if p in want_files}}
        self.stats["ops"][op] = self.stats["ops"].get(op, 0) + 1

        kill = None
        if self.rng.random() < self.args.kill_rate:
            if self.rng.random() < 0.3:
                points = APPLY_POINTS + (COMMIT_POINTS if target in ("commit", "branch") or
                                         (op == "undo" and target != "work") else [])
                kill = ("point", self.rng.choice(points))
            else:
                kill = ("delay", self.rng.uniform(0, 1.3 * self.usual(op)))
        killed, code, out, err = self.run(op, args, kill)
        if killed:
            self.stats["kills"] += 1
            self.stats["kills_" + ("point" if kill[0] == "point" else "timed")] += 1
            self.recover()
        elif code != 0:
            raise Failure(f"{op} exited {code}: {out.decode(errors='replace')}"
                          f"{err.decode(errors='replace')}")

        # -- which state did the cycle end in, and is it whole? --------------------------------
        work = self.worktree()
        refs = self.refs()
        head, branch = refs["refs/heads/main"], refs[f"refs/heads/{BRANCH}"]
        leftovers = [r for r in refs if r.startswith("refs/patchgate/txn/")]
        # A history pin stays only with its entry (a working-tree run pins before its switch).
        entries = os.path.join(self.repo, ".git", "patchgate", "history")
        leftovers += [f"{r} (no history entry)" for r in refs
                      if r.startswith("refs/patchgate/history/")
                      and not os.path.exists(os.path.join(entries, r.rsplit("/", 1)[1] + ".json"))]
        txn = os.path.join(self.repo, ".git", "patchgate", "txn")
        if os.path.isdir(txn):
            leftovers += [f"journal {j}" for j in os.listdir(txn)]
        if os.path.exists(os.path.join(self.repo, ".git", "index.lock")):
            leftovers.append(".git/index.lock")
        if leftovers:
            raise Failure(f"left over after {op}: {leftovers}")

        if target == "branch":
            if work != self.work:
                raise Failure(f"{op} --branch changed the working tree: {diff(self.work, work)}")
            if head != head0:
                raise Failure(f"{op} --branch moved HEAD")
            is_new = branch != branch0
            if is_new:
                self.expect_child(branch, branch0, op)
                paths = sorted(set(entry["before"]) | set(entry["after"]))
                got = self.blobs(branch, paths)
                want = {p: want_files.get(p) for p in paths}
                if got != want:
                    raise Failure(f"{op}: the branch's new commit holds {got}, not {want}")
        else:
            if work == self.work and work != want_files:
                is_new = False
            elif work == want_files:
                is_new = True
            else:
                raise Failure(f"{op} (killed: {killed}, {kill}): the working tree is neither the "
                              f"old nor the new state; against old: {diff(self.work, work)}; "
                              f"against new: {diff(want_files, work)}")
            if branch != branch0:
                raise Failure(f"{op} moved the {BRANCH} branch")
            if target == "commit":
                if (head != head0) != is_new:
                    raise Failure(f"{op}: HEAD moved: {head != head0}, but the working tree is "
                                  f"{'new' if is_new else 'old'}")
                if is_new:
                    self.expect_child(head, head0, op)
                    paths = sorted(set(entry["before"]) | set(entry["after"]))
                    got = self.blobs(head, paths)
                    want = {p: want_files.get(p) for p in paths}
                    if got != want:
                        raise Failure(f"{op}: the new commit holds {got}, not {want}")
            elif head != head0:
                raise Failure(f"{op} (working tree) moved HEAD")
        if not killed and not is_new:
            raise Failure(f"{op} exited 0 without changing anything: {out.decode(errors='replace')}")
        if killed:
            self.stats["outcome_after_kill"]["new" if is_new else "old"] += 1

        # -- the model follows ------------------------------------------------------------------
        if is_new:
            self.landed += 1
            if target == "branch":
                self.branch_files = want_files
            else:
                self.work = want_files
            if op == "undo":
                self.stack.pop()
            else:
                entry["landed_at"] = self.landed
                self.stack.append(entry)

    def expect_child(self, tip, old, op):
        if self.parent(tip) != old:
            raise Failure(f"{op}: the new tip {tip} is not a child of {old}")

    def recover(self):
        while True:
            self.stats["recover_runs"] += 1
            kill = None
            if self.rng.random() < self.args.recover_kill_rate:
                if self.rng.random() < 0.5:
                    kill = ("point", self.rng.choice(RECOVER_POINTS))
                else:
                    kill = ("delay", self.rng.uniform(0, 1.3 * self.usual("recover")))
            killed, code, out, err = self.run("recover", ["recover", "--format", "json"], kill)
            if killed:
                self.stats["recover_kills"] += 1
                continue
            if code != 0:
                raise Failure(f"recover exited {code}: {out.decode(errors='replace')}"
                              f"{err.decode(errors='replace')}")
            report = json.loads(out)
            for t in report.get("transactions", []):
                if t.get("left_alone"):
                    raise Failure(f"recover left files alone: {report}")
            return

    def patchgate_size(self):
        root = os.path.join(self.repo, ".git", "patchgate")
        total, history = 0, 0
        for r, _, names in os.walk(root):
            for n in names:
                total += os.path.getsize(os.path.join(r, n))
            if os.path.basename(r) == "history":
                history = len(names)
        return total, history

    def main(self):
        start = time.monotonic()
        self.setup()
        for n in range(1, self.args.cycles + 1):
            try:
                self.cycle(n)
            except Failure as e:
                raise Failure(f"cycle {n}: {e}") from None
            self.stats["cycles"] = n
            if n % 25 == 0 or n == self.args.cycles:
                size, history = self.patchgate_size()
                self.stats["max_patchgate_bytes"] = max(self.stats["max_patchgate_bytes"], size)
                self.stats["max_history"] = max(self.stats["max_history"], history)
                if size > self.args.max_patchgate_bytes:
                    raise Failure(f"cycle {n}: .git/patchgate holds {size} bytes, more than "
                                  f"{self.args.max_patchgate_bytes}")
                if history > HISTORY_KEPT:
                    raise Failure(f"cycle {n}: {history} history entries, more than {HISTORY_KEPT}")
            if n % self.args.progress == 0:
                s = self.stats
                s["wall_seconds"] = round(time.monotonic() - start, 1)
                if self.args.json:
                    with open(self.args.json, "w") as f:
                        json.dump(s, f, indent=1)
                print(f"cycle {n}: {time.monotonic() - start:.0f} s, kills {s['kills']} "
                      f"(recover {s['recover_kills']}), .git/patchgate {s['max_patchgate_bytes']} B max",
                      flush=True)
        fsck = subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=self.repo,
                              env=self.env, capture_output=True, timeout=3600)
        # Dangling objects are no error: a run killed before its point of no return leaves its
        # objects, as git's own commands do, until `git gc`.
        report = [ln for ln in fsck.stdout.decode().splitlines() if not ln.startswith("dangling ")]
        if fsck.returncode != 0 or report or fsck.stderr.strip():
            raise Failure(f"git fsck --strict: {fsck.stdout.decode()}{fsck.stderr.decode()}")
        self.stats["dangling_objects"] = len(fsck.stdout.splitlines())
        size, history = self.patchgate_size()
        refs = self.refs()
        self.stats.update({
            "wall_seconds": round(time.monotonic() - start, 1),
            "final_patchgate_bytes": size, "final_history": history,
            "history_pins": sum(1 for r in refs if r.startswith("refs/patchgate/history/")),
            "commits_on_main": int(self.git("rev-list", "--count", "main").decode()),
            "commits_on_branch": int(self.git("rev-list", "--count", BRANCH).decode()),
            "fsck": "clean", "seed": self.args.seed,
        })


def diff(a, b):
    keys = sorted(set(a) | set(b))
    return {k: (a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)}


def build(root):
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=root, check=True)
    return os.path.join(root, "target", "release", "patchgate")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--bin", default=os.environ.get("PATCHGATE"),
                    help="the patchgate binary (default: cargo build --release of this checkout)")
    ap.add_argument("--kill-rate", type=float, default=0.4)
    ap.add_argument("--recover-kill-rate", type=float, default=0.35)
    ap.add_argument("--timeout", type=float, default=120, help="seconds before a run is a hang")
    ap.add_argument("--max-patchgate-bytes", type=int, default=4 << 20)
    ap.add_argument("--progress", type=int, default=500)
    ap.add_argument("--keep", action="store_true", help="keep the repository even on success")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    if not args.bin:
        args.bin = build(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    soak = Soak(args)
    print(f"soak: {args.cycles} cycles, seed {args.seed}, repository {soak.repo}", flush=True)
    try:
        soak.main()
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"soak FAILED (seed {args.seed}): {e}", file=sys.stderr)
        print(json.dumps(soak.stats, indent=1), file=sys.stderr)
        print(f"repository kept: {soak.repo}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(soak.stats, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(soak.stats, f, indent=1)
    if args.keep:
        print(f"repository kept: {soak.repo}")
    else:
        shutil.rmtree(soak.scratch)


if __name__ == "__main__":
    main()
