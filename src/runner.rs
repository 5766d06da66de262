//! The one way patchgate runs another program (git, and the checkers).
//!
//! Every child gets: an explicit working directory; stdin from /dev/null (a child waiting for
//! input would hang the run) unless the caller hands it bytes to read (a formatter fed the patched
//! content), which a separate thread writes and then closes; its own process group, so a timeout kills the child *and everything
//! it started* (a linter's worker processes, a test binary); captured stdout and stderr, read on
//! separate threads so a child filling one pipe cannot deadlock (their end, when the child exits,
//! is what the run waits for: no polling); and an environment without the
//! `GIT_*` variables git exports inside hooks (`GIT_DIR`, `GIT_INDEX_FILE`, ...), which would
//! silently redirect a git command aimed at another worktree or index (that has corrupted indexes
//! in pre-commit and prek: pre-commit #1849, prek #2505).

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod session;
pub use session::{Session, SessionError};

/// The inherited variables that change which repository, index or worktree git acts on.
pub const GIT_LOCATION_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_QUARANTINE_PATH",
];

#[derive(Debug, Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    cwd: PathBuf,
    env: Vec<(OsString, Option<OsString>)>,
    timeout: Duration,
    stdin: Option<Vec<u8>>,
}

#[derive(Debug, Clone)]
pub struct Output {
    /// `None` when the child was killed by a signal (including our timeout).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub timed_out: bool,
    pub duration: Duration,
}

impl Output {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_str(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    /// The entries of a NUL-separated stdout (git's `-z` lists), empty ones and those that are
    /// not UTF-8 left out.
    pub fn nul_separated(&self) -> Vec<String> {
        self.stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .filter_map(|p| std::str::from_utf8(p).ok().map(str::to_string))
            .collect()
    }
}

#[derive(Debug)]
pub enum RunError {
    /// The program is not installed (not found on PATH or at the given path).
    NotFound(OsString),
    Spawn(std::io::Error),
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::NotFound(_) => None,
            RunError::Spawn(e) => Some(e),
        }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::NotFound(p) => write!(f, "{} not found on PATH", p.to_string_lossy()),
            RunError::Spawn(e) => write!(f, "cannot start: {e}"),
        }
    }
}

impl Cmd {
    pub fn new(program: impl Into<OsString>, cwd: impl AsRef<Path>) -> Cmd {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.as_ref().to_path_buf(),
            env: Vec::new(),
            timeout: Duration::from_secs(60),
            stdin: None,
        }
    }

    /// Bytes for the child's stdin (written by a thread, then closed).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Cmd {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn arg(mut self, a: impl Into<OsString>) -> Cmd {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, it: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(it.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Cmd {
        self.env.push((k.into(), Some(v.into())));
        self
    }

    pub fn timeout(mut self, t: Duration) -> Cmd {
        self.timeout = t;
        self
    }

    /// The `Command` every child of patchgate is started with: explicit cwd, its own process
    /// group, piped stdout and stderr, the `GIT_*` location variables scrubbed.
    fn command(&self, stdin: Stdio) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args)
            .current_dir(&self.cwd)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for v in GIT_LOCATION_VARS {
            c.env_remove(v);
        }
        for (k, v) in &self.env {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c
    }

    /// Runs to completion or until the timeout, which kills the whole process group.
    pub fn run(&self) -> Result<Output, RunError> {
        let mut c = self.command(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let start = Instant::now();
        let mut child = c.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => RunError::NotFound(self.program.clone()),
            _ => RunError::Spawn(e),
        })?;
        let pgid = child.id() as i32;
        if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), self.stdin.clone()) {
            // A child that exits without reading everything closes the pipe: that is not ours to report.
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = pipe.write_all(&bytes);
            });
        }
        // The end of both pipes is the usual sign that the child is done (it closes them as it
        // exits): each reader says when it reached its end, and the wait for both is bounded by
        // the deadline. Polling the child instead (every 2 ms, then the readers the same way)
        // added 2-4 ms to every checker's run. What a reader has read is in its buffer at any
        // moment, so a reader that never ends (a process outside the group holds its pipe) is
        // left behind rather than waited for.
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let read = |pipe: Option<Pipe>, done: std::sync::mpsc::Sender<()>| {
            let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let into = std::sync::Arc::clone(&buf);
            std::thread::spawn(move || {
                if let Some(mut p) = pipe {
                    let mut chunk = vec![0u8; 64 * 1024];
                    loop {
                        match p.read(&mut chunk) {
                            Ok(0) => break,
                            Ok(n) => {
                                if let Ok(mut b) = into.lock() {
                                    b.extend_from_slice(&chunk[..n]);
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(_) => break,
                        }
                    }
                }
                let _ = done.send(());
            });
            buf
        };
        let out_buf = read(child.stdout.take().map(Pipe::Out), done_tx.clone());
        let err_buf = read(child.stderr.take().map(Pipe::Err), done_tx);
        let mut timed_out = false;
        let mut ended = 0;
        while ended < 2 {
            let left = self.timeout.saturating_sub(start.elapsed());
            if done_rx.recv_timeout(left).is_err() {
                // The child, or a background grandchild holding the pipes, outlived the deadline.
                timed_out = true;
                break;
            }
            ended += 1;
        }
        let status = if timed_out {
            kill_group(pgid);
            child.wait().ok()
        } else {
            // Both pipes are closed: the child has exited or is exiting (a child that closed them
            // and lives on is waited for until the deadline, then its group is killed).
            let mut pause = Duration::from_micros(50);
            loop {
                match child.try_wait() {
                    Ok(Some(s)) => break Some(s),
                    Ok(None) => {}
                    Err(_) => break None,
                }
                if start.elapsed() >= self.timeout {
                    timed_out = true;
                    kill_group(pgid);
                    break child.wait().ok();
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(2));
            }
        };
        // The group's kill closes its ends of the pipes: the readers finish at once, unless a
        // process that left the group (`setsid`) holds them; that one is not waited for.
        let grace = Instant::now() + READ_GRACE;
        while ended < 2
            && done_rx
                .recv_timeout(grace.saturating_duration_since(Instant::now()))
                .is_ok()
        {
            ended += 1;
        }
        let take = |b: &std::sync::Arc<std::sync::Mutex<Vec<u8>>>| {
            b.lock()
                .map(|mut v| std::mem::take(&mut *v))
                .unwrap_or_default()
        };
        let (stdout, stderr) = (take(&out_buf), take(&err_buf));
        Ok(Output {
            code: status.and_then(|s| s.code()),
            stdout,
            stderr,
            timed_out,
            duration: start.elapsed(),
        })
    }
}

