//! `lean-beam-mcp config <client>`: the configuration that registers this binary with an MCP
//! client, in the client's own format, as its documentation gives it.
//!
//! Contract:
//! 1. The snippet names the binary by its absolute path (the one running now, symlinks
//!    resolved) and registers it as the stdio server `lean-beam`, with the server flags given
//!    after `--` (checked first, so a typo fails here, not in the client) as its arguments.
//! 2. Only the snippet goes to stdout, so it can be redirected into a file; where to put it, and
//!    the one-command alternative where a client has one, go to stderr.
//! 3. Formats (each client's documentation, consulted 2026-12): Claude Code's `.mcp.json`
//!    (`mcpServers`, `type: "stdio"`); Codex's `config.toml` (`[mcp_servers.<name>]`, plus
//!    `supports_parallel_tool_calls = true`, without which Codex serializes MCP calls, and a
//!    `tool_timeout_sec` as long as the server's Lean timeout, since a first sync may build
//!    dependencies and Codex's default is 60 s); VS Code's `.vscode/mcp.json` (`servers`,
//!    `type: "stdio"`); Cursor's `mcp.json` and the generic form (`mcpServers`, `command`,
//!    `args`).

use std::path::Path;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use super::args::{Cli, Client};
use crate::lean::DEFAULT_LEAN_TIMEOUT;

/// The name the server is registered under.
pub const SERVER_NAME: &str = "lean-beam";

/// What `config` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The configuration: stdout.
    pub text: String,
    /// Where to put it: stderr.
    pub guide: String,
}

/// Checks `flags` as the flags of a server (not of a self-check or another `config`); the Lean
/// timeout the configured server will have, in milliseconds (this shell's environment, which the
/// client's may not share, aside).
pub fn check_flags(flags: &[String]) -> Result<u64, clap::Error> {
    let argv = std::iter::once("lean-beam-mcp".to_owned()).chain(flags.iter().cloned());
    let matches = Cli::command().try_get_matches_from(argv)?;
    let cli = Cli::from_arg_matches(&matches)?;
    if cli.command.is_some() || cli.self_check.is_some() {
        return Err(Cli::command().error(
            clap::error::ErrorKind::ArgumentConflict,
            "a configured server serves: give it server flags only",
        ));
    }
    // The client starts the server in a working directory of its own choosing.
    // (This shell's environment is not the client's: only what is written here is checked.)
    let written = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    let trace_dir_relative = cli
        .server
        .trace_dir
        .as_deref()
        .is_some_and(Path::is_relative);
    let lake_relative = cli.server.lake.is_relative() && cli.server.lake.components().count() > 1;
    if (written("trace_dir") && trace_dir_relative) || (written("lake") && lake_relative) {
        return Err(Cli::command().error(
            clap::error::ErrorKind::ValueValidation,
            "give --lake and --trace-dir as absolute paths: the client starts the server in a \
             working directory of its own, where a relative path would name something else",
        ));
    }
    Ok(
        if matches.value_source("lean_timeout_ms") == Some(ValueSource::CommandLine) {
            cli.server.lean_timeout_ms
        } else {
            DEFAULT_LEAN_TIMEOUT.as_millis() as u64
        },
    )
}

