//! What the server keeps running between tool calls, and when it lets go of it.
//!
//! The expensive part of a call on a JS/TS project is starting node and loading eslint and
//! prettier with the project's configuration (most of a second; the rest of a call is tens of
//! milliseconds). While a [`Warm`] guard lives, the node bridge stays up between calls
//! ([`crate::checks::exec::node_host`]): one host per tool and project, restarted when a file that
//! configures it changes (config files, `package.json`, ignore files, `.editorconfig`, the
//! tool's version in `node_modules`, the lockfiles). Other languages' tools are native and start
//! in milliseconds; their warm state is on disk, shared with the command line (the project
//! mirror, Go's build cache, clippy's target directory) plus one process-wide memo keyed by
//! content (`checks::exec::package::cargo_package`: no `cargo metadata` while no manifest
//! changed). Everything else a call reads (the repository, `.patchgate.toml`, the evidence of
//! which checkers a project uses) is re-read on every call: it costs milliseconds, and reading
//! it fresh can never be stale.
//!
//! Dropping the guard stops the hosts (their process groups are killed). If the server dies
//! without dropping it, each host sees its stdin close and exits by itself.

use crate::checks::exec::node_host;

pub struct Warm(());

impl Warm {
    /// Keeps node hosts warm until the guard is dropped.
    pub fn start() -> Warm {
        node_host::set_warm(true);
        Warm(())
    }
}

impl Drop for Warm {
    fn drop(&mut self) {
        node_host::set_warm(false);
    }
}
