//! `lean-beam-mcp config <client>`: the configuration that registers this binary with an MCP
//! client, in the client's own format, as its documentation gives it; printed, or merged into the
//! client's own file (`--write`).
//!
//! Contract:
//! 1. The entry registers the stdio server `lean-beam`, with the server flags given after `--`
//!    (checked first, so a typo fails here, not in the client) as its arguments. User scope names
//!    the binary by its absolute path (the one running now, symlinks resolved); project scope, a
//!    file shared with whoever shares the project, names the command `lean-beam-mcp`, found on
//!    each user's PATH.
//! 2. Codex passes an MCP server only a fixed set of environment variables, so for Codex the
//!    `LEAN_BEAM_*` settings of this shell are written as the flags they stand for. Claude Code,
//!    Codex and Cursor do not show the model log notifications, so their entries carry
//!    `--diagnostics-in-result --diagnostic-scope all` (unless the user's flags set these).
//! 3. Printed, only the configuration goes to stdout, so it can be redirected; the client's own
//!    registration command where it has one (first), where the file is and what to do next go
//!    to stderr. With `--write` the entry is merged into the file (`merge`, `file`).
//! 4. Formats (each client's documentation, consulted 2026-12): Claude Code's `.mcp.json` and
//!    `~/.claude.json` (`mcpServers`, `type: "stdio"`); Codex's `config.toml`
//!    (`[mcp_servers.<name>]`, plus `supports_parallel_tool_calls = true`, without which Codex
//!    serializes MCP calls, and a `tool_timeout_sec` as long as the server's Lean timeout, since a
//!    first sync may build dependencies and Codex's default is 60 s); VS Code's `mcp.json`
//!    (`servers`, `type: "stdio"`); Cursor's `mcp.json` and the generic form (`mcpServers`,
//!    `command`, `args`).

mod file;
mod merge;

use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use super::args::{Cli, Client, Scope};
use crate::lean::DEFAULT_LEAN_TIMEOUT;
pub use file::{Replaced, locate, replace};
use merge::{json_string, merge_json, merge_toml};

/// The name the server is registered under.
pub const SERVER_NAME: &str = "lean-beam";

/// The command a project's shared configuration names: the binary as found on PATH.
pub const COMMAND_ON_PATH: &str = "lean-beam-mcp";

/// What `config` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The configuration: stdout, or what `--write` merges into the client's file.
    pub text: String,
    /// Where to put it: stderr.
    pub guide: String,
}

/// One registration: for whom, where, and the server's command line.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The client whose configuration it is.
    pub client: Client,
    /// Whose configuration.
    pub scope: Scope,
    /// This binary, by its absolute path.
    pub binary: PathBuf,
    /// The server flags (already checked).
    pub flags: Vec<String>,
    /// The configured server's Lean timeout, in milliseconds.
    pub lean_timeout_ms: u64,
}

impl Registration {
    /// The command the client runs.
    fn command(&self) -> String {
        match self.scope {
            Scope::User => self.binary.display().to_string(),
            Scope::Project => COMMAND_ON_PATH.to_owned(),
        }
    }

    /// The servers key of a JSON client's file, and whether its entries carry `type`.
    fn json_key(&self) -> Option<(&'static str, bool)> {
        match self.client {
            Client::Claude => Some(("mcpServers", true)),
            Client::Vscode => Some(("servers", true)),
            Client::Cursor | Client::Json => Some(("mcpServers", false)),
            Client::Codex => None,
        }
    }

    /// The entry of a JSON client, field by field (name, JSON text).
    fn json_entry(&self, typed: bool) -> Vec<(&'static str, String)> {
        let args = self
            .flags
            .iter()
            .map(|f| json_string(f))
            .collect::<Vec<_>>();
        let mut entry = Vec::with_capacity(3);
        if typed {
            entry.push(("type", json_string("stdio")));
        }
        entry.push(("command", json_string(&self.command())));
        entry.push(("args", format!("[{}]", args.join(", "))));
        entry
    }

