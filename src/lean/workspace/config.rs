//! The workspace's Lake configuration as a cheap stamp: the files whose change means Lean must
//! load the workspace again, with their modification time and size.
//!
//! Contract: [`ConfigStamp::read`] costs one `stat` per file of [`CONFIG_FILES`] (a runtime's
//! first stamp is the one its [`LakeConfig`] read, [`ConfigStamp::of`]);
//! [`ConfigStamp::changed_since`] names the files that differ (appeared, vanished, or changed
//! time or size) between two stamps, in [`CONFIG_FILES`] order.

use std::path::Path;
use std::time::SystemTime;

use crate::lean::session::fingerprint::LakeConfig;

/// The files whose change means the workspace must be reloaded.
pub const CONFIG_FILES: [&str; 4] = [
    "lakefile.toml",
    "lakefile.lean",
    "lake-manifest.json",
    "lean-toolchain",
];

/// What the configuration files looked like at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigStamp(Vec<(&'static str, Option<(SystemTime, u64)>)>);

impl ConfigStamp {
    /// Reads the stamp now (one `stat` per file).
    pub fn read(root: &Path) -> ConfigStamp {
        ConfigStamp(
            CONFIG_FILES
                .iter()
                .map(|name| {
                    let meta = std::fs::metadata(root.join(name)).ok();
                    let stamp = meta.and_then(|m| Some((m.modified().ok()?, m.len())));
                    (*name, stamp)
                })
                .collect(),
        )
    }

    /// The stamp `config` read with its contents (it was read from [`CONFIG_FILES`]).
    pub fn of(config: &LakeConfig) -> ConfigStamp {
        ConfigStamp(
            CONFIG_FILES
                .iter()
                .zip(config.stamps())
                .map(|(name, (_, stamp))| (*name, *stamp))
                .collect(),
        )
    }

    /// The files that differ between two stamps.
    pub fn changed_since(&self, earlier: &ConfigStamp) -> Vec<&'static str> {
        self.0
            .iter()
            .zip(&earlier.0)
            .filter(|(now, then)| now.1 != then.1)
            .map(|(now, _)| now.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_change_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lakefile.toml"), "name = \"a\"\n").unwrap();
        let before = ConfigStamp::read(dir.path());
        assert!(
            ConfigStamp::read(dir.path())
                .changed_since(&before)
                .is_empty()
        );
        std::fs::write(dir.path().join("lakefile.toml"), "name = \"ab\"\n").unwrap();
        std::fs::write(dir.path().join("lean-toolchain"), "x\n").unwrap();
        assert_eq!(
            ConfigStamp::read(dir.path()).changed_since(&before),
            ["lakefile.toml", "lean-toolchain"]
        );
    }
}
