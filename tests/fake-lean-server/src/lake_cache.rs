//! Lake's artifact cache as `fake-lake build` and `query` play it (`FAKE_LAKE_ARTIFACT_CACHE`,
//! README "Lake's artifact cache"), and the `.trace` file that records each module's build.
//!
//! With the cache on, a module whose trace does not hold its current input hash is *fetched*,
//! as if the cache already held its outputs (a `lake cache get`, another checkout): its
//! artifacts go to `<cache>/artifacts/<hash>.<ext>`, its outputs in the build directory are
//! cleared (`clearOutputArtifacts`), a synthetic trace is written (`writeFetchTrace`), and only
//! the `.ilean` is copied back into `.lake/build/lib/lean` (`restoreArtifacts`), or every
//! artifact under `restore-all` (`restoreAllArtifacts`). A module whose trace holds its input
//! hash is left as it is. The job line says `Fetched`.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// How the cache restores a fetched module (`FAKE_LAKE_ARTIFACT_CACHE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// Only the `.ilean` is copied into the build directory (Lake's default).
    Fetch,
    /// Every artifact is copied into the build directory (`restoreAllArtifacts = true`).
    RestoreAll,
}

impl Cache {
    /// The mode `FAKE_LAKE_ARTIFACT_CACHE` selects (off when unset).
    pub fn from_env() -> Option<Cache> {
        match std::env::var("FAKE_LAKE_ARTIFACT_CACHE").ok()?.as_str() {
            "fetch" => Some(Cache::Fetch),
            "restore-all" => Some(Cache::RestoreAll),
            _ => None,
        }
    }
}

/// The cache directory, by Lake's rules (`Config/Env.lean`): `LAKE_CACHE_DIR` when set (when
/// set empty, the workspace's `.lake/cache`); else `$XDG_CACHE_HOME/lake`, else
/// `~/.cache/lake`; else the workspace's `.lake/cache`. (Lake first tries the toolchain's own
/// `lake/cache`; the fake has no toolchain.)
pub fn dir(root: &Path) -> PathBuf {
    let local = root.join(".lake/cache");
    if let Some(dir) = std::env::var_os("LAKE_CACHE_DIR") {
        return if dir.is_empty() {
            local
        } else {
            PathBuf::from(dir)
        };
    }
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(xdg) = set("XDG_CACHE_HOME") {
        return PathBuf::from(xdg).join("lake");
    }
    match set("HOME") {
        Some(home) => PathBuf::from(home).join(".cache/lake"),
        None => local,
    }
}

/// Where the cache keeps an artifact: `<cache>/artifacts/<hash>.<ext>`.
pub fn artifact(root: &Path, hash: &str, ext: &str) -> PathBuf {
    dir(root).join("artifacts").join(format!("{hash}.{ext}"))
}

/// The artifacts of one module build: `(Lake's extension, contents)` for the `.olean`, the
/// `.ilean` and the `.c`, in that order.
pub type Outputs = [(&'static str, String); 3];

/// The 16 hex digits naming an artifact's contents.
pub fn content_hash(contents: &str) -> String {
    let hash = contents.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// The trace's `outputs`, as Lake's `ModuleOutputHashes.toJson`: `o` (the olean hashes), `i`,
/// `c`.
pub fn outputs_json(outputs: &Outputs) -> Value {
    let [(_, olean), (_, ilean), (_, c)] = outputs;
    json!({"o": [content_hash(olean)], "i": content_hash(ilean), "c": content_hash(c)})
}

/// A module's trace file as Lake writes it (`BuildMetadata`, `Build/Common.lean`): after a
/// build, its input hash, outputs and log; after a fetch, `synthetic` and no log.
pub fn trace_json(input_hash: &str, outputs: &Outputs, log: &[String], synthetic: bool) -> Value {
    json!({
        "schemaVersion": "2025-09-10",
        "depHash": input_hash,
        "inputs": [],
        "outputs": outputs_json(outputs),
        "log": log,
        "synthetic": synthetic,
    })
}

/// What a module's trace says, when it can be read.
pub struct Saved {
    pub input_hash: String,
    pub log: Vec<String>,
    pub synthetic: bool,
    pub outputs: Value,
}

/// Reads a module's trace file.
pub fn saved(trace: &Path) -> Option<Saved> {
    let t: Value = serde_json::from_str(&std::fs::read_to_string(trace).ok()?).ok()?;
    let log = t["log"]
        .as_array()?
        .iter()
        .filter_map(|l| l.as_str().map(str::to_owned))
        .collect();
    Some(Saved {
        input_hash: t["depHash"].as_str()?.to_owned(),
        log,
        synthetic: t["synthetic"] == true,
        outputs: t["outputs"].clone(),
    })
}

/// The build directory's files of a module, by Lake's extension (`olean`, `ilean`, `c`), and
/// the outputs a fetch clears besides them.
pub struct Local<'a> {
    pub root: &'a Path,
    pub lib: PathBuf,
    pub ir: PathBuf,
}

impl Local<'_> {
    pub fn path(&self, ext: &str) -> PathBuf {
        let base = if ext == "c" || ext == "bc" {
            &self.ir
        } else {
            &self.lib
        };
        let mut path = base.as_os_str().to_owned();
        path.push(format!(".{ext}"));
        PathBuf::from(path)
    }
}

/// Fetches a module from the cache (see the module doc): its outputs into the cache, the build
/// directory's cleared, the synthetic trace written, the `.ilean` (or everything) restored.
pub fn fetch(
    mode: Cache,
    local: &Local<'_>,
    input_hash: &str,
    outputs: &Outputs,
) -> std::io::Result<()> {
    for (ext, contents) in outputs {
        let cached = artifact(local.root, &content_hash(contents), ext);
        std::fs::create_dir_all(cached.parent().expect("has a parent"))?;
        std::fs::write(cached, contents)?;
    }
    for ext in [
        "olean",
        "olean.server",
        "olean.private",
        "ilean",
        "ir",
        "c",
        "bc",
    ] {
        match std::fs::remove_file(local.path(ext)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let trace = local.path("trace");
    std::fs::create_dir_all(trace.parent().expect("has a parent"))?;
    std::fs::write(
        trace,
        trace_json(input_hash, outputs, &[], true).to_string(),
    )?;
    for (ext, contents) in outputs {
        if ext == &"ilean" || mode == Cache::RestoreAll {
            let path = local.path(ext);
            std::fs::create_dir_all(path.parent().expect("has a parent"))?;
            std::fs::write(path, contents)?;
        }
    }
    Ok(())
}

/// Where a module's `facet` (`olean`, `ilean`, `c`) is, as `lake query` prints it (the
/// artifact's path, `art.path`): after a fetch without `restore-all`, the cache's copy of the
/// `.olean` and the `.c` (the `.ilean` was restored); otherwise the build directory's.
pub fn facet_path(mode: Option<Cache>, local: &Local<'_>, facet: &str) -> PathBuf {
    let saved = saved(&local.path("trace"));
    let key = match facet {
        "olean" => saved.as_ref().and_then(|s| s.outputs["o"][0].as_str()),
        "c" => saved.as_ref().and_then(|s| s.outputs["c"].as_str()),
        _ => None,
    };
    let fetched = mode == Some(Cache::Fetch) && saved.as_ref().is_some_and(|s| s.synthetic);
    match key {
        Some(hash) if fetched => artifact(local.root, hash, facet),
        _ => local.path(facet),
    }
}