    /// `old` (the text of the client's file) with our entry merged in.
    pub fn merge(&self, old: &str) -> Result<String, String> {
        match self.json_key() {
            Some((key, typed)) => merge_json(old, key, &self.json_entry(typed)),
            None => merge_toml(old, &self.codex_table()),
        }
    }

    /// Codex's `[mcp_servers.lean-beam]` table.
    fn codex_table(&self) -> String {
        let command = json_string(&self.command());
        let args = self
            .flags
            .iter()
            .map(|f| json_string(f))
            .collect::<Vec<_>>();
        let seconds = self.lean_timeout_ms.div_ceil(1000);
        format!(
            "[mcp_servers.{SERVER_NAME}]\n\
             command = {command}\n\
             args = [{}]\n\
             # The server orders what must be ordered (dropping a workspace waits for the calls\n\
             # before it), so Codex may run its calls in parallel (it serializes them otherwise).\n\
             supports_parallel_tool_calls = true\n\
             # A first lean_sync may build the project's imports: wait as long as the server\n\
             # waits for Lean (--lean-timeout-ms), not Codex's default 60 seconds.\n\
             tool_timeout_sec = {seconds}\n",
            args.join(", ")
        )
    }
}

/// The flags a client needs whatever the user gives: Claude Code, Codex and Cursor do not show
/// the model log notifications, so their servers return diagnostics in results, every
/// severity, unless `given` already says otherwise.
pub fn client_flags(client: Client, given: &[String]) -> Vec<String> {
    if !matches!(client, Client::Claude | Client::Codex | Client::Cursor) {
        return Vec::new();
    }
    let gives = |flag: &str| {
        given
            .iter()
            .any(|g| g == flag || g.starts_with(&format!("{flag}=")))
    };
    let mut flags = Vec::new();
    if !gives("--diagnostics-in-result") {
        flags.push("--diagnostics-in-result".to_owned());
    }
    if !gives("--diagnostic-scope") {
        flags.extend(["--diagnostic-scope".to_owned(), "all".to_owned()]);
    }
    flags
}

