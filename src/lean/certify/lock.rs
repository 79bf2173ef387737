//! A lock: what it holds of named theorems, its canonical form and its MAC.
//!
//! Contract:
//! 1. A lock is `{checker, path, base_sha256, toolchain, lean_version, module, theorems}`, each
//!    theorem `{name, components, kind, type, closure_hash}`: its full name as Lean prints it
//!    and its components, `theorem`, its type (`pp.all` text, for people), and the hash of its
//!    statement closure, all from the certification checker (`runner`); the toolchain from
//!    `lean-toolchain` and Lean's version string. A theorem is looked up by its exact full
//!    name: the same theorem inside another namespace is another theorem. [`read`] refuses a
//!    lock without these fields (`lockMalformed`: a lock of an older server too, to be taken
//!    again).
//! 2. The canonical form of a JSON value has its object keys sorted, at every depth, and no
//!    blank space; the MAC is HMAC-SHA256 (RFC 2104) under `LEAN_BEAM_LOCK_KEY` of the
//!    canonical form of the lock without its `mac`, in lowercase hex: it covers the toolchain
//!    and every closure hash.
//! 3. With a key set, a lock without a `mac`, or with one that is not that MAC, is forged
//!    (`invalidParams`, reason `lockForged`). Without a key a `mac` is not checked.
//! 4. A lock is of one file: its `path` is the file's path relative to the workspace root, with
//!    `/` between components (the MAC covers it). Certifying another file with it is refused
//!    (`invalidParams`, reason `lockPathMismatch`) rather than compared with that file's
//!    theorems; the same project moved or checked out elsewhere keeps its locks.

use std::path::Path;

use hmac::{KeyInit, Mac};
use serde_json::{Value, json};

use super::checks::Locked;
use crate::lean::error::HostError;
use crate::lean::syntax::{Command, code_words, declaration_named, normalized, statement};

/// The environment variable holding the lock key.
pub const KEY_VAR: &str = "LEAN_BEAM_LOCK_KEY";

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The keywords a theorem's kind is read from.
const KINDS: [&str; 6] = ["theorem", "lemma", "def", "abbrev", "instance", "example"];

/// A theorem of a text, found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its full name.
    pub name: String,
    /// Its keyword.
    pub kind: String,
    /// Its statement, normalized.
    pub header: String,
    /// Its command.
    pub command: Command,
    /// Its body's range.
    pub body: (crate::lean::text::Position, crate::lean::text::Position),
}

/// The declaration of `text` named `name` (exactly, when `exact`), if there is one.
pub fn find(text: &str, name: &str, exact: bool) -> Option<Found> {
    let named = declaration_named(text, name).ok()?;
    if exact && named.name != name {
        return None;
    }
    let stated = statement(text, &named.command);
    let kind = code_words(stated)
        .into_iter()
        .find(|w| KINDS.contains(&w.text.as_str()))
        .map_or_else(String::new, |w| w.text);
    Some(Found {
        name: named.name,
        kind,
        header: normalized(stated),
        command: named.command,
        body: named.body,
    })
}

/// `name` is not a theorem of the file; `declared` the file's theorems Lean has, as
/// suggestions.
pub fn missing(name: &str, path: &str, declared: &[String]) -> HostError {
    let hint = if declared.is_empty() {
        String::new()
    } else {
        format!("; its theorems include {}", declared.join(", "))
    };
    HostError::invalid_params(format!("{path} declares no theorem named {name:?}{hint}"))
        .with_data(json!({"reason": "theoremMissing", "theorem": name, "declared": declared}))
}

/// What certification reads of a lock (see the contract, 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockRead {
    /// The toolchain it was taken under.
    pub toolchain: Option<String>,
    /// Lean's version string then.
    pub lean_version: String,
    /// Its theorems, in order.
    pub theorems: Vec<Locked>,
}

/// Reads a lock (see the contract, 1).
pub fn read(lock: &Value) -> Result<LockRead, HostError> {
    let text = |v: &Value, field: &str, at: &str| {
        v.get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| malformed(&format!("{at}{field} is not a string")))
    };
    let theorems = lock
        .get("theorems")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("it has no theorems array"))?;
    if theorems.is_empty() {
        return Err(malformed("it locks no theorem"));
    }
    let toolchain = match lock.get("toolchain") {
        Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.clone()),
        _ => return Err(malformed("its toolchain is not a string or null")),
    };
    let theorems = theorems
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("theorems[{i}].");
            text(t, "kind", &at)?;
            text(t, "type", &at)?;
            let components: Option<Vec<String>> = t
                .get("components")
                .and_then(Value::as_array)
                .and_then(|c| c.iter().map(|c| c.as_str().map(str::to_owned)).collect());
            let components = components
                .filter(|c| !c.is_empty())
                .ok_or_else(|| malformed(&format!("{at}components is not a list of strings")))?;
            Ok(Locked {
                name: text(t, "name", &at)?,
                components,
                closure_hash: text(t, "closure_hash", &at)?,
            })
        })
        .collect::<Result<Vec<_>, HostError>>()?;
    Ok(LockRead {
        toolchain,
        lean_version: text(lock, "lean_version", "")?,
        theorems,
    })
}

