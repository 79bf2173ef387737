//! Where each client keeps its configuration, and replacing such a file safely.
//!
//! Contract: `locate` names the file a client reads for a scope, from the same environment the
//! client consults (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`, `XDG_CONFIG_HOME`, `HOME`); `replace` writes
//! a file's new text atomically (a temporary file beside it, then a rename, so a reader sees the
//! old text or the new, never half), through a symbolic link to the file it names, keeping the
//! old file's permissions and its text as `<file>.bak`; when the text would not change it writes
//! nothing at all.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::super::args::{Client, Scope};

/// The file `client` reads for `scope`; `env` reads an environment variable and `cwd` is the
/// project's directory.
pub fn locate(
    client: Client,
    scope: Scope,
    env: impl Fn(&str) -> Option<PathBuf>,
    cwd: &Path,
) -> Result<PathBuf, String> {
    let home = || env("HOME").ok_or("HOME is not set, so the user's configuration cannot be found");
    let path = match (client, scope) {
        (Client::Claude, Scope::Project) => cwd.join(".mcp.json"),
        (Client::Claude, Scope::User) => match env("CLAUDE_CONFIG_DIR") {
            Some(dir) => dir.join(".claude.json"),
            None => home()?.join(".claude.json"),
        },
        (Client::Codex, Scope::Project) => cwd.join(".codex").join("config.toml"),
        (Client::Codex, Scope::User) => match env("CODEX_HOME") {
            Some(dir) => dir.join("config.toml"),
            None => home()?.join(".codex").join("config.toml"),
        },
        (Client::Vscode, Scope::Project) => cwd.join(".vscode").join("mcp.json"),
        (Client::Vscode, Scope::User) => {
            let base = if cfg!(target_os = "macos") {
                home()?.join("Library").join("Application Support")
            } else {
                env("XDG_CONFIG_HOME").map_or_else(|| home().map(|h| h.join(".config")), Ok)?
            };
            base.join("Code").join("User").join("mcp.json")
        }
        (Client::Cursor, Scope::Project) => cwd.join(".cursor").join("mcp.json"),
        (Client::Cursor, Scope::User) => home()?.join(".cursor").join("mcp.json"),
        (Client::Json, _) => {
            return Err(
                "`json` names no client's file: print it (without --write) and add \
                        the entry to your client's configuration by hand"
                    .to_owned(),
            );
        }
    };
    Ok(path)
}

/// What `replace` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Replaced {
    /// The file held this text already.
    Unchanged,
    /// The file did not exist; it does now.
    Created,
    /// The old text is at this path.
    BackedUp(PathBuf),
}

/// Replaces the text of `path` with `merge(old text)` (the old text is empty when there is no
/// file). An error from `merge` leaves everything as it was.
pub fn replace(
    path: &Path,
    merge: impl FnOnce(&str) -> Result<String, String>,
) -> Result<(PathBuf, Replaced), String> {
    // A linked configuration (a dotfiles checkout) stays linked: the file it names is replaced.
    let path = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(_) => path.to_path_buf(),
    };
    let shown = path.display();
    let old = match std::fs::read(&path) {
        Ok(bytes) => Some(
            String::from_utf8(bytes)
                .map_err(|_| format!("{shown} is not UTF-8 text; left as is"))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let new = merge(old.as_deref().unwrap_or(""))
        .map_err(|reason| format!("{shown} was left unchanged: {reason}"))?;
    if old.as_deref() == Some(new.as_str()) {
        return Ok((path, Replaced::Unchanged));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let replaced = match &old {
        None => Replaced::Created,
        Some(old) => {
            let backup = dir.join(format!("{name}.bak"));
            std::fs::write(&backup, old)
                .map_err(|e| format!("cannot write the backup {}: {e}", backup.display()))?;
            Replaced::BackedUp(backup)
        }
    };
    let temporary = dir.join(format!(".{name}.lean-beam-{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(new.as_bytes())?;
        if let Ok(meta) = std::fs::metadata(&path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&temporary, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(format!("cannot write {shown}: {e}; it was left unchanged"));
    }
    Ok((path, replaced))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_names_its_own_file() {
        let env = |name: &str| match name {
            "HOME" => Some(PathBuf::from("/home/u")),
            "CODEX_HOME" => Some(PathBuf::from("/c")),
            _ => None,
        };
        let cwd = Path::new("/p");
        let at = |client, scope| locate(client, scope, env, cwd).unwrap();
        for (client, scope, file) in [
            (Client::Codex, Scope::User, "/c/config.toml"),
            (Client::Codex, Scope::Project, "/p/.codex/config.toml"),
            (Client::Claude, Scope::User, "/home/u/.claude.json"),
            (Client::Claude, Scope::Project, "/p/.mcp.json"),
            (Client::Cursor, Scope::User, "/home/u/.cursor/mcp.json"),
            (Client::Vscode, Scope::Project, "/p/.vscode/mcp.json"),
        ] {
            assert_eq!(at(client, scope), Path::new(file), "{client:?} {scope:?}");
        }
        assert!(locate(Client::Json, Scope::User, env, cwd).is_err());
    }
}
