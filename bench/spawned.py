#!/usr/bin/env python3
"""Times commands started the way a Python agent or CI script starts them.

    spawned.py --dir DIR --reset CMD [--rounds 4] [--runs 8] NAME=COMMAND ...

Each COMMAND runs in DIR through `subprocess.run(COMMAND, shell=True)` (a `/bin/sh -c`), after
`--reset` (also run in DIR, not timed); the commands are interleaved round by round. Prints the
descriptor table such a child starts with (`FDSize` of /proc/self/status: 64 slots here, where
bash and hyperfine hand down 256), then each command's median wall time and its ratio to the
first command's. BENCHMARKS.md (aa) used it for a batch started this way. Standard library only.
"""
import argparse
import statistics
import subprocess
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--reset", required=True)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    a = ap.parse_args()
    commands = [c.split("=", 1) for c in a.commands]
    if any(len(c) != 2 for c in commands):
        ap.error("each command is NAME=COMMAND")
    status = subprocess.run("cat /proc/self/status", shell=True, capture_output=True, text=True)
    fdsize = next((l.split()[1] for l in status.stdout.splitlines() if l.startswith("FDSize:")), "?")
    print(f"descriptor table of a child started this way: {fdsize} slots")
    times = {name: [] for name, _ in commands}
    for _ in range(a.rounds):
        for name, cmd in commands:
            for _ in range(a.runs):
                subprocess.run(a.reset, shell=True, cwd=a.dir, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                start = time.perf_counter()
                subprocess.run(cmd, shell=True, cwd=a.dir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times[name].append((time.perf_counter() - start) * 1e3)
    first = statistics.median(times[commands[0][0]])
    for name, _ in commands:
        m = statistics.median(times[name])
        print(f"{name:40s} median {m:8.2f} ms  {m / first:5.2f}x  ({len(times[name])} runs)")


if __name__ == "__main__":
    main()