/// The path a lock names for `file` of the workspace at `root` (see the contract, 4).
pub fn lock_path(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Refuses a lock taken of another file than `path` (see the contract, 4); `given` is the
/// caller's `path` argument, for the message.
pub fn of_file(lock: &Value, path: &str, given: &str) -> Result<(), HostError> {
    let locked = lock.get("path").and_then(Value::as_str);
    if locked == Some(path) {
        return Ok(());
    }
    let Some(locked) = locked else {
        return Err(malformed("it names no path (a string)"));
    };
    Err(HostError::invalid_params(format!(
        "the lock was taken of {locked}, not of {given} ({path} in this workspace): certify \
         {locked} with it, or take a lock of {path} with lean_lock"
    ))
    .with_data(json!({"reason": "lockPathMismatch", "lock_path": locked, "path": path})))
}

/// A lock that is not one `lean_lock` returned: `invalidInput` (an argument that is not
/// acceptable), reason `lockMalformed`.
pub fn malformed(why: &str) -> HostError {
    HostError::invalid_input(format!(
        "the lock is not one lean_lock returned ({why}): pass the lock unchanged, or take a new \
         one with lean_lock"
    ))
    .with_data(json!({"reason": "lockMalformed", "path": "/lock"}))
}

/// The canonical form of `value` (see the contract).
pub fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The key, when one is set.
pub fn key() -> Option<Vec<u8>> {
    std::env::var_os(KEY_VAR)
        .filter(|k| !k.is_empty())
        .map(|k| k.into_encoded_bytes())
}

fn mac_of(key: &[u8], lock: &Value) -> HmacSha256 {
    let mut unsealed = lock.clone();
    if let Some(map) = unsealed.as_object_mut() {
        map.remove("mac");
    }
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(canonical(&unsealed).as_bytes());
    mac
}

/// `lock` with its MAC, when a key is set.
pub fn seal(mut lock: Value) -> Value {
    if let Some(key) = key() {
        let tag = mac_of(&key, &lock).finalize().into_bytes();
        lock["mac"] = json!(hex(&tag));
    }
    lock
}

/// Refuses a forged lock (see the contract).
pub fn verify(lock: &Value) -> Result<(), HostError> {
    let Some(key) = key() else {
        return Ok(());
    };
    let forged = |why: &str| {
        HostError::invalid_params(format!(
            "the lock is refused: {why}; take a new one with lean_lock on this server"
        ))
        .with_data(json!({"reason": "lockForged", "path": "/lock"}))
    };
    let given = lock
        .get("mac")
        .and_then(Value::as_str)
        .ok_or_else(|| forged("it carries no mac and a lock key is set"))?;
    let bytes = unhex(given).ok_or_else(|| forged("its mac is not hex"))?;
    mac_of(&key, lock)
        .verify_slice(&bytes)
        .map_err(|_| forged("its mac does not match its content"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_is_rfc_4231_case_2() {
        let mac = {
            let mut mac = HmacSha256::new_from_slice(b"Jefe").unwrap();
            mac.update(b"what do ya want for nothing?");
            hex(&mac.finalize().into_bytes())
        };
        assert_eq!(
            mac,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn canonical_form_sorts_keys_and_drops_blanks() {
        let v = json!({"b": [1, {"d": "x y", "c": null}], "a": true});
        assert_eq!(canonical(&v), r#"{"a":true,"b":[1,{"c":null,"d":"x y"}]}"#);
        assert_eq!(unhex("0aff"), Some(vec![10, 255]));
        assert_eq!(unhex("0g"), None);
    }

    #[test]
    fn a_lock_names_its_file_relative_to_the_root_with_slashes() {
        let root = Path::new("/w/project");
        let file = Path::new("/w/project/My Proofs/A.lean");
        assert_eq!(lock_path(root, file), "My Proofs/A.lean");
        let lock = json!({"path": "My Proofs/A.lean"});
        assert!(of_file(&lock, "My Proofs/A.lean", "./My Proofs/A.lean").is_ok());
        let other = of_file(&lock, "B.lean", "B.lean").unwrap_err();
        assert_eq!(other.data.unwrap()["reason"], "lockPathMismatch");
        let none = of_file(&json!({}), "B.lean", "B.lean").unwrap_err();
        assert_eq!(none.data.unwrap()["reason"], "lockMalformed");
    }

    #[test]
    fn theorems_are_found_by_exact_full_name() {
        let text = "namespace N\n/-- d -/\ntheorem t (n : Nat) :\n  n = n := rfl\nend N\n";
        let found = find(text, "N.t", true).unwrap();
        assert_eq!(found.header, "theorem t (n : Nat) : n = n");
        assert_eq!(found.kind, "theorem");
        assert!(find(text, "t", true).is_none());
        assert_eq!(find(text, "t", false).unwrap().name, "N.t");
    }
}
