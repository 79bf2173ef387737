//! Lake's artifact cache in `fake-lake build` (`FAKE_LAKE_ARTIFACT_CACHE`), and `fake-lake
//! query`, which says where a module's artifacts are.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::Project;

/// Runs the fake `lake` in the project with only `env` of the switches it reads.
fn lake(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(support::bin());
    cmd.args(args).current_dir(&p.root);
    for (k, _) in std::env::vars() {
        if k.starts_with("FAKE_") || k.starts_with("LAKE_") || k == "XDG_CACHE_HOME" {
            cmd.env_remove(k);
        }
    }
    // Never Lake's cache of the machine running the tests.
    cmd.env("HOME", p.dir.path());
    cmd.envs(env.iter().copied()).output().unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn lines(o: &Output) -> Vec<PathBuf> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(PathBuf::from)
        .collect()
}

fn cache_dir(p: &Project) -> PathBuf {
    p.dir.path().join("lake-cache")
}

/// The artifact cache on, in `mode`, kept in `dir` (`cache_dir`).
fn cached<'a>(mode: &'a str, dir: &'a str) -> [(&'a str, &'a str); 2] {
    [("FAKE_LAKE_ARTIFACT_CACHE", mode), ("LAKE_CACHE_DIR", dir)]
}

const QUERY: [&str; 4] = [
    "query",
    "+Fixture.Basic:olean",
    "+Fixture.Basic:ilean",
    "+Fixture.Basic:c",
];

fn build_dir(p: &Project, file: &str) -> PathBuf {
    p.root.join(".lake/build").join(file)
}

fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn a_fetch_leaves_the_ilean_and_a_synthetic_trace_and_query_names_the_cache() {
    let p = Project::new();
    let dir = cache_dir(&p).display().to_string();
    let env = cached("fetch", &dir);
    let o = lake(&p, &["build", "+Fixture.Uses"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        err(&o),
        "✔ [1/2] Fetched Fixture.Basic\n✔ [2/2] Fetched Fixture.Uses\nBuild completed successfully (2 jobs).\n"
    );
    let ilean = build_dir(&p, "lib/lean/Fixture/Basic.ilean");
    let trace = build_dir(&p, "lib/lean/Fixture/Basic.trace");
    assert!(ilean.is_file() && trace.is_file());
    assert!(!build_dir(&p, "lib/lean/Fixture/Basic.olean").exists());
    assert!(!build_dir(&p, "ir/Fixture/Basic.c").exists());
    let record: Value =
        serde_json::from_str(&p.read(".lake/build/lib/lean/Fixture/Basic.trace")).unwrap();
    assert_eq!(record["synthetic"], true);
    assert_eq!(record["log"], serde_json::json!([]));
    let olean_hash = record["outputs"]["o"][0].as_str().unwrap();

    let o = lake(&p, &QUERY, &env);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        err(&o),
        "✔ [1/1] Fetched Fixture.Basic\n",
        "fetched again, not replayed"
    );
    let artifacts = cache_dir(&p).join("artifacts");
    let paths = lines(&o);
    assert_eq!(paths.len(), 3, "one line per target");
    assert_eq!(paths[0], artifacts.join(format!("{olean_hash}.olean")));
    assert_eq!(paths[1], ilean);
    assert_eq!(paths[2].parent(), Some(artifacts.as_path()));
    assert!(paths.iter().all(|path| path.is_file()), "{paths:?}");

    // Up to date: nothing is written again.
    let (ilean_at, trace_at) = (modified(&ilean), modified(&trace));
    lake(&p, &["build", "+Fixture.Basic"], &env);
    assert_eq!((modified(&ilean), modified(&trace)), (ilean_at, trace_at));
}

