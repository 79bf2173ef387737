//! Records build identity for `beam_version`: source commit, dirtiness, target, profile, rustc.
//! Every value is optional at run time: a build outside a git checkout simply omits the commit.

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(commit) = git(&["rev-parse", "HEAD"]).filter(|c| !c.is_empty()) {
        println!("cargo:rustc-env=LEAN_BEAM_MCP_SOURCE_COMMIT={commit}");
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        println!("cargo:rustc-env=LEAN_BEAM_MCP_SOURCE_DIRTY={dirty}");
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if let Some(version) = Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
    {
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        println!("cargo:rustc-env=LEAN_BEAM_MCP_RUSTC={version}");
    }
    println!(
        "cargo:rustc-env=LEAN_BEAM_MCP_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    println!(
        "cargo:rustc-env=LEAN_BEAM_MCP_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_default()
    );
    for path in [".git/HEAD", ".git/index", ".git/refs"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
