//! The allocator of this process: glibc's, with its settings set once at start-up before any
//! thread exists; on musl, mimalloc instead of musl's own.
//!
//! glibc gives each thread that allocates its own arena, a heap reserved with no access and made
//! usable with one `mprotect` per growth of little more than the request. A large batch (1,000
//! edits over 200 files) made about 550 such calls from the planning and diff threads, and each
//! takes the process's memory-map lock for writing, which the other threads' page faults then
//! wait on: a tenth of the run's CPU. A top pad makes each growth (and each `brk` of the main
//! arena) reserve this much more than asked; the pages are still only touched, and so only
//! resident, when used. Setting it also fixes glibc's mmap threshold at its default (128 KiB)
//! instead of letting it grow with freed blocks, which only affects how large blocks are mapped.
//!
//! Other C libraries (musl, macOS) have neither per-thread arenas of this kind nor the setting.
//!
//! musl's allocator returns memory to the system on most frees and maps it again on the next
//! allocations: the static musl binary `scripts/release` ships (the one pip, uvx and npx install)
//! spent more than twice the glibc build's time on a large batch, most of it in the kernel
//! mapping, unmapping and faulting pages in (BENCHMARKS.md, ac). Built for musl, the program
//! allocates with mimalloc.

#[cfg(target_env = "musl")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How much more than asked each growth of a heap reserves.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TOP_PAD: libc::c_int = 16 << 20;

/// Tunes the allocator; call first thing in `main`, before any thread starts.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a parameter of the allocator; no thread is allocating yet.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
    }
}
