//! The Lake configuration the fake reads, and Lake's rules over it (README "`fake-lake build`,
//! `env` and `setup-file`").
//!
//! Only `lakefile.toml` is read, line by line (enough for fixtures): each `[[lean_lib]]` table's
//! `name`, `srcDir` (default `"."`), `roots` (default `[name]`), `globs` (default: each root,
//! itself only; `"M.*"` its strict submodules, `"M.+"` it and its submodules) and `leanOptions`
//! (an inline table, or `leanOptions.<name> = …` lines), and the package's own `leanOptions`
//! (before any table). Lake's rules, as
//! its source states them: a library's source directory is the package directory joined with
//! its `srcDir` (`LeanLib.srcDir`); a module is *buildable* by a library when a glob matches it,
//! or a root is a prefix of it and a glob matches that root (`LeanLibConfig.isBuildableModule`);
//! the workspace's `LEAN_SRC_PATH` lists every library's source directory
//! (`Workspace.leanSrcPath`); a module's source is `<srcDir>/<A/B>.lean`.

use std::path::{Path, PathBuf};

/// A module glob of a library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Glob {
    /// `M`: the module itself.
    One(String),
    /// `M.*`: its strict submodules.
    Submodules(String),
    /// `M.+`: it and its submodules.
    AndSubmodules(String),
}

impl Glob {
    fn parse(s: &str) -> Glob {
        if let Some(m) = s.strip_suffix(".*") {
            Glob::Submodules(m.to_owned())
        } else if let Some(m) = s.strip_suffix(".+") {
            Glob::AndSubmodules(m.to_owned())
        } else {
            Glob::One(s.to_owned())
        }
    }

    pub fn matches(&self, module: &str) -> bool {
        match self {
            Glob::One(m) => m == module,
            Glob::Submodules(m) => is_prefix(m, module) && m != module,
            Glob::AndSubmodules(m) => is_prefix(m, module),
        }
    }
}

/// Whether `prefix` is a prefix of `module` by name components (`A` of `A.B`, not of `AB`).
pub fn is_prefix(prefix: &str, module: &str) -> bool {
    module == prefix
        || module
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// One `[[lean_lib]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lib {
    pub name: String,
    /// As written (relative to the package directory).
    pub src_dir: String,
    pub roots: Vec<String>,
    pub globs: Vec<Glob>,
    /// `leanOptions`, as written (name, value).
    pub options: Vec<(String, String)>,
}

impl Lib {
    /// Lake's `isBuildableModule`.
    pub fn builds(&self, module: &str) -> bool {
        self.globs.iter().any(|g| g.matches(module))
            || self
                .roots
                .iter()
                .any(|r| is_prefix(r, module) && self.globs.iter().any(|g| g.matches(r)))
    }

    /// The library's source directory under the package root.
    pub fn src_path(&self, root: &Path) -> PathBuf {
        let dir = root.join(&self.src_dir);
        // `./` and `.` add nothing: keep paths lexically simple.
        dir.components().collect()
    }
}

/// Whether the project has a configuration Lake would load.
pub fn exists(root: &Path) -> bool {
    root.join("lakefile.toml").exists() || root.join("lakefile.lean").exists()
}

/// A `[[lean_lib]]` table as written: `name`, then `srcDir`, `roots`, `globs` when given.
#[derive(Default)]
struct Table {
    name: String,
    src_dir: Option<String>,
    roots: Option<Vec<String>>,
    globs: Option<Vec<String>>,
    options: Vec<(String, String)>,
}

/// The libraries of `lakefile.toml`, in order.
pub fn libraries(root: &Path) -> Vec<Lib> {
    let toml = std::fs::read_to_string(root.join("lakefile.toml")).unwrap_or_default();
    let mut tables: Vec<Table> = Vec::new();
    let mut in_lib = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_lib = line == "[[lean_lib]]";
            if in_lib {
                tables.push(Table::default());
            }
            continue;
        }
        let Some(table) = tables.last_mut().filter(|_| in_lib) else {
            continue;
        };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match key.trim() {
            "name" => table.name = unquote(value),
            "srcDir" => table.src_dir = Some(unquote(value)),
            "roots" => table.roots = Some(array(value)),
            "globs" => table.globs = Some(array(value)),
            _ => table.options.extend(options_of(line)),
        }
    }
    tables
        .into_iter()
        .filter(|t| !t.name.is_empty())
        .map(|t| {
            let roots = t.roots.unwrap_or_else(|| vec![t.name.clone()]);
            let globs = match t.globs {
                Some(g) => g.iter().map(|s| Glob::parse(s)).collect(),
                None => roots.iter().map(|r| Glob::One(r.clone())).collect(),
            };
            Lib {
                name: t.name,
                src_dir: t.src_dir.unwrap_or_else(|| ".".into()),
                roots,
                globs,
                options: t.options,
            }
        })
        .collect()
}

/// The options a `leanOptions = {a = b, …}` or `leanOptions.a = b` line sets, else none.
fn options_of(line: &str) -> Vec<(String, String)> {
    let Some((key, value)) = line.split_once('=') else {
        return Vec::new();
    };
    let key = key.trim();
    if let Some(name) = key.strip_prefix("leanOptions.") {
        return vec![(unquote(name), unquote(value))];
    }
    if key != "leanOptions" {
        return Vec::new();
    }
    let inner = value.trim().trim_start_matches('{').trim_end_matches('}');
    inner
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (unquote(k), unquote(v)))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// The package's own `leanOptions` (written before the first table).
pub fn package_options(root: &Path) -> Vec<(String, String)> {
    let toml = std::fs::read_to_string(root.join("lakefile.toml")).unwrap_or_default();
    toml.lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with('['))
        .flat_map(options_of)
        .collect()
}

