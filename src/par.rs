//! Data parallelism that starts rayon's thread pool only when there is something to share.
//!
//! The first parallel iterator of a process starts the global pool: one thread per core, each
//! spinning (`sched_yield`) before it sleeps. For the usual agent patch (one file, one diff, one
//! or two blobs) that start cost more than the work: a miss in a 10,000-line file spent 1 to 4
//! ms of its 12 starting threads to hash one file. These helpers run one item, or a few small
//! ones, on the calling thread and hand anything larger to rayon. The results are the same
//! either way: in the items' order, or an error of one of them.

use rayon::prelude::*;

/// Below this many bytes in all, hashing, compressing or diffing the items on the calling thread
/// is cheaper than starting the pool (SHA-1 of 1 MiB takes about a millisecond).
const PARALLEL_BYTES: usize = 1 << 20;

/// How many cores this process may use, without starting the pool to ask it (read once).
pub fn cores() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether `items` are worth the pool: at least two, and [`PARALLEL_BYTES`] of work in all.
fn worth_sharing<T>(items: &[T], size: impl Fn(&T) -> usize) -> bool {
    items.len() >= 2 && items.iter().map(size).sum::<usize>() >= PARALLEL_BYTES
}

/// `f` of every item, in order, for items whose work grows with their size: on the calling
/// thread unless there are at least two items and [`PARALLEL_BYTES`] in all.
pub fn map_sized<T: Sync, R: Send>(
    items: &[T],
    size: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    if worth_sharing(items, size) {
        items.par_iter().map(f).collect()
    } else {
        items.iter().map(f).collect()
    }
}

/// [`try_map`] for items whose work grows with their size (see [`map_sized`]).
pub fn try_map_sized<T: Sync, R: Send, E: Send>(
    items: &[T],
    size: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> Result<R, E> + Sync + Send,
) -> Result<Vec<R>, E> {
    if worth_sharing(items, size) {
        items.par_iter().map(f).collect()
    } else {
        items.iter().map(f).collect()
    }
}

/// `f` of every item, in order, each item counted as enough work to share: for a caller that
/// already decided the whole is worth the pool.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    map_sized(items, |_| PARALLEL_BYTES, f)
}

/// `f` of every item, in order, or an error: the sequential path stops at the first one, the
/// parallel path stops starting new items once one failed (those already running finish) and
/// returns one of the errors. By count, not size: for work that waits (a sync) rather than
/// computes.
pub fn try_map<T: Sync, R: Send, E: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R, E> + Sync + Send,
) -> Result<Vec<R>, E> {
    // Every item counts as enough work: two or more go to the pool.
    try_map_sized(items, |_| PARALLEL_BYTES, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_item_or_many_give_the_same_ordered_results() {
        for n in [0usize, 1, 2, 3, 100] {
            let items: Vec<usize> = (0..n).collect();
            let want: Vec<usize> = items.iter().map(|i| i * 2).collect();
            for per in [1, PARALLEL_BYTES] {
                assert_eq!(map_sized(&items, |_| per, |i| i * 2), want);
                assert_eq!(
                    try_map_sized(&items, |_| per, |i| Ok::<_, ()>(i * 2)),
                    Ok(want.clone())
                );
            }
            assert_eq!(try_map(&items, |i| Ok::<_, ()>(i * 2)), Ok(want));
            if n > 0 {
                assert_eq!(
                    try_map(&items, |&i| if i + 1 == n { Err(i) } else { Ok(i) }),
                    Err(n - 1)
                );
            }
        }
    }
}
