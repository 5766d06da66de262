//! A long-lived child that answers requests, one line in and one line out (the warm node host of
//! `patchgate mcp`).
//!
//! It is started like every other child ([`Cmd`]: explicit cwd, its own process group, the
//! `GIT_*` location variables scrubbed), and the same guarantees hold over its whole life:
//! - a request that is not answered within its timeout kills the whole group, and the session is
//!   dead from then on (the caller starts a new one);
//! - stdout is read by a thread into a channel and stderr is drained by another (only its tail is
//!   kept, for error messages), so a chatty child never blocks on a full pipe;
//! - dropping the session kills the group and reaps the child; and since the child's stdin is a
//!   pipe we hold, a child that watches it (as the node host does) exits on its own when this
//!   process dies without dropping anything (`kill -9`).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Cmd, RunError, kill_group};

/// How much of the child's stderr is kept for error messages.
const STDERR_TAIL: usize = 4000;

pub struct Session {
    child: Child,
    pgid: i32,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    dead: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// No answer within the timeout: the group was killed.
    Timeout,
    /// The child exited (or closed its stdout): the tail of its stderr.
    Closed(String),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Timeout => f.write_str("timed out"),
            SessionError::Closed(tail) if tail.is_empty() => f.write_str("the process exited"),
            SessionError::Closed(tail) => write!(f, "the process exited: {tail}"),
        }
    }
}

impl Cmd {
    /// Starts the command as a [`Session`] (its stdin a pipe for requests; any bytes set with
    /// [`Cmd::stdin`] are ignored). The command's timeout does not apply: each request has its own.
    pub fn spawn_session(&self) -> Result<Session, RunError> {
        let mut child = self
            .command(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => RunError::NotFound(self.program.clone()),
                _ => RunError::Spawn(e),
            })?;
        let pgid = child.id() as i32;
        let (tx, lines) = channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut t) = tail.lock() {
                        t.push_str(&String::from_utf8_lossy(&buf[..n]));
                        if t.len() > 2 * STDERR_TAIL {
                            let cut = t.len() - STDERR_TAIL;
                            let cut = (cut..t.len()).find(|i| t.is_char_boundary(*i)).unwrap_or(0);
                            t.drain(..cut);
                        }
                    }
                }
            });
        }
        Ok(Session {
            stdin: child.stdin.take(),
            child,
            pgid,
            lines,
            stderr,
            dead: false,
        })
    }
}

impl Session {
    /// Sends one request line and returns the first line of output that `is_answer` accepts
    /// (other lines are stray output of code running in the child, and are dropped).
    pub fn request(
        &mut self,
        line: &str,
        timeout: Duration,
        is_answer: impl Fn(&str) -> bool,
    ) -> Result<String, SessionError> {
        if self.dead {
            return Err(SessionError::Closed(self.stderr_tail()));
        }
        let start = Instant::now();
        let sent = match self.stdin.as_mut() {
            Some(pipe) => pipe
                .write_all(line.as_bytes())
                .and_then(|()| pipe.write_all(b"\n"))
                .and_then(|()| pipe.flush())
                .is_ok(),
            None => false,
        };
        if !sent {
            return Err(self.close());
        }
        loop {
            let left = timeout.saturating_sub(start.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(l) if is_answer(&l) => return Ok(l),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(SessionError::Timeout);
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.close()),
            }
        }
    }

    /// Whether the child is still running (and has not failed a request).
    pub fn alive(&mut self) -> bool {
        !self.dead && matches!(self.child.try_wait(), Ok(None))
    }

    /// The child's process id (also its process group).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last few kilobytes the child wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().map(|t| t.clone()).unwrap_or_default();
        let t = t.trim();
        let start = t.len().saturating_sub(STDERR_TAIL);
        let start = (start..t.len())
            .find(|i| t.is_char_boundary(*i))
            .unwrap_or(0);
        t[start..].to_string()
    }

    fn close(&mut self) -> SessionError {
        self.kill();
        // The stderr thread may still be reading the child's last words.
        std::thread::sleep(Duration::from_millis(20));
        SessionError::Closed(self.stderr_tail())
    }

    fn kill(&mut self) {
        if !self.dead {
            self.dead = true;
            self.stdin = None;
            kill_group(self.pgid);
            let _ = self.child.wait();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell that echoes each request line back, prefixed, after some noise.
    fn echo() -> Session {
        Cmd::new("sh", ".")
            .args([
                "-c",
                "while read l; do echo noise; echo \"ok $l\"; echo err >&2; done",
            ])
            .spawn_session()
            .expect("sh starts")
    }

    #[test]
    fn answers_requests_in_turn_and_skips_stray_lines() {
        let mut s = echo();
        let t = Duration::from_secs(10);
        for i in 0..3 {
            let got = s.request(&format!("r{i}"), t, |l| l.starts_with("ok "));
            assert_eq!(got, Ok(format!("ok r{i}")));
        }
        assert!(s.alive());
    }

    #[test]
    fn a_timeout_kills_the_group_and_the_session_stays_dead() {
        let mut s = Cmd::new("sh", ".")
            .args(["-c", "sleep 30 & read l; wait"])
            .spawn_session()
            .expect("sh starts");
        let pid = s.pid();
        let got = s.request("x", Duration::from_millis(200), |_| true);
        assert_eq!(got, Err(SessionError::Timeout));
        assert!(!s.alive());
        assert!(
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_err(),
            "the leader was not reaped"
        );
        let again = s.request("x", Duration::from_secs(1), |_| true);
        assert!(matches!(again, Err(SessionError::Closed(_))), "{again:?}");
    }

    #[test]
    fn an_exit_is_reported_with_the_stderr_tail() {
        let mut s = Cmd::new("sh", ".")
            .args(["-c", "read l; echo broken config >&2; exit 1"])
            .spawn_session()
            .expect("sh starts");
        let got = s.request("x", Duration::from_secs(10), |_| true);
        assert_eq!(got, Err(SessionError::Closed("broken config".into())));
    }

    #[test]
    fn dropping_the_session_kills_the_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; echo up; wait", pidfile.display());
        let mut s = Cmd::new("sh", dir.path())
            .args(["-c", &script])
            .spawn_session()
            .expect("sh starts");
        // The first line is the answer to an empty request; sh ignores its stdin.
        let up = s.request("", Duration::from_secs(10), |l| l == "up");
        assert_eq!(up.as_deref(), Ok("up"));
        let pid = std::fs::read_to_string(&pidfile).expect("pid");
        drop(s);
        std::thread::sleep(Duration::from_millis(100));
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
        let alive = stat.is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        });
        assert!(!alive, "the grandchild survived the session");
    }
}
