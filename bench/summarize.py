#!/usr/bin/env python3
"""Prints a table of medians (and ratios to a baseline) from hyperfine --export-json files.

    summarize.py BASELINE_NAME FILE.json [FILE.json ...]

Results of the same command in several files (rounds of the same benchmark) are merged: the median
is over all runs of all rounds. Ratios are median / median of the command named BASELINE_NAME.
Also prints "#tsv<TAB>name<TAB>median_ms<TAB>ratio" lines for the calling script.
"""

import json
import statistics
import sys


def main():
    base_name = sys.argv[1]
    times = {}  # command -> all run times in ms, in first-seen order of commands
    for path in sys.argv[2:]:
        with open(path) as fh:
            for r in json.load(fh)["results"]:
                times.setdefault(r["command"], []).extend(x * 1000 for x in r["times"])
    rows = []
    for name, t in times.items():
        rows.append({
            "name": name,
            "n": len(t),
            "median": statistics.median(t),
            "mean": statistics.fmean(t),
            "sd": statistics.stdev(t) if len(t) > 1 else 0.0,
            "min": min(t),
            "max": max(t),
        })
    base = next((r["median"] for r in rows if r["name"] == base_name), None)
    w = max(len(r["name"]) for r in rows)
    head = f"{'command':<{w}}  {'runs':>4}  {'median ms':>9}  {'mean ms':>8}  {'sd ms':>6}  {'min ms':>7}  {'max ms':>7}"
    if base:
        head += f"  {'ratio':>6}"
    print(head)
    print("-" * len(head))
    for r in rows:
        line = (f"{r['name']:<{w}}  {r['n']:>4}  {r['median']:>9.1f}  {r['mean']:>8.1f}  {r['sd']:>6.1f}"
                f"  {r['min']:>7.1f}  {r['max']:>7.1f}")
        if base:
            line += f"  {r['median'] / base:>5.2f}x"
        print(line)
    for r in rows:
        ratio = f"{r['median'] / base:.3f}" if base else "-"
        print(f"#tsv\t{r['name']}\t{r['median']:.2f}\t{ratio}")


if __name__ == "__main__":
    main()