/// The options `lake setup-file` gives the file at `path` (README "Lake setup"): Lake resolves
/// the path with `realPath` (`resolvePath`), so a link to a library's module is that module,
/// which gets its library's `leanOptions` after the package's (`LeanLib.leanOptions`); any other
/// file is outside every library and gets the root package's options (new and mid Lake,
/// `getServerOptions`), or none (old Lake: `external_options` false).
pub fn setup_options(root: &Path, path: &Path, external_options: bool) -> Vec<(String, String)> {
    let (Ok(real), Ok(root_real)) = (std::fs::canonicalize(path), std::fs::canonicalize(root))
    else {
        return external(root, external_options);
    };
    let module = libraries(&root_real).into_iter().find_map(|lib| {
        let rel = real.strip_prefix(lib.src_path(&root_real)).ok()?;
        let module = rel.to_str()?.strip_suffix(".lean")?.replace('/', ".");
        lib.builds(&module).then_some(lib)
    });
    match module {
        Some(lib) => package_options(root)
            .into_iter()
            .chain(lib.options)
            .collect(),
        None => external(root, external_options),
    }
}

fn external(root: &Path, external_options: bool) -> Vec<(String, String)> {
    if external_options {
        package_options(root)
    } else {
        Vec::new()
    }
}

fn unquote(value: &str) -> String {
    value.trim().trim_matches('"').to_owned()
}

fn array(value: &str) -> Vec<String> {
    value
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(unquote)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The library that builds `module`, if any.
pub fn library_of(root: &Path, module: &str) -> Option<Lib> {
    libraries(root).into_iter().find(|l| l.builds(module))
}

/// The source file of a module: under the source directory of a library that has it, else
/// under the root (a module imported from no library, or a file of no library).
pub fn source_of(root: &Path, module: &str) -> PathBuf {
    let rel = format!("{}.lean", module.replace('.', "/"));
    libraries(root)
        .iter()
        .map(|l| l.src_path(root).join(&rel))
        .find(|p| p.exists())
        .unwrap_or_else(|| root.join(rel))
}

/// The module name of a source file: relative to the deepest library source directory that
/// holds it (the root when none does).
pub fn module_of_path(root: &Path, path: &Path) -> Option<String> {
    let mut dirs: Vec<PathBuf> = libraries(root).iter().map(|l| l.src_path(root)).collect();
    dirs.push(root.to_path_buf());
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in dirs {
        if let Ok(rel) = path.strip_prefix(&dir)
            && let Some(rel) = rel.to_str().and_then(|r| r.strip_suffix(".lean"))
        {
            return Some(rel.replace('/', "."));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_of_libraries_and_the_package_and_which_file_gets_which() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("lakefile.toml"),
            "name = \"p\"\nleanOptions = {pp.all = true}\n\n[[lean_lib]]\nname = \"A\"\n\
             leanOptions = { autoImplicit = false, \"relaxedAutoImplicit\" = false }\n\
             leanOptions.maxHeartbeats = 400\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("A")).unwrap();
        std::fs::create_dir_all(dir.path().join(".lake/t")).unwrap();
        let module = dir.path().join("A/B.lean");
        std::fs::write(&module, "").unwrap();
        let all = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let library = all(&[
            ("pp.all", "true"),
            ("autoImplicit", "false"),
            ("relaxedAutoImplicit", "false"),
            ("maxHeartbeats", "400"),
        ]);
        assert_eq!(setup_options(dir.path(), &module, false), library);
        let outside = dir.path().join("Scratch.lean");
        std::fs::write(&outside, "").unwrap();
        assert_eq!(
            setup_options(dir.path(), &outside, true),
            all(&[("pp.all", "true")])
        );
        assert_eq!(setup_options(dir.path(), &outside, false), Vec::new());
        #[cfg(unix)]
        {
            let link = dir.path().join(".lake/t/B.lean");
            std::os::unix::fs::symlink(&module, &link).unwrap();
            assert_eq!(
                setup_options(dir.path(), &link, false),
                library,
                "Lake's realPath"
            );
        }
    }

    #[test]
    fn defaults_and_lake_buildability() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("lakefile.toml"),
            "name = \"p\"\n\n[[lean_lib]]\nname = \"A\"\n\n[[lean_lib]]\nname = \"B\"\nsrcDir = \"src\"\nroots = [\"B\", \"C\"]\nglobs = [\"B.+\", \"C\"]\n",
        )
        .unwrap();
        let libs = libraries(dir.path());
        assert_eq!(libs.len(), 2);
        assert_eq!(libs[0].src_dir, ".");
        assert_eq!(libs[0].globs, [Glob::One("A".into())]);
        assert!(libs[0].builds("A") && libs[0].builds("A.X.Y"));
        assert!(!libs[0].builds("AB") && !libs[0].builds("Z"));
        assert_eq!(libs[1].src_path(dir.path()), dir.path().join("src"));
        assert!(libs[1].builds("B.X") && libs[1].builds("C") && libs[1].builds("C.D"));
        assert!(
            Glob::Submodules("M".into()).matches("M.N")
                && !Glob::Submodules("M".into()).matches("M")
        );
        std::fs::create_dir_all(dir.path().join("src/B")).unwrap();
        std::fs::write(dir.path().join("src/B/X.lean"), "").unwrap();
        assert_eq!(
            source_of(dir.path(), "B.X"),
            dir.path().join("src/B/X.lean")
        );
        assert_eq!(
            module_of_path(dir.path(), &dir.path().join("src/B/X.lean")).as_deref(),
            Some("B.X")
        );
        assert_eq!(
            module_of_path(dir.path(), &dir.path().join("A/Y.lean")).as_deref(),
            Some("A.Y")
        );
    }
}
