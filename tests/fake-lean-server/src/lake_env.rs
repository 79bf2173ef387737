//! `fake-lake env [cmd args…]`: the Lake environment of the workspace (reference LLS:72, and
//! Lake's `env` command in `Lake/CLI/Main.lean`). Without a command it prints one `VAR=value`
//! line per variable; with one it runs the command with those variables set and exits with its
//! status. The variables: `LAKE` (this executable), `LEAN_PATH` (the package's library
//! directory `./.lake/build/lib/lean`, where `build` writes `.olean`s) and `LEAN_SRC_PATH` (each
//! library's source directory, `./<srcDir>`, as `Workspace.leanSrcPath` lists them); without a
//! configuration only `LAKE`. Relative paths, like a root package loaded from `.`. Each run is
//! recorded in the trace as `{"event": "lake-env"}`. The command `lean` is the fake's own
//! (`lean_run.rs`: the certification checker under `lean --run`).

use crate::lakefile;
use crate::trace::Trace;
use serde_json::json;
use std::path::PathBuf;

/// The variables, in the order they are printed.
pub fn variables(root: &std::path::Path) -> Vec<(String, String)> {
    let lake = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut vars = vec![("LAKE".to_owned(), lake)];
    if lakefile::exists(root) {
        let src: Vec<String> = lakefile::libraries(root)
            .iter()
            .map(|l| format!("./{}", l.src_dir))
            .collect();
        vars.push(("LEAN_PATH".into(), "./.lake/build/lib/lean".into()));
        vars.push(("LEAN_SRC_PATH".into(), src.join(":")));
    }
    vars
}

pub fn env_main(args: &[String]) -> i32 {
    let root = std::env::current_dir().unwrap_or_default();
    let trace_path = std::env::var_os("FAKE_LEAN_TRACE").map(PathBuf::from);
    Trace::open(trace_path.as_deref()).event("lake-env", json!({"args": args}));
    let vars = variables(&root);
    let Some((cmd, rest)) = args.split_first() else {
        for (k, v) in &vars {
            println!("{k}={v}");
        }
        return 0;
    };
    if cmd == "lean" {
        // The toolchain's `lean` on Lake's path: the fake plays it (`lean_run.rs`).
        return crate::lean_run::lean_main(rest);
    }
    match std::process::Command::new(cmd)
        .args(rest)
        .envs(vars)
        .status()
    {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("error: failed to execute '{cmd}': {e}");
            1
        }
    }
}
