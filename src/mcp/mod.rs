//! `patchgate mcp`: the Model Context Protocol server on stdio (rmcp), for agents.
//!
//! The server owns four things: the tools ([`tools`]: arguments, descriptions, each call run
//! by the same operation as the command line, [`crate::ops`]), the scope it may act in ([`scope`]: the
//! repository it was started in, plus the client's declared roots), what stays warm between
//! calls ([`warm`]), and the stdio transport ([`transport`]: bounded lines, every request
//! answered).
//!
//! Invariants:
//! - stdout carries only protocol messages: nothing in the pipeline prints to stdout (notes and
//!   timings go to stderr, checkers' output is captured by the runner), and the server never
//!   renders a report to stdout itself;
//! - a call to a known tool always gets a tool result (failures are `isError: true` with the
//!   report), never a protocol error;
//! - each call runs on the blocking pool, so the protocol keeps being served (pings,
//!   cancellations) while a patch is checked.

pub mod scope;
pub mod tools;
pub mod transport;
pub mod warm;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::error::Error;
use scope::Scope;

const INSTRUCTIONS: &str = "\
patchgate applies a batch of edits to this repository all or nothing, explains every miss with \
the file's real text, and gates on the project's own formatters and linters. Use `apply_patch` \
for multi-file edits; on a miss, retry with a suggestion's `text` as `old_string`. Use `check` \
before committing, `detect` to see which checkers run.";

pub struct Server {
    scope: Arc<RwLock<Scope>>,
    /// The client's roots must be (re)read before the next call.
    roots_stale: Arc<AtomicBool>,
}

impl Server {
    pub fn new(home: PathBuf) -> Server {
        Server {
            scope: Arc::new(RwLock::new(Scope::new(home))),
            roots_stale: Arc::new(AtomicBool::new(true)),
        }
    }

    /// The scope for a call: the client's roots are asked for once, and again after it says they
    /// changed (only from a client that declared the roots capability). Roots are deprecated in
    /// the newest protocol revision, but the clients agents run in today still declare them.
    #[allow(deprecated)]
    async fn scope(&self, peer: &rmcp::Peer<RoleServer>) -> Scope {
        let supports_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if supports_roots && self.roots_stale.swap(false, Ordering::SeqCst) {
            match peer.list_roots().await {
                Ok(list) => {
                    let roots: Vec<PathBuf> = list
                        .roots
                        .iter()
                        .filter_map(|r| scope::root_path(&r.uri))
                        .collect();
                    if let Ok(mut s) = self.scope.write() {
                        s.roots = roots;
                    }
                }
                Err(e) => {
                    eprintln!("patchgate mcp: roots/list failed ({e}); using the repository only");
                }
            }
        }
        self.scope
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(INSTRUCTIONS);
        info.server_info = Implementation::new("patchgate", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let scope = self.scope(&context.peer).await;
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let tool = name.clone();
        let result = tokio::task::spawn_blocking(move || tools::call(&tool, args, &scope)).await;
        match result {
            Ok(Ok(r)) => Ok(r.into()),
            Ok(Err(tools::UnknownTool)) => Err(ErrorData::invalid_params(
                format!("no tool named `{name}` (tools: apply_patch, check, detect, undo)"),
                None,
            )),
            Err(e) => Err(ErrorData::internal_error(
                format!("internal error, please report: the `{name}` call failed: {e}"),
                None,
            )),
        }
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.roots_stale.store(true, Ordering::SeqCst);
    }
}

/// Serves MCP on stdin/stdout for the repository at `dir` until the client goes away.
pub fn serve(dir: &Path) -> Result<(), Error> {
    let limit = crate::patch::limit::max_bytes()?;
    let repo = crate::repo::Repo::discover(dir)?;
    let home = repo.require_workdir()?.to_path_buf();
    drop(repo);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io("start the async runtime for", &home, e))?;
    let warm = warm::Warm::start();
    let outcome = runtime.block_on(async {
        let running = Server::new(home.clone())
            .serve(transport::Stdio::new(
                tokio::io::stdin(),
                tokio::io::stdout(),
                usize::try_from(limit).unwrap_or(usize::MAX),
            ))
            .await
            .map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())?;
        Ok::<(), String>(())
    });
    drop(warm);
    // Stdin's blocking read may still hold a runtime thread: do not wait for it.
    runtime.shutdown_background();
    outcome.map_err(|message| Error::Usage {
        message: format!("the MCP session ended with an error: {message}"),
        help: "patchgate mcp speaks MCP on stdin/stdout; start it from an MCP client".into(),
    })
}