/// The snippet for `client`, running `binary` with `flags` (already checked), whose Lean
/// timeout is `lean_timeout_ms`.
pub fn render(client: Client, binary: &Path, flags: &[String], lean_timeout_ms: u64) -> Snippet {
    let command = json_string(&binary.display().to_string());
    let args = format!(
        "[{}]",
        flags
            .iter()
            .map(|f| json_string(f))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let check = format!(
        "Check the set-up first with `{} --self-check <a .lean file of your project>`; then ask \
         the agent to call lean_sync on a file, with workspace {{\"root\": \"/absolute/project\"}}.",
        shell_word(&binary.display().to_string())
    );
    let (text, guide) = match client {
        Client::Claude => (
            json_servers("mcpServers", &command, &args, true),
            format!(
                "Claude Code: save this as .mcp.json at the root of your project (or add its \
                 \"{SERVER_NAME}\" entry to the mcpServers of the one there), or register the \
                 server for all your projects with one command:\n  claude mcp add --scope user \
                 {SERVER_NAME} -- {}\nThen start claude in the project: /mcp lists {SERVER_NAME}.",
                shell_command(binary, flags)
            ),
        ),
        Client::Codex => {
            let seconds = lean_timeout_ms.div_ceil(1000);
            let text = format!(
                "[mcp_servers.{SERVER_NAME}]\n\
                 command = {command}\n\
                 args = {args}\n\
                 # The server orders what must be ordered (dropping a workspace waits for the calls\n\
                 # before it), so Codex may run its calls in parallel (it serializes them otherwise).\n\
                 supports_parallel_tool_calls = true\n\
                 # A first lean_sync may build the project's imports: wait as long as the server\n\
                 # waits for Lean (--lean-timeout-ms), not Codex's default 60 seconds.\n\
                 tool_timeout_sec = {seconds}\n"
            );
            let guide = format!(
                "Codex: add this to ~/.codex/config.toml (or to .codex/config.toml in a trusted \
                 project). `codex mcp add {SERVER_NAME} -- {}` writes only its first lines: the \
                 last two let Codex run Lean calls in parallel and wait for long ones.",
                shell_command(binary, flags)
            );
            (text, guide)
        }
        Client::Vscode => (
            json_servers("servers", &command, &args, true),
            format!(
                "VS Code: save this as .vscode/mcp.json in your workspace (or add its \
                 \"{SERVER_NAME}\" entry to the servers of the one there); for every workspace, \
                 run `MCP: Open User Configuration` and add it there."
            ),
        ),
        Client::Cursor => (
            json_servers("mcpServers", &command, &args, false),
            format!(
                "Cursor: save this as .cursor/mcp.json in your project, or as ~/.cursor/mcp.json \
                 for every project (or add its \"{SERVER_NAME}\" entry to the mcpServers of the \
                 one there)."
            ),
        ),
        Client::Json => (
            json_servers("mcpServers", &command, &args, false),
            format!(
                "Any stdio MCP client that reads an mcpServers file: add the \"{SERVER_NAME}\" \
                 entry to its configuration."
            ),
        ),
    };
    Snippet {
        text,
        guide: format!("{guide}\n{check}"),
    }
}

/// `{"<key>": {"lean-beam": {["type": "stdio",] "command": …, "args": […]}}}`, in the order
/// the clients' documentation writes it.
fn json_servers(key: &str, command: &str, args: &str, typed: bool) -> String {
    let kind = if typed {
        "      \"type\": \"stdio\",\n"
    } else {
        ""
    };
    format!(
        "{{\n  \"{key}\": {{\n    \"{SERVER_NAME}\": {{\n{kind}      \"command\": {command},\n      \
         \"args\": {args}\n    }}\n  }}\n}}\n"
    )
}

/// A JSON string literal, which is also a TOML basic string.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("serializing a string cannot fail")
}

/// `binary flags…` as one shell command line.
fn shell_command(binary: &Path, flags: &[String]) -> String {
    std::iter::once(binary.display().to_string())
        .chain(flags.iter().cloned())
        .map(|word| shell_word(&word))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A word a POSIX shell reads back as itself.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:,+@%-".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_paths_stay_one_word_and_one_string() {
        assert_eq!(shell_word("/opt/lean beam/bin"), "'/opt/lean beam/bin'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("--trace-dir=/tmp/x"), "--trace-dir=/tmp/x");
        assert_eq!(json_string("a\"b\\c"), r#""a\"b\\c""#);
    }

    #[test]
    fn server_flags_are_checked_and_set_the_codex_timeout() {
        assert_eq!(check_flags(&[]).unwrap(), 1_800_000);
        let flags = ["--lean-timeout-ms".to_owned(), "90500".to_owned()];
        assert_eq!(check_flags(&flags).unwrap(), 90_500);
        let snippet = render(Client::Codex, Path::new("/b/lean-beam-mcp"), &flags, 90_500);
        assert!(
            snippet.text.contains("tool_timeout_sec = 91\n"),
            "{}",
            snippet.text
        );
        assert!(check_flags(&["--no-such-flag".to_owned()]).is_err());
        assert!(check_flags(&["--self-check".to_owned(), "A.lean".to_owned()]).is_err());
        for relative in [["--trace-dir", "traces"], ["--lake", "./bin/lake"]] {
            let flags = relative.map(str::to_owned);
            let error = check_flags(&flags).unwrap_err().to_string();
            assert!(error.contains("absolute paths"), "{error}");
        }
        let absolute = ["--trace-dir", "/tmp/traces", "--lake", "lake"].map(str::to_owned);
        assert!(check_flags(&absolute).is_ok());
    }
}
