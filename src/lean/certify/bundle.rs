//! The comparator bundle: what leanprover's `comparator` replays in the kernel, written under
//! `<root>/.beam/certify/<first 12 hex digits of the text's sha256>/`.
//!
//! Contract: `Challenge.lean` is the file with each locked theorem's body replaced by `sorry`;
//! `Solution.lean` the file as certified; `config.json` the comparator's configuration as its
//! README documents it (`challenge_module`, `solution_module`, `theorem_names`,
//! `permitted_axioms`, `enable_nanoda`); `README.txt` how to run it. The directory is written
//! afresh (files replaced whole) and its path returned.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::checks::PERMITTED;
use crate::lean::error::HostError;
use crate::lean::text::{Position, offset_of};

const README: &str = concat!(
    "Statement-locked certification bundle for leanprover/comparator.\n",
    "\n",
    "lean-beam-mcp certified this file with its own checker; the comparator is a second,\n",
    "independent opinion: it exports the terms and replays them in a fresh kernel.\n",
    "\n",
    "Challenge.lean holds the locked theorems with their proofs replaced by `sorry`;\n",
    "Solution.lean the file as certified; config.json the comparator's configuration.\n",
    "\n",
    "To replay it in the kernel:\n",
    "1. Copy Challenge.lean and Solution.lean into a Lake project with the same dependencies,\n",
    "   and add `[[lean_lib]] name = \"Challenge\"` and `[[lean_lib]] name = \"Solution\"`\n",
    "   to its lakefile.\n",
    "2. Build both: `lake build Challenge Solution`.\n",
    "3. Run `lake env <path to comparator> config.json`, with lean4export on PATH (the\n",
    "   comparator's README recommends a sandbox such as landrun or systemd-run).\n",
);

/// Writes the bundle of `text`, whose sha256 is `sha256`, for `theorems` whose bodies are
/// `bodies`; its directory.
pub fn write(
    root: &Path,
    sha256: &str,
    text: &str,
    theorems: &[String],
    bodies: &[(Position, Position)],
) -> Result<PathBuf, HostError> {
    let dir = root.join(".beam/certify").join(&sha256[..12]);
    let mut challenge = text.to_owned();
    let mut spans: Vec<(usize, usize)> = bodies
        .iter()
        .map(|&(from, to)| (offset_of(text, from), offset_of(text, to)))
        .collect();
    spans.sort();
    for &(from, to) in spans.iter().rev() {
        challenge.replace_range(from..to, "sorry");
    }
    let config = json!({
        "challenge_module": "Challenge",
        "solution_module": "Solution",
        "theorem_names": theorems,
        "permitted_axioms": PERMITTED,
        "enable_nanoda": false,
    });
    let config = serde_json::to_string_pretty(&config).unwrap_or_default() + "\n";
    let failed = |e: std::io::Error| {
        HostError::internal(format!("cannot write the bundle in {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(&dir).map_err(failed)?;
    for (name, content) in [
        ("Challenge.lean", challenge.as_str()),
        ("Solution.lean", text),
        ("config.json", config.as_str()),
        ("README.txt", README),
    ] {
        std::fs::write(dir.join(name), content).map_err(failed)?;
    }
    Ok(dir)
}
