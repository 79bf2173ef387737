//! Merging the `lean-beam` entry into a client's configuration text, as `config --write` does.
//!
//! Contract: the result holds exactly one `lean-beam` entry, ours, and everything else the old
//! text held. A TOML file is edited in place (`toml_edit`): its comments, order and layout stay,
//! and an entry already there is replaced where it stands. A JSON file keeps every other member in
//! its written order with its value's text as written (only the members of the objects on the
//! path to our entry are re-indented, in the file's own indentation unit); an entry already there
//! is replaced where it stands and any duplicate of it dropped. Text that does not parse, or
//! whose servers table is not a table, is refused with the reason: nothing is guessed.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use toml_edit::{DocumentMut, Item, Table};

use super::SERVER_NAME;

/// One JSON object's members in their written order, each value as its original text.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

/// `old` (a JSON object's text; empty means none) with `key.lean-beam` set to `entry`, whose
/// fields are given in order as (name, JSON text of the value).
pub fn merge_json(old: &str, key: &str, entry: &[(&str, String)]) -> Result<String, String> {
    let text = if old.trim().is_empty() { "{}" } else { old };
    let top: Members = serde_json::from_str(text).map_err(|e| {
        format!("it does not parse as a JSON object ({e}); fix it or move it away, then run again")
    })?;
    let unit = indent_unit(text);
    let servers = match top.0.iter().find(|(name, _)| name == key) {
        None => Members(Vec::new()),
        Some((_, raw)) => serde_json::from_str(raw.get()).map_err(|_| {
            format!("its \"{key}\" is not a JSON object; make it one, then run again")
        })?,
    };
    let ours = emit(
        entry
            .iter()
            .map(|(name, value)| (name.to_string(), value.clone())),
        &unit,
        3,
    );
    let servers = replace(servers, SERVER_NAME, ours);
    let servers = emit(servers, &unit, 2);
    let top = replace(top, key, servers);
    Ok(format!("{}\n", emit(top, &unit, 1)))
}

/// The members with `name` set to `value` (texts): in the place of its first occurrence, later
/// duplicates dropped, or last when it was absent.
fn replace(members: Members, name: &str, value: String) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(members.0.len() + 1);
    let mut value = Some(value);
    for (member, raw) in members.0 {
        if member != name {
            out.push((member, raw.get().to_owned()));
        } else if let Some(value) = value.take() {
            out.push((member, value));
        }
    }
    if let Some(value) = value {
        out.push((name.to_owned(), value));
    }
    out
}

/// An object of `members` (name, value text) whose members sit at `depth` indentation units.
fn emit(members: impl IntoIterator<Item = (String, String)>, unit: &str, depth: usize) -> String {
    let inner = unit.repeat(depth);
    let lines: Vec<String> = members
        .into_iter()
        .map(|(name, value)| format!("{inner}{}: {value}", json_string(&name)))
        .collect();
    if lines.is_empty() {
        return "{}".to_owned();
    }
    format!("{{\n{}\n{}}}", lines.join(",\n"), unit.repeat(depth - 1))
}

/// The indentation the file uses for its first member (two spaces when it shows none).
fn indent_unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| &line[..line.len() - line.trim_start().len()])
        .find(|indent| !indent.is_empty())
        .unwrap_or("  ")
        .to_owned()
}

/// A JSON string literal.
pub fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("serializing a string cannot fail")
}

