//! What the server binary's stdin and stdout may be. Pipes and Unix sockets (what MCP clients
//! pass: Node's are socket pairs) are driven on the runtime, non-blocking while the server runs
//! and back in blocking mode when it exits; a regular file, or an end shared with stderr, is
//! served by a thread. The answers are the same every way.
#![cfg(unix)]

mod support;

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

const HELLO: &str = include_str!("../examples/hello.jsonl");

fn spawn(stdin: impl Into<Stdio>, stdout: impl Into<Stdio>, stderr: impl Into<Stdio>) -> Child {
    Command::new(support::server_bin())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("spawn the server")
}

/// The ids answered, in order.
fn ids(output: &str) -> Vec<i64> {
    output
        .lines()
        .map(|line| {
            let answer: Value = serde_json::from_str(line).expect("a JSON line");
            assert!(answer.get("result").is_some(), "{answer}");
            answer["id"].as_i64().expect("an integer id")
        })
        .collect()
}

/// Whether `fd`'s open file description is non-blocking (`None` where that cannot be read).
fn nonblocking(fd: &dyn AsRawFd) -> Option<bool> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?.trim();
    Some(u32::from_str_radix(flags, 8).ok()? & 0o4000 != 0)
}

/// Serves the example through `(input, output)` (the client's ends), while the server's ends'
/// duplicates `watch` report their mode: `during` while it runs, blocking again after it exits.
fn exchange(
    mut input: impl Write,
    output: impl Read,
    mut child: Child,
    watch: &[&dyn AsRawFd],
    during: bool,
) {
    let mut lines = HELLO.lines();
    let mut answers = BufReader::new(output);
    writeln!(input, "{}", lines.next().unwrap()).unwrap();
    let mut first = String::new();
    answers.read_line(&mut first).unwrap();
    assert_eq!(ids(&first), [1]);
    for fd in watch {
        assert_ne!(nonblocking(*fd), Some(!during), "mode while serving");
    }
    for line in lines {
        writeln!(input, "{line}").unwrap();
    }
    drop(input);
    let mut rest = String::new();
    for _ in 0..2 {
        answers.read_line(&mut rest).unwrap();
    }
    assert_eq!(ids(&rest), [2, 3]);
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        err.read_to_string(&mut stderr).unwrap();
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(stderr, "");
    for fd in watch {
        assert_ne!(nonblocking(*fd), Some(true), "mode after exit");
    }
}

#[test]
fn pipes_are_served_on_the_runtime_and_left_blocking() {
    let (server_in, client_in) = std::io::pipe().unwrap();
    let (client_out, server_out) = std::io::pipe().unwrap();
    let (watch_in, watch_out) = (
        server_in.try_clone().unwrap(),
        server_out.try_clone().unwrap(),
    );
    let child = spawn(server_in, server_out, Stdio::piped());
    exchange(client_in, client_out, child, &[&watch_in, &watch_out], true);
}

#[test]
fn unix_socket_pairs_are_served_on_the_runtime_and_left_blocking() {
    let (server_in, client_in) = UnixStream::pair().unwrap();
    let (client_out, server_out) = UnixStream::pair().unwrap();
    let (watch_in, watch_out) = (
        server_in.try_clone().unwrap(),
        server_out.try_clone().unwrap(),
    );
    let child = spawn(
        OwnedFd::from(server_in),
        OwnedFd::from(server_out),
        Stdio::piped(),
    );
    exchange(client_in, client_out, child, &[&watch_in, &watch_out], true);
}

#[test]
fn an_output_shared_with_stderr_stays_on_a_thread() {
    let (server_in, client_in) = std::io::pipe().unwrap();
    let (client_out, server_out) = std::io::pipe().unwrap();
    let server_err = server_out.try_clone().unwrap();
    let watch_out = server_out.try_clone().unwrap();
    let child = spawn(server_in, server_out, server_err);
    exchange(client_in, client_out, child, &[&watch_out], false);
}

#[test]
fn a_regular_file_as_input_or_output_is_served_by_a_thread() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.jsonl");
    std::fs::write(&requests, HELLO).unwrap();

    // Input from a file, output to a pipe.
    let output = Command::new(support::server_bin())
        .stdin(File::open(&requests).unwrap())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(ids(&String::from_utf8(output.stdout).unwrap()), [1, 2, 3]);
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");

    // Input from a pipe, output to a file.
    let answers = dir.path().join("answers.jsonl");
    let mut child = spawn(
        Stdio::piped(),
        File::create(&answers).unwrap(),
        Stdio::inherit(),
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(HELLO.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(ids(&std::fs::read_to_string(&answers).unwrap()), [1, 2, 3]);
}

/// Started by hand in a terminal, the server says in one line on stderr what it is and how to
/// register it, then serves as ever: a request typed there is answered, and end of input (Ctrl-D)
/// ends it.
#[test]
fn a_terminal_is_told_what_the_server_is_and_still_served() {
    let (mut master, slave) = {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two descriptors it opened into the given integers.
        let status = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(status, 0, "openpty");
        // SAFETY: both are open descriptors that nothing else owns.
        unsafe {
            (
                File::from(<OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(master)),
                <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(slave),
            )
        }
    };
    let mut child = spawn(slave, Stdio::piped(), Stdio::piped());
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    stderr.read_line(&mut said).unwrap();
    assert!(
        said.starts_with("lean-beam-mcp speaks MCP on stdio")
            && said.contains("lean-beam-mcp config <claude|codex|vscode|cursor> --write"),
        "{said}"
    );
    let first = HELLO.lines().next().unwrap();
    master.write_all(format!("{first}\n").as_bytes()).unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    assert_eq!(ids(&answer), [1]);
    master.write_all(b"\x04").unwrap();
    assert!(child.wait().unwrap().success());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "one line only");
    drop(master);
}
