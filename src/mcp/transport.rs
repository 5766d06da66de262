//! The server's stdio transport: newline-delimited JSON-RPC, with every request answered.
//!
//! rmcp's own stdio transport drops a line longer than its cap (and any line that is not JSON)
//! without a word, so a client that sent one waits forever for the answer. Here:
//! - a line longer than the input limit ([`crate::patch::limit`], the same as a patch's) is
//!   never buffered whole: it is skipped as it arrives and answered with a JSON-RPC error
//!   (`-32600`) naming the limit, with the request's `id` when the line's beginning holds it;
//! - a line that is not JSON is answered with `-32700` (parse error), one that is JSON but not a
//!   JSON-RPC message with `-32600`, both with the `id` when one can be found;
//! - a notification (no `id`) the server does not understand is ignored, as JSON-RPC requires.
//!
//! Invariants: the server keeps serving after any of these; memory per line is bounded by the
//! limit; everything written to stdout (rmcp's messages and these errors) goes through one
//! lock, a whole line at a time; reading is cancel-safe (rmcp polls `receive` inside a
//! `select!`): a partial line stays in the struct for the next call.

use std::collections::VecDeque;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// How much of an oversized line is kept to look for its `id`.
const HEAD: usize = 64 << 10;

pub struct Stdio<R, W> {
    read: BufReader<R>,
    write: Arc<Mutex<Option<W>>>,
    limit: usize,
    line: Vec<u8>,
    /// The beginning of a line being skipped for its size, while the rest of it arrives.
    skipping: Option<Vec<u8>>,
    /// Error answers not yet handed to a writer task.
    answers: VecDeque<Vec<u8>>,
}

enum Read {
    Line,
    /// A line over the limit; its beginning.
    Oversized(Vec<u8>),
    Eof,
}

impl<R, W> Stdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W, limit: usize) -> Self {
        Stdio {
            read: BufReader::new(read),
            write: Arc::new(Mutex::new(Some(write))),
            limit,
            line: Vec::new(),
            skipping: None,
            answers: VecDeque::new(),
        }
    }

    /// One line into `self.line`, never letting it grow past the limit.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let (used, done) = {
                let buf = self.read.fill_buf().await?;
                if buf.is_empty() {
                    return Ok(Read::Eof);
                }
                let newline = buf.iter().position(|b| *b == b'\n');
                let take = newline.map_or(buf.len(), |i| i + 1);
                if let Some(head) = self.skipping.as_mut() {
                    let room = HEAD.saturating_sub(head.len()).min(take);
                    head.extend_from_slice(&buf[..room]);
                } else if self.line.len() + take > self.limit {
                    let mut head = std::mem::take(&mut self.line);
                    head.truncate(HEAD);
                    let room = HEAD.saturating_sub(head.len()).min(take);
                    head.extend_from_slice(&buf[..room]);
                    self.skipping = Some(head);
                } else {
                    self.line.extend_from_slice(&buf[..take]);
                }
                (take, newline.is_some())
            };
            self.read.consume(used);
            if done {
                return Ok(match self.skipping.take() {
                    Some(head) => Read::Oversized(head),
                    None => Read::Line,
                });
            }
        }
    }

    /// Hands the queued answers to a task that writes them: a write must finish even when this
    /// `receive` is cancelled, and never interleave with another message.
    fn flush_answers(&mut self) {
        if self.answers.is_empty() {
            return;
        }
        let answers: Vec<Vec<u8>> = self.answers.drain(..).collect();
        let write = self.write.clone();
        tokio::spawn(async move {
            let mut guard = write.lock().await;
            if let Some(w) = guard.as_mut() {
                for a in answers {
                    if w.write_all(&a).await.is_err() {
                        return;
                    }
                }
                let _ = w.flush().await;
            }
        });
    }

    fn answer(&mut self, id: Value, code: i64, message: String, data: Option<Value>) {
        let mut error = json!({ "code": code, "message": message });
        if let Some(d) = data {
            error["data"] = d;
        }
        let mut bytes = serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "error": error }))
            .unwrap_or_default();
        bytes.push(b'\n');
        self.answers.push_back(bytes);
    }

    /// What to do with a complete line: the message, or an answer queued (or nothing, for an
    /// empty line or a notification the server does not know).
    fn parse_line(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let line = std::mem::take(&mut self.line);
        let mut text: &[u8] = &line;
        text = text.strip_suffix(b"\n").unwrap_or(text);
        text = text.strip_suffix(b"\r").unwrap_or(text);
        text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
            Ok(m) => Some(m),
            Err(e) if e.is_syntax() || e.is_eof() => {
                self.answer(
                    sniff_id(text),
                    -32700,
                    format!("parse error: the request is not valid JSON ({e})"),
                    None,
                );
                None
            }
            Err(e) => {
                let value: Value = serde_json::from_slice(text).unwrap_or(Value::Null);
                let id = value.get("id").cloned();
                if id.is_none() && value.get("method").is_some() {
                    // A notification: never answered, even when it is not understood.
                    return None;
                }
                self.answer(
                    id.unwrap_or(Value::Null),
                    -32600,
                    format!("invalid request: {e}"),
                    None,
                );
                None
            }
        }
    }
}