/// How long the readers of a killed run are given to reach the end of their pipes.
const READ_GRACE: Duration = Duration::from_millis(100);

/// A child's stdout or stderr, read to its end by one thread.
enum Pipe {
    Out(std::process::ChildStdout),
    Err(std::process::ChildStderr),
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Pipe::Out(p) => p.read(buf),
            Pipe::Err(p) => p.read(buf),
        }
    }
}

pub(crate) fn kill_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_both_streams_and_the_code() {
        let out = Cmd::new("sh", ".")
            .args(["-c", "echo out; echo err >&2; exit 3"])
            .run()
            .expect("sh runs");
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout_str(), "out\n");
        assert_eq!(out.stderr_str(), "err\n");
    }

    #[test]
    fn feeds_stdin() {
        let out = Cmd::new("cat", ".")
            .stdin(b"hello".to_vec())
            .run()
            .expect("cat runs");
        assert_eq!(out.stdout_str(), "hello");
    }

    #[test]
    fn a_missing_program_is_not_found() {
        match Cmd::new("patchgate-no-such-tool", ".").run() {
            Err(RunError::NotFound(p)) => assert_eq!(p, "patchgate-no-such-tool"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let out = Cmd::new("sh", dir.path())
            .args(["-c", &script])
            .timeout(Duration::from_millis(300))
            .run()
            .expect("runs");
        assert!(out.timed_out);
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .expect("pid")
            .trim()
            .parse()
            .expect("num");
        std::thread::sleep(Duration::from_millis(100));
        // A killed orphan may linger as a zombie until something reaps it: that is dead.
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        });
        assert!(!alive, "the grandchild sleep survived the timeout");
    }

    /// A child that closes its output early and exits later is waited for (its code is what it
    /// exits with); one that closes it and lives past the deadline is killed.
    #[test]
    fn a_child_that_closes_its_pipes_early_is_still_waited_for_and_bounded() {
        let out = Cmd::new("sh", ".")
            .args(["-c", "exec >&- 2>&-; sleep 0.2; exit 5"])
            .timeout(Duration::from_secs(10))
            .run()
            .expect("runs");
        assert_eq!((out.code, out.timed_out), (Some(5), false));
        let start = Instant::now();
        let out = Cmd::new("sh", ".")
            .args(["-c", "exec >&- 2>&-; sleep 30"])
            .timeout(Duration::from_millis(300))
            .run()
            .expect("runs");
        assert!(out.timed_out);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
    }

    /// A background child that left the process group (`setsid`) keeps the pipes open and
    /// survives the group's kill: the run still ends at its deadline, with what was read.
    #[test]
    fn a_child_outside_the_group_holding_the_pipes_does_not_hang_the_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("pid");
        let script = format!(
            "setsid sh -c 'echo $$ > {}; exec sleep 30' & echo started",
            pidfile.display()
        );
        let start = Instant::now();
        let out = Cmd::new("sh", dir.path())
            .args(["-c", &script])
            .timeout(Duration::from_millis(500))
            .run()
            .expect("runs");
        let took = start.elapsed();
        if let Ok(pid) = std::fs::read_to_string(&pidfile)
            && let Ok(pid) = pid.trim().parse::<i32>()
        {
            // SAFETY: kill(2) of the test's own stray child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        assert!(out.timed_out);
        assert_eq!(out.stdout_str(), "started\n");
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    /// The leader exits at once but leaves a background child holding stdout: the deadline still
    /// holds, and the child is killed with its group.
    #[test]
    fn a_background_child_holding_the_pipes_is_bounded_by_the_timeout() {
        let start = Instant::now();
        let out = Cmd::new("sh", ".")
            .args(["-c", "sleep 20 & echo started"])
            .timeout(Duration::from_millis(500))
            .run()
            .expect("runs");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        assert!(out.timed_out, "the leftover child is a timeout");
        assert_eq!(out.stdout_str().trim(), "started");
    }
}