#[test]
fn a_fetch_clears_what_a_local_build_left_and_restore_all_brings_everything_back() {
    let p = Project::new();
    let o = lake(&p, &["build", "+Fixture.Basic"], &[]);
    assert_eq!(
        err(&o),
        "✔ [1/1] Built Fixture.Basic\nBuild completed successfully (1 jobs).\n"
    );
    let olean = build_dir(&p, "lib/lean/Fixture/Basic.olean");
    assert!(olean.is_file());
    // The local build's trace matches: the cache changes nothing, and query names it.
    let dir = cache_dir(&p).display().to_string();
    let env = cached("fetch", &dir);
    let o = lake(&p, &QUERY, &env);
    assert_eq!(err(&o), "");
    assert_eq!(lines(&o)[0], olean);
    // Edited: fetched, and the local outputs cleared.
    p.write("Fixture/Basic.lean", &(p.read("Fixture/Basic.lean") + "\n"));
    let o = lake(&p, &["build", "+Fixture.Basic"], &env);
    assert_eq!(
        err(&o),
        "✔ [1/1] Fetched Fixture.Basic\nBuild completed successfully (1 jobs).\n"
    );
    assert!(!olean.exists());
    // Restoring everything: the build directory holds every artifact, and query names them.
    p.write("Fixture/Basic.lean", &(p.read("Fixture/Basic.lean") + "\n"));
    let env = cached("restore-all", &dir);
    lake(&p, &["build", "+Fixture.Basic"], &env);
    let o = lake(&p, &QUERY, &env);
    assert_eq!(
        lines(&o),
        [
            olean,
            build_dir(&p, "lib/lean/Fixture/Basic.ilean"),
            build_dir(&p, "ir/Fixture/Basic.c"),
        ]
    );
    assert!(lines(&o).iter().all(|path| path.is_file()));
    assert!(cache_dir(&p).join("artifacts").read_dir().unwrap().count() >= 3);
}

#[test]
fn the_cache_directory_follows_lakes_rules() {
    let p = Project::new();
    let mode = [("FAKE_LAKE_ARTIFACT_CACHE", "fetch")];
    let olean_dir = |env: &[(&str, &str)]| {
        p.write("Fixture/Basic.lean", &(p.read("Fixture/Basic.lean") + "\n"));
        let env: Vec<_> = mode.iter().chain(env).copied().collect();
        let o = lake(&p, &QUERY, &env);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        lines(&o)[0].parent().unwrap().to_path_buf()
    };
    assert_eq!(
        olean_dir(&[("LAKE_CACHE_DIR", "")]),
        p.root.join(".lake/cache/artifacts")
    );
    let xdg = p.dir.path().join("xdg").display().to_string();
    assert_eq!(
        olean_dir(&[("XDG_CACHE_HOME", &xdg)]),
        p.dir.path().join("xdg/lake/artifacts")
    );
    assert_eq!(olean_dir(&[]), p.dir.path().join(".cache/lake/artifacts"));
}

#[test]
fn query_refuses_as_lake_does() {
    let p = Project::new();
    p.write("Scratch.lean", "def s := 1\n");
    let o = lake(&p, &["query", "+Scratch:olean"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err(&o), "error: unknown module `Scratch`\n");
    let o = lake(&p, &["query", "+Fixture.Basic:nope"], &[]);
    assert_eq!(err(&o), "error: unknown module facet `nope`\n");
    let o = lake(&p, &QUERY, &[("FAKE_LAKE_QUERY", "0")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err(&o), "error: unknown command 'query'\n");
    assert!(o.stdout.is_empty());
    // `--no-build`: what would have to be compiled fails; nothing is printed.
    let mut no_build = QUERY.to_vec();
    no_build.insert(1, "--no-build");
    let o = lake(&p, &no_build, &[]);
    assert_eq!(o.status.code(), Some(3), "Lake's noBuildCode");
    assert!(
        err(&o).starts_with(
            "✖ [1/1] Building Fixture.Basic\nerror: target is out-of-date and needs to be rebuilt\n"
        ),
        "{}",
        err(&o)
    );
    assert!(o.stdout.is_empty());
    // Fetching is no build.
    let dir = cache_dir(&p).display().to_string();
    let o = lake(&p, &no_build, &cached("fetch", &dir));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(lines(&o).len(), 3);
}
