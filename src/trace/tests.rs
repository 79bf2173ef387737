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

/// The pid of a process that has ended (and been reaped).
fn ended_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Makes `path` look an hour old.
fn age(path: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
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
    // An old trace of a process that has ended, older than anything written now.
    let stale = tmp
        .path()
        .join(format!("lean-beam-{}-mcp.log", ended_pid()));
    std::fs::write(&stale, vec![b'x'; 30 * 1024]).unwrap();
    age(&stale);
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

#[test]
fn the_files_of_another_live_server_are_never_pruned() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = TraceDir::open(tmp.path(), 32 * 1024).unwrap();
    // A live process stands for another server sharing the directory, idle for an hour.
    let mut other = std::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let theirs = tmp.path().join(format!("lean-beam-{}-mcp.log", other.id()));
    std::fs::write(&theirs, vec![b'x'; 30 * 1024]).unwrap();
    age(&theirs);
    let stream = trace.stream("mcp");
    for _ in 0..20 {
        stream.write("client→beam", &[b'm'; 1000]);
    }
    assert!(theirs.exists(), "a live server's trace was pruned");
    drop(other.stdin.take());
    other.wait().unwrap();
    // Once that server has ended, its file is old and prunable.
    for _ in 0..5 {
        stream.write("client→beam", &[b'm'; 1000]);
    }
    assert!(!theirs.exists());
}

#[test]
fn a_line_longer_than_the_rotation_size_is_cut_to_fit() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = TraceDir::open(tmp.path(), 32 * 1024).unwrap();
    let stream = trace.stream("lsp");
    let mut message = vec![b'\n'; 50_000];
    message.extend(vec![b'z'; 50_000]);
    stream.write("lean→beam", &message);
    stream.write("lean→beam", b"after");
    let mut total = 0;
    for file in trace.files("lsp") {
        let len = std::fs::metadata(&file).unwrap().len();
        assert!(len <= 4 * 1024, "{} is {len} bytes", file.display());
        total += len;
    }
    assert!(total > 0);
    let cut = std::fs::read_to_string(
        tmp.path()
            .join(format!("lean-beam-{}-lsp.1.log", std::process::id())),
    )
    .unwrap();
    assert_eq!(cut.lines().count(), 1, "{cut}");
    assert!(cut.ends_with(" bytes cut]\n"), "{cut}");
    let last = std::fs::read_to_string(stream.path()).unwrap();
    assert!(last.ends_with(" lean→beam after\n"), "{last}");
}

#[test]
fn a_file_someone_else_deleted_does_not_stop_the_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = TraceDir::open(tmp.path(), 32 * 1024).unwrap();
    let stream = trace.stream("mcp");
    stream.write("x", &[b'a'; 1000]);
    std::fs::remove_file(stream.path()).unwrap();
    // The next lines rotate the (deleted) file away and begin a new one.
    for _ in 0..5 {
        stream.write("x", &[b'b'; 1000]);
    }
    let text = std::fs::read_to_string(stream.path()).unwrap();
    assert!(text.contains("bbbb"), "the stream went on");
}

#[test]
fn a_file_left_by_an_earlier_server_with_the_same_pid_is_appended_to() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = TraceDir::open(tmp.path(), DEFAULT_TRACE_MAX_BYTES).unwrap();
    let stream = trace.stream("mcp");
    std::fs::write(stream.path(), "an earlier run\n").unwrap();
    stream.write("x", b"this run");
    let text = std::fs::read_to_string(stream.path()).unwrap();
    assert!(text.starts_with("an earlier run\n"), "{text}");
    assert!(text.ends_with(" x this run\n"), "{text}");
}
