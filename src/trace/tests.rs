use std::path::Path;

use super::*;

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_stream_writes_timestamped_lines_to_its_own_file() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = TraceDir::open(&tmp.path().join("traces"), DEFAULT_TRACE_MAX_BYTES).unwrap();
    let stream = trace.stream("lsp-My Project-1");
    stream.write("beam→lean", br#"{"id":0}"#);
    stream.write("lean→beam", br#"{"id":0,"result":{}}"#);
    let pid = std::process::id();
    assert_eq!(
        stream.path().file_name().unwrap().to_str().unwrap(),
        format!("lean-beam-{pid}-lsp-My_Project-1.log")
    );
    let text = std::fs::read_to_string(stream.path()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].ends_with(r#"Z beam→lean {"id":0}"#), "{text}");
    assert!(lines[1].contains(" lean→beam "), "{text}");
    assert_eq!(
        trace.files("lsp-My Project"),
        vec![stream.path().to_path_buf()]
    );
}

#[test]
fn a_full_file_rotates_once_and_the_directory_keeps_its_budget() {
    let tmp = tempfile::tempdir().unwrap();
    // Budget 32 KiB: files rotate at 4 KiB.
    let trace = TraceDir::open(tmp.path(), 32 * 1024).unwrap();
    // An old trace of another process, older than anything written now.
    let stale = tmp.path().join("lean-beam-1-mcp.log");
    std::fs::write(&stale, vec![b'x'; 30 * 1024]).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let unrelated = tmp.path().join("notes.txt");
    std::fs::write(&unrelated, vec![b'y'; 64 * 1024]).unwrap();
    let stream = trace.stream("mcp");
    let message = vec![b'm'; 1000];
    for _ in 0..20 {
        stream.write("client→beam", &message);
    }
    let pid = std::process::id();
    assert_eq!(
        names(tmp.path()),
        [
            format!("lean-beam-{pid}-mcp.1.log"),
            format!("lean-beam-{pid}-mcp.log"),
            "notes.txt".to_string(),
        ],
        "the stale trace was pruned, the unrelated file kept"
    );
    let rotate_at = 4 * 1024;
    for file in trace.files("mcp") {
        let len = std::fs::metadata(&file).unwrap().len();
        assert!(len <= rotate_at, "{} is {len} bytes", file.display());
    }
}

#[test]
fn files_in_use_are_never_pruned() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = TraceDir::open(tmp.path(), 4 * 1024).unwrap();
    let first = trace.stream("a");
    first.write("x", &[b'a'; 3000]);
    let second = trace.stream("b");
    second.write("x", &[b'b'; 3000]);
    // Over budget, but both files are being written: both stay.
    assert!(first.path().exists() && second.path().exists());
    let first_path = first.path().to_path_buf();
    drop(first);
    let third = trace.stream("c");
    third.write("x", &[b'c'; 10]);
    assert!(!first_path.exists(), "a finished stream's file is prunable");
    assert!(second.path().exists() && third.path().exists());
}

#[test]
fn a_stream_that_cannot_write_stops_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = TraceDir::open(&tmp.path().join("t"), 1 << 20).unwrap();
    std::fs::remove_dir(tmp.path().join("t")).unwrap();
    let stream = trace.stream("mcp");
    stream.write("x", b"lost");
    stream.write("x", b"lost too");
    assert!(!stream.path().exists());
}
