"""The human and JSON reports of a peer-suites run."""

import shlex
from typing import Dict, List

from .core import DIFFERENCE_KINDS, DOC, DOCUMENTED, Result


def counts(results: List[Result]) -> Dict[str, int]:
    c = {"agree": 0, "documented": 0, "disagree": 0, "error": 0, "skipped": 0}
    for r in results:
        c[r.verdict] += 1
    c["judged"] = c["agree"] + c["documented"] + c["disagree"]
    c["wrong_place"] = sum(1 for r in results if r.wrong_place)
    c["changed_on_failure"] = sum(1 for r in results if r.changed_on_failure)
    return c


def _line(c: Dict[str, int]) -> str:
    extra = []
    if c["wrong_place"]:
        extra.append(f"{c['wrong_place']} WRONG PLACE")
    if c["changed_on_failure"]:
        extra.append(f"{c['changed_on_failure']} changed on failure")
    dis = f"disagree {c['disagree']}" + (f" ({', '.join(extra)})" if extra else "")
    parts = [f"{c['judged']} cases: agree {c['agree']}", f"documented {c['documented']}", dis]
    if c["error"]:
        parts.append(f"harness errors {c['error']}")
    parts.append(f"skipped {c['skipped']}")
    return ", ".join(parts)


def rerun_command(suite: str, path: str, case_id: str) -> str:
    return (
        f"scripts/peer-suites --{suite} {shlex.quote(path)} -k {shlex.quote(case_id)} -v "
        f"--keep /tmp/peer-case"
    )


def print_human(binary: str, runs, results: Dict[str, List[Result]], verbose: bool) -> None:
    print(f"patchgate: {binary}")
    total: List[Result] = []
    for name, label, path, commit, _, _ in runs:
        rs = results[name]
        total += rs
        print()
        print(f"{label}: {path} @ {commit}")
        print("  " + _line(counts(rs)))
        for r in rs:
            show = verbose or r.verdict in ("disagree", "error", "documented")
            if not show:
                continue
            tag = {
                "agree": "agree",
                "documented": "DOCUMENTED",
                "disagree": "DISAGREE",
                "error": "ERROR",
                "skipped": "skipped",
            }[r.verdict]
            flags = []
            if r.wrong_place:
                flags.append(
                    "WRONG PLACE (peer refuses)"
                    if r.peer and not r.peer.applied
                    else "WRONG PLACE (peer writes a different edit)"
                )
            if r.changed_on_failure:
                flags.append("CHANGED ON FAILURE")
            print(f"  {tag:<10} {r.case.id}" + (f"  [{'; '.join(flags)}]" if flags else ""))
            if r.verdict == "skipped":
                print(f"             {r.case.skip}")
                continue
            if r.case.also and (verbose or r.verdict != "agree"):
                print(f"             same input and answer as: {', '.join(r.case.also)}")
            if r.verdict == "documented":
                kind, reason = r.documented
                print(f"             {kind}: {reason} ({DOC})")
                if r.lenient_check:
                    print(f"             {r.lenient_check}")
                if not verbose:
                    continue
            if r.verdict == "agree" and not verbose:
                continue
            print(f"             source:    {r.case.source}")
            if r.peer:
                print(
                    f"             peer:      {'applies' if r.peer.applied else 'refuses'}: "
                    f"{r.peer.says}"
                )
            if r.pg_exit is not None:
                print(f"             patchgate: {r.pg_summary}")
            if r.case.note:
                print(f"             note:      {r.case.note}")
            for d in r.detail:
                print(f"           {d}")
            if r.verdict in ("disagree", "error"):
                print(f"             rerun:     {rerun_command(name, path, r.case.id)}")
    print()
    print("total: " + _line(counts(total)))
    unused = unused_documented(runs, total)
    if unused:
        print("listed in DOCUMENTED but no such case (renamed upstream?): " + ", ".join(unused))


def unused_documented(runs, results: List[Result]) -> List[str]:
    """DOCUMENTED ids of a suite that ran whole (no -k) but matched no case."""
    whole = {name for name, _, _, _, _, filtered in runs if not filtered}
    ids = {r.case.id for r in results} | {a for r in results for a in r.case.also}
    return sorted(i for i in DOCUMENTED if i.split("/")[0] in whole and i not in ids)


def summary_json(binary: str, features, runs, results: Dict[str, List[Result]]) -> dict:
    suites = {}
    total: List[Result] = []
    for name, _, path, commit, _, _ in runs:
        rs = results[name]
        total += rs
        suites[name] = {
            "checkout": path,
            "commit": commit,
            "counts": counts(rs),
            "cases": [dict(r.to_json(), rerun=rerun_command(name, path, r.case.id)) for r in rs],
        }
    return {
        "patchgate": binary,
        "patchgate_options": features,
        "difference_kinds": DIFFERENCE_KINDS,
        "suites": suites,
        "total": counts(total),
        "documented_without_case": unused_documented(runs, total),
    }