/// The flags `LEAN_BEAM_*` variables of this environment (read by `env`) stand for, for the
/// server flags that `given` does not set already: what Codex, which does not pass them on,
/// needs written as flags. Test-only settings stay out.
pub fn flags_from_env(
    given: &[String],
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<String> {
    let mut flags = Vec::new();
    for arg in Cli::command().get_arguments() {
        let (Some(name), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let name = name.to_string_lossy();
        if !name.starts_with("LEAN_BEAM_") || name.contains("_TEST_") {
            continue;
        }
        let flag = format!("--{long}");
        let set = given
            .iter()
            .any(|g| *g == flag || g.starts_with(&format!("{flag}=")));
        if let (false, Some(value)) = (set, env(&name)) {
            flags.push(flag);
            flags.push(value.to_string_lossy().into_owned());
        }
    }
    flags
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
    if let Err(e) = crate::lean::tools::served(cli.server.tool_selection()) {
        return Err(Cli::command().error(clap::error::ErrorKind::ValueValidation, e));
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

/// What `config` prints for `registration`.
pub fn render(registration: &Registration) -> Snippet {
    let r = registration;
    let text = r.merge("").expect("an empty file takes the entry");
    let command_line = shell_command(&r.command(), &r.flags);
    let scope = match r.scope {
        Scope::User => "user",
        Scope::Project => "project",
    };
    let write = format!(
        "or let lean-beam-mcp merge it into the file (keeping everything else, the old file as \
         <file>.bak): lean-beam-mcp config {} --write --scope {scope}{}",
        client_name(r.client),
        if r.flags.is_empty() {
            String::new()
        } else {
            format!(" -- {}", shell_command_words(&r.flags))
        }
    );
    let guide = match (r.client, r.scope) {
        (Client::Claude, _) => format!(
            "Claude Code registers it with its own command:\n  claude mcp add --scope {scope} \
             {SERVER_NAME} -- {command_line}\n(if {SERVER_NAME} is registered already, `claude mcp \
             remove --scope {scope} {SERVER_NAME}` first); {write}. Or save this as {}.{}\nThen \
             start claude in the project: /mcp lists {SERVER_NAME}.",
            if r.scope == Scope::Project {
                ".mcp.json at the root of your project"
            } else {
                "the mcpServers entry of ~/.claude.json"
            },
            if r.scope == Scope::Project {
                " Claude Code asks each user to approve a project's server on first use."
            } else {
                ""
            }
        ),
        (Client::Codex, _) => format!(
            "Codex registers it with its own command:\n  codex mcp add {SERVER_NAME} -- \
             {command_line}\nbut that writes only the first lines: the last two let Codex run Lean \
             calls in parallel and wait for long ones, so prefer: {write}. Or add this to {}.",
            if r.scope == Scope::Project {
                ".codex/config.toml in a trusted project"
            } else {
                "~/.codex/config.toml"
            }
        ),
        (Client::Vscode, _) => format!(
            "VS Code: {write}. Or save this as .vscode/mcp.json in your workspace (or add its \
             \"{SERVER_NAME}\" entry to the servers of the one there); for every workspace, run \
             `MCP: Open User Configuration` and add it there."
        ),
        (Client::Cursor, _) => format!(
            "Cursor: {write}. Or save this as .cursor/mcp.json in your project, or as \
             ~/.cursor/mcp.json for every project (or add its \"{SERVER_NAME}\" entry to the \
             mcpServers of the one there)."
        ),
        (Client::Json, _) => format!(
            "Any stdio MCP client that reads an mcpServers file: add the \"{SERVER_NAME}\" entry \
             to its configuration."
        ),
    };
    let check = format!(
        "Check the set-up first with `{} --self-check <a .lean file of your project>`; then ask \
         the agent to call lean_sync on a file, with workspace {{\"root\": \"/absolute/project\"}}.",
        shell_word(&r.binary.display().to_string())
    );
    Snippet {
        text,
        guide: format!("{guide}\n{check}"),
    }
}

/// The client's name on the command line.
fn client_name(client: Client) -> &'static str {
    match client {
        Client::Claude => "claude",
        Client::Codex => "codex",
        Client::Vscode => "vscode",
        Client::Cursor => "cursor",
        Client::Json => "json",
    }
}

/// `command flags…` as one shell command line.
fn shell_command(command: &str, flags: &[String]) -> String {
    std::iter::once(shell_word(command))
        .chain(std::iter::once(shell_command_words(flags)).filter(|w| !w.is_empty()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words as one shell command line's words.
fn shell_command_words(words: &[String]) -> String {
    words
        .iter()
        .map(|word| shell_word(word))
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
        let snippet = render(&Registration {
            client: Client::Codex,
            scope: Scope::User,
            binary: PathBuf::from("/b/lean-beam-mcp"),
            flags: flags.to_vec(),
            lean_timeout_ms: 90_500,
        });
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

    #[test]
    fn project_scope_names_the_command_on_path_and_codex_gets_env_as_flags() {
        let registration = Registration {
            client: Client::Claude,
            scope: Scope::Project,
            binary: PathBuf::from("/home/u/.cargo/bin/lean-beam-mcp"),
            flags: vec![],
            lean_timeout_ms: 1000,
        };
        let snippet = render(&registration);
        assert!(
            snippet.text.contains("\"command\": \"lean-beam-mcp\""),
            "{}",
            snippet.text
        );
        assert!(
            snippet.guide.starts_with(
                "Claude Code registers it with its own command:\n  claude mcp add --scope \
                 project lean-beam -- lean-beam-mcp\n"
            ),
            "{}",
            snippet.guide
        );
        let env = |name: &str| match name {
            "LEAN_BEAM_LAKE" => Some("/opt/lake".into()),
            "LEAN_BEAM_TRACE_DIR" => Some("/t".into()),
            "LEAN_BEAM_MCP_TEST_STATUS_DELAY_MS" => Some("1".into()),
            _ => None,
        };
        let given = ["--trace-dir".to_owned(), "/given".to_owned()];
        assert_eq!(flags_from_env(&given, env), ["--lake", "/opt/lake"]);
    }
}
