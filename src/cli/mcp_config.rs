//! `patchgate mcp --print-config CLIENT`: the snippet that registers patchgate as an MCP server in
//! one agent client, printed to stdout (docs/mcp.md shows the same snippets). Invariant: the
//! snippet is built by a serializer (JSON, TOML) or shell-quoted, so a path with quotes or spaces
//! still yields a valid file or command; nothing is read or written besides stdout.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde::Serialize;

use crate::error::Error;

/// The agent clients whose configuration format is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Client {
    /// `claude mcp add` command line
    ClaudeCode,
    /// claude_desktop_config.json `mcpServers`
    ClaudeDesktop,
    /// .cursor/mcp.json `mcpServers`
    Cursor,
    /// ~/.codex/config.toml `[mcp_servers]`
    Codex,
    /// .gemini/settings.json `mcpServers`
    Gemini,
    /// .vscode/mcp.json `servers`
    Vscode,
}

/// How the client starts patchgate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Via {
    /// `uvx patchgate mcp` (the PyPI wheel; needs uv)
    Uvx,
    /// `npx -y patchgate mcp` (the npm package; needs Node.js)
    Npx,
    /// this binary's absolute path (cargo install, the static binary)
    Path,
}

#[derive(Debug, clap::Args)]
pub(super) struct PrintConfigArgs {
    /// Print the snippet that registers this server in CLIENT's configuration, then exit.
    #[arg(long, value_name = "CLIENT")]
    print_config: Option<Client>,
    /// With --print-config: how the client starts patchgate.
    #[arg(
        long,
        value_name = "HOW",
        default_value = "uvx",
        requires = "print_config"
    )]
    via: Via,
}

/// The snippet when `--print-config` was given, else `None` (serve as usual). `dir` is `-C`'s
/// value: it goes into the snippet as an absolute path.
pub(super) fn snippet(a: &PrintConfigArgs, dir: Option<&Path>) -> Option<Result<String, Error>> {
    let client = a.print_config?;
    Some(build(client, a.via, dir))
}

fn build(client: Client, via: Via, dir: Option<&Path>) -> Result<String, Error> {
    let (command, mut args) = launcher(via)?;
    args.push("mcp".into());
    if let Some(d) = server_dir(client, dir)? {
        args.extend(["-C".into(), d]);
    }
    Ok(match client {
        Client::ClaudeCode => {
            let words: Vec<String> = std::iter::once(command).chain(args).collect();
            let quoted: Vec<String> = words.iter().map(String::as_str).map(shell_quote).collect();
            format!("claude mcp add patchgate -- {}\n", quoted.join(" "))
        }
        Client::ClaudeDesktop | Client::Cursor | Client::Gemini => pretty(&Servers {
            mcp_servers: Some(Named {
                patchgate: Server {
                    kind: None,
                    command,
                    args,
                },
            }),
            servers: None,
        }),
        Client::Vscode => pretty(&Servers {
            mcp_servers: None,
            servers: Some(Named {
                patchgate: Server {
                    kind: Some("stdio"),
                    command,
                    args,
                },
            }),
        }),
        Client::Codex => {
            let list: Vec<String> = args.iter().map(String::as_str).map(toml_string).collect();
            format!(
                "[mcp_servers.patchgate]\ncommand = {}\nargs = [{}]\n",
                toml_string(&command),
                list.join(", ")
            )
        }
    })
}

fn launcher(via: Via) -> Result<(String, Vec<String>), Error> {
    Ok(match via {
        Via::Uvx => ("uvx".into(), vec!["patchgate".into()]),
        Via::Npx => ("npx".into(), vec!["-y".into(), "patchgate".into()]),
        Via::Path => {
            let exe = std::env::current_exe().map_err(|e| Error::Usage {
                message: format!("cannot tell where this patchgate binary is: {e}"),
                help: "use --via uvx or --via npx, or write the binary's path by hand".into(),
            })?;
            (utf8(&exe)?, Vec::new())
        }
    })
}

/// The repository the snippet names. Claude Desktop starts its servers outside any project, so
/// it always gets one (the current directory's when `-C` is absent); Cursor and VS Code expand
/// `${workspaceFolder}`; the others start the server in the project directory.
fn server_dir(client: Client, dir: Option<&Path>) -> Result<Option<String>, Error> {
    if let Some(d) = dir {
        return Ok(Some(utf8(&absolute(d)?)?));
    }
    Ok(match client {
        Client::ClaudeDesktop => Some(utf8(&absolute(Path::new("."))?)?),
        Client::Cursor | Client::Vscode => Some("${workspaceFolder}".into()),
        Client::ClaudeCode | Client::Codex | Client::Gemini => None,
    })
}

fn absolute(d: &Path) -> Result<PathBuf, Error> {
    std::path::absolute(d)
        .map(|p| {
            // `-C .` means the current directory itself, not a path ending in `/.`.
            p.components().collect()
        })
        .map_err(|e| Error::Usage {
            message: format!("cannot make {} absolute: {e}", d.display()),
            help: "pass -C with an absolute path".into(),
        })
}

fn utf8(p: &Path) -> Result<String, Error> {
    p.to_str().map(str::to_owned).ok_or_else(|| Error::Usage {
        message: format!("{} is not valid UTF-8", p.display()),
        help: "a configuration file can only name a UTF-8 path; pass -C with one".into(),
    })
}

/// The JSON clients' shape: `{"mcpServers": {"patchgate": {...}}}` (VS Code: `"servers"`), keys
/// in the order the clients' documentation shows them.
#[derive(Serialize)]
struct Servers {
    #[serde(rename = "mcpServers", skip_serializing_if = "Option::is_none")]
    mcp_servers: Option<Named>,
    #[serde(skip_serializing_if = "Option::is_none")]
    servers: Option<Named>,
}

#[derive(Serialize)]
struct Named {
    patchgate: Server,
}

#[derive(Serialize)]
struct Server {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    command: String,
    args: Vec<String>,
}

fn pretty(v: &Servers) -> String {
    // Serializing strings into JSON cannot fail.
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// POSIX shell quoting: plain words stay bare, anything else goes in single quotes.
fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
    if plain {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_keeps_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("uvx"), "uvx");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn codex_snippet_is_valid_toml_with_the_command() {
        let s = build(Client::Codex, Via::Npx, Some(Path::new("/r \"q\""))).unwrap();
        let v: toml::Table = toml::from_str(&s).unwrap();
        let server = &v["mcp_servers"]["patchgate"];
        assert_eq!(server["command"].as_str(), Some("npx"));
        let args: Vec<&str> = server["args"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a.as_str())
            .collect();
        assert_eq!(args, ["-y", "patchgate", "mcp", "-C", "/r \"q\""]);
    }
}