/// `old` (a TOML document; empty means none) with `[mcp_servers.lean-beam]` replaced by the one
/// in `snippet` (a document holding that table alone).
pub fn merge_toml(old: &str, snippet: &str) -> Result<String, String> {
    let mut doc: DocumentMut = old.parse().map_err(|e: toml_edit::TomlError| {
        format!(
            "it does not parse as TOML ({}); fix it or move it away, then run again",
            e.to_string().trim()
        )
    })?;
    let ours: DocumentMut = snippet.parse().expect("the snippet is TOML");
    let Some(Item::Table(ours)) = ours
        .get("mcp_servers")
        .and_then(|servers| servers.get(SERVER_NAME))
        .cloned()
    else {
        unreachable!("the snippet holds [mcp_servers.{SERVER_NAME}]")
    };
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Item::Table(servers) = servers else {
        return Err(
            "its mcp_servers is not a table of [mcp_servers.<name>] sections; write it as \
             sections, then run again"
                .to_owned(),
        );
    };
    let mut ours = ours;
    match servers.get(SERVER_NAME) {
        Some(Item::Table(old)) => ours.set_position(old.position()),
        _ => ours.set_position(None),
    }
    ours.decor_mut().clear();
    servers.insert(SERVER_NAME, Item::Table(ours));
    let mut text = doc.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Vec<(&'static str, String)> {
        vec![
            ("command", json_string("/b/lean-beam-mcp")),
            ("args", "[]".to_owned()),
        ]
    }

    #[test]
    fn json_keeps_other_members_in_order_and_replaces_ours_in_place() {
        let old = "{\n    \"z\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n        \"lean-beam\": {\"command\": \"old\"},\n        \"lean-beam\": {\"command\": \"dup\"}\n    },\n    \"a\": [1,2]\n}";
        let new = merge_json(old, "mcpServers", &entry()).unwrap();
        assert_eq!(
            new,
            "{\n    \"z\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n        \"lean-beam\": {\n            \"command\": \"/b/lean-beam-mcp\",\n            \"args\": []\n        }\n    },\n    \"a\": [1,2]\n}\n"
        );
        assert_eq!(merge_json(&new, "mcpServers", &entry()).unwrap(), new);
    }

    #[test]
    fn json_from_nothing_and_refusals() {
        let new = merge_json("", "servers", &entry()).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&new).unwrap();
        assert_eq!(
            parsed["servers"]["lean-beam"]["args"],
            serde_json::json!([])
        );
        assert!(merge_json("{\"a\": ", "servers", &entry()).is_err());
        assert!(merge_json("[]", "servers", &entry()).is_err());
        let error = merge_json("{\"servers\": 3}", "servers", &entry()).unwrap_err();
        assert!(
            error.contains("\"servers\" is not a JSON object"),
            "{error}"
        );
    }

    const SNIPPET: &str = "[mcp_servers.lean-beam]\ncommand = \"/b/lean-beam-mcp\"\nargs = []\n# why\ntool_timeout_sec = 1800\n";

    #[test]
    fn toml_keeps_comments_and_replaces_ours_where_it_stands() {
        let old = "# my settings\nmodel = \"o3\" # inline\n\n[mcp_servers.lean-beam]\ncommand = \"old\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[profiles.a]\nk = 1";
        let new = merge_toml(old, SNIPPET).unwrap();
        assert_eq!(
            new,
            "# my settings\nmodel = \"o3\" # inline\n\n[mcp_servers.lean-beam]\ncommand = \"/b/lean-beam-mcp\"\nargs = []\n# why\ntool_timeout_sec = 1800\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[profiles.a]\nk = 1\n"
        );
        assert_eq!(merge_toml(&new, SNIPPET).unwrap(), new);
    }

    #[test]
    fn toml_without_a_final_newline_gets_our_table_after_it() {
        let new = merge_toml("model = \"o3\"", SNIPPET).unwrap();
        let table: toml::Table = new.parse().unwrap();
        assert_eq!(table["model"].as_str(), Some("o3"));
        assert_eq!(
            table["mcp_servers"]["lean-beam"]["tool_timeout_sec"].as_integer(),
            Some(1800)
        );
        assert_eq!(merge_toml(&new, SNIPPET).unwrap(), new);
        assert_eq!(merge_toml("", SNIPPET).unwrap(), SNIPPET);
    }

    #[test]
    fn toml_that_does_not_parse_or_holds_servers_inline_is_refused() {
        let duplicate = format!("{SNIPPET}{SNIPPET}");
        let error = merge_toml(&duplicate, SNIPPET).unwrap_err();
        assert!(error.contains("does not parse as TOML"), "{error}");
        assert!(merge_toml("mcp_servers = 1", SNIPPET).is_err());
        assert!(merge_toml("mcp_servers = { a = 1 }", SNIPPET).is_err());
    }
}