impl<R, W> rmcp::transport::Transport<RoleServer> for Stdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut guard = write.lock().await;
            let Some(w) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                ));
            };
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.flush_answers();
            match self.read_line().await {
                Ok(Read::Line) => {
                    if let Some(m) = self.parse_line() {
                        return Some(m);
                    }
                }
                Ok(Read::Oversized(head)) => {
                    let limit = self.limit;
                    self.answer(
                        sniff_id(&head),
                        -32600,
                        format!(
                            "the request is larger than patchgate's input limit of {} MiB; it was \
                             not read. Split the patch, or raise the limit with {}",
                            limit >> 20,
                            crate::patch::limit::ENV
                        ),
                        Some(json!({ "limit_bytes": limit })),
                    );
                }
                Ok(Read::Eof) | Err(_) => {
                    // The session ends here: write what is left before saying so, rather than
                    // leave it to a task the runtime may not run again.
                    let mut guard = self.write.lock().await;
                    if let Some(w) = guard.as_mut() {
                        for a in self.answers.drain(..) {
                            if w.write_all(&a).await.is_err() {
                                break;
                            }
                        }
                        let _ = w.flush().await;
                    }
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut guard = self.write.lock().await;
        if let Some(mut w) = guard.take() {
            let _ = w.flush().await;
        }
        Ok(())
    }
}

/// The top-level `"id"` of a JSON-RPC message that may be cut short or invalid further on:
/// found only when it comes before the cut or the error, else `null` (JSON-RPC's id for "could
/// not tell").
pub fn sniff_id(text: &[u8]) -> Value {
    let mut s = Scan { b: text, i: 0 };
    s.ws();
    if !s.eat(b'{') {
        return Value::Null;
    }
    loop {
        s.ws();
        let Some(key) = s.string() else {
            return Value::Null;
        };
        s.ws();
        if !s.eat(b':') {
            return Value::Null;
        }
        s.ws();
        let start = s.i;
        if !s.value() {
            return Value::Null;
        }
        if key == b"\"id\"" {
            return match serde_json::from_slice::<Value>(&text[start..s.i]) {
                Ok(v @ (Value::Number(_) | Value::String(_))) => v,
                _ => Value::Null,
            };
        }
        s.ws();
        if !s.eat(b',') {
            return Value::Null;
        }
    }
}

/// A forgiving walk over the start of a JSON text: each step says whether it found what it
/// looked for before the text ended.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    /// A string with its quotes, as raw bytes.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        if !self.eat(b'"') {
            return None;
        }
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => {
                    let b: &'a [u8] = self.b;
                    return b.get(start..self.i);
                }
                _ => {}
            }
        }
        None
    }

    /// Skips one value; false if the text ends (or breaks) inside it.
    fn value(&mut self) -> bool {
        match self.b.get(self.i) {
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(&c) = self.b.get(self.i) {
                    match c {
                        b'"' => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                false
            }
            Some(_) => {
                let start = self.i;
                while self
                    .b
                    .get(self.i)
                    .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                // A scalar that runs into the end of the text may be cut short.
                self.i > start && self.i < self.b.len()
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_bad_line_is_answered_and_a_good_one_delivered() {
        use rmcp::transport::Transport;
        use tokio::io::AsyncReadExt;
        let input: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{\"pad\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}\n\
            \n\
            {\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}\n\
            not json\n\
            {\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\",\"params\":3}\n";
        let (w, mut r) = tokio::io::duplex(1 << 16);
        let mut t = Stdio::new(input, w, 100);
        let mut got = Vec::new();
        while let Some(m) = t.receive().await {
            got.push(serde_json::to_value(&m).expect("serialisable"));
        }
        assert!(got.iter().any(|m| m["id"] == 10), "the ping: {got:?}");
        drop(t);
        let mut out = String::new();
        r.read_to_string(&mut out).await.expect("read");
        let mut answers: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON message a line"))
            .collect();
        answers.sort_by_key(|a| a["error"]["code"].as_i64());
        assert_eq!(answers.len(), 2, "{out}");
        assert_eq!(answers[0]["id"], Value::Null);
        assert_eq!(answers[0]["error"]["code"], -32700);
        assert_eq!(answers[1]["id"], json!(9));
        assert_eq!(answers[1]["error"]["code"], -32600);
        assert_eq!(answers[1]["error"]["data"]["limit_bytes"], 100);
    }

    #[test]
    fn the_id_is_found_before_a_cut_or_an_error() {
        assert_eq!(
            sniff_id(br#"{"jsonrpc":"2.0","id":7,"method":"x""#),
            json!(7)
        );
        assert_eq!(
            sniff_id(br#" { "method": "tools/call", "params": {"a": [1, "}"]}, "id": "r-1", "#),
            json!("r-1")
        );
        // The id comes after the cut, or is cut itself: not known.
        assert_eq!(
            sniff_id(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"patch_text":"aaa"#),
            Value::Null
        );
        assert_eq!(sniff_id(br#"{"id":12"#), Value::Null);
        assert_eq!(sniff_id(b"not json"), Value::Null);
        assert_eq!(sniff_id(br#"{"id":{"x":1}}"#), Value::Null);
    }
}
