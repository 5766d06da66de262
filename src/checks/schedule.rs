//! The order and the lanes of a phase's check jobs: the external tools' processes start first,
//! the built-in (in-process) checks run beside them.
//!
//! An external job spends its time waiting for a child process, a built-in one computing in
//! patchgate; neither should wait for the other. So a phase runs on `jobs` lanes (`-j`) that take
//! external jobs first (the ones that may build or start a runtime before the rest: whole-package
//! tools, then one-run-per-batch tools, then per-file ones), and, when there are both kinds, one
//! more lane for the built-ins alone. A lane with no external job left takes built-ins too.
//!
//! Invariants: at most `jobs` external jobs run at once; every job runs exactly once; the results
//! come back in the order the jobs finished (the caller sorts them).

use std::collections::VecDeque;
use std::sync::Mutex;

/// How a job runs, for its place in the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// An external tool; lower ranks start first (the rank orders external jobs only).
    External(u8),
    /// Computed inside patchgate.
    BuiltIn,
}

/// Runs every job of `jobs` with `run`, on `lanes` lanes (0: one per core) plus one for the
/// built-ins when there are jobs of both classes; returns the results as the jobs finished.
pub fn run_all<J: Send, R: Send>(
    jobs: Vec<J>,
    lanes: usize,
    class: impl Fn(&J) -> Class,
    run: impl Fn(J) -> R + Sync,
) -> Vec<R> {
    let mut external: Vec<(u8, J)> = Vec::new();
    let mut builtin: VecDeque<J> = VecDeque::new();
    for j in jobs {
        match class(&j) {
            Class::External(rank) => external.push((rank, j)),
            Class::BuiltIn => builtin.push_back(j),
        }
    }
    // Stable: within a rank, the caller's order.
    external.sort_by_key(|(rank, _)| *rank);
    let lanes = match lanes {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let extra = !external.is_empty() && !builtin.is_empty();
    let external: Mutex<VecDeque<J>> = Mutex::new(external.into_iter().map(|(_, j)| j).collect());
    let builtin = Mutex::new(builtin);
    let results = Mutex::new(Vec::new());
    let pop = |q: &Mutex<VecDeque<J>>| q.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    let lane = |takes_external: bool| loop {
        let next = if takes_external { pop(&external) } else { None };
        let Some(job) = next.or_else(|| pop(&builtin)) else {
            break;
        };
        let r = run(job);
        results.lock().unwrap_or_else(|p| p.into_inner()).push(r);
    };
    std::thread::scope(|s| {
        // A lane that could not start leaves its jobs to the others; the calling thread is one
        // lane itself, so there is always one.
        for _ in 1..lanes {
            let _ = std::thread::Builder::new().spawn_scoped(s, || lane(true));
        }
        if extra {
            let _ = std::thread::Builder::new().spawn_scoped(s, || lane(false));
        }
        lane(true);
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn every_job_runs_once_and_at_most_lanes_externals_at_once() {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let jobs: Vec<(usize, Class)> = (0..30)
            .map(|i| {
                let class = match i % 3 {
                    0 => Class::BuiltIn,
                    1 => Class::External(1),
                    _ => Class::External(2),
                };
                (i, class)
            })
            .collect();
        let mut done = run_all(
            jobs,
            2,
            |j| j.1,
            |(i, class)| {
                if class != Class::BuiltIn {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    running.fetch_sub(1, Ordering::SeqCst);
                }
                i
            },
        );
        done.sort_unstable();
        assert_eq!(done, (0..30).collect::<Vec<_>>());
        assert!(peak.load(Ordering::SeqCst) <= 2, "{peak:?}");
    }

    #[test]
    fn built_ins_do_not_wait_for_the_external_jobs_even_on_one_lane() {
        let t0 = Instant::now();
        let jobs = vec![Class::External(0), Class::BuiltIn, Class::BuiltIn];
        let ends = run_all(
            jobs,
            1,
            |c| *c,
            |c| {
                if c != Class::BuiltIn {
                    std::thread::sleep(Duration::from_millis(300));
                }
                (c, t0.elapsed())
            },
        );
        let external = ends.iter().find(|(c, _)| *c != Class::BuiltIn);
        let external_end = external.map(|(_, t)| *t).unwrap_or_default();
        for (c, t) in &ends {
            if *c == Class::BuiltIn {
                assert!(*t < external_end, "{ends:?}");
            }
        }
    }

    #[test]
    fn no_lane_count_means_one_lane_per_core() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let jobs = vec![Class::External(1); cores * 2];
        run_all(
            jobs,
            0,
            |c| *c,
            |_| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(50));
                running.fetch_sub(1, Ordering::SeqCst);
            },
        );
        assert_eq!(peak.load(Ordering::SeqCst), cores);
    }

    #[test]
    fn external_jobs_start_by_rank() {
        let order = Mutex::new(Vec::new());
        let jobs = vec![Class::External(2), Class::External(0), Class::External(1)];
        run_all(
            jobs,
            1,
            |c| *c,
            |c| order.lock().map(|mut o| o.push(c)).unwrap_or(()),
        );
        let got = order.into_inner().unwrap_or_default();
        let want = vec![Class::External(0), Class::External(1), Class::External(2)];
        assert_eq!(got, want);
    }
}
