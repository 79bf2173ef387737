//! The environment `importModules` would load, as the fake models it (the contract's points 1
//! to 4, `mod.rs`): each built module's constants, their kinds, references and own axioms.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::analysis::Analysis;
use crate::decl::{Decl, normalize_ws};
use crate::lake_build;
use crate::lexer;
use crate::outline::{CmdKind, Command};
use crate::text::Text;

/// What the fake knows of the toolchain's own constants: their names and kinds.
pub const BUILTINS: [(&str, &str); 17] = [
    ("sorryAx", "axiom"),
    ("propext", "axiom"),
    ("Classical.choice", "axiom"),
    ("Quot.sound", "axiom"),
    ("Lean.ofReduceBool", "axiom"),
    ("Nat", "inductive"),
    ("Int", "inductive"),
    ("Bool", "inductive"),
    ("Eq", "inductive"),
    ("True", "inductive"),
    ("False", "inductive"),
    ("And", "inductive"),
    ("Or", "inductive"),
    ("Iff", "inductive"),
    ("Not", "def"),
    ("List", "inductive"),
    ("String", "inductive"),
];

/// Theorems of `Init/Classical.lean` the fake knows (reached through `open Classical` too); each
/// depends on the three classical axioms, as `Classical.em` does (Diaconescu, via `choice`).
const CLASSICAL: [&str; 4] = [
    "Classical.em",
    "Classical.byContradiction",
    "Classical.byCases",
    "Classical.not_not",
];

#[derive(Clone, Debug, Default)]
pub struct Constant {
    /// The name as `Name.toString` prints it.
    pub name: String,
    pub kind: &'static str,
    pub module: String,
    /// The elaborated type the fake knows (for people, and for the hash).
    pub ty: String,
    /// A definition's value text (the hash covers it).
    pub value: Option<String>,
    pub type_refs: BTreeSet<String>,
    pub value_refs: BTreeSet<String>,
    /// Constructors of an inductive; the inductive of a constructor or recursor.
    pub companions: Vec<String>,
    pub own_axioms: BTreeSet<String>,
    pub unchecked: bool,
    pub is_unsafe: bool,
    /// For a declaration: the texts in scope where it is stated that change what its statement
    /// elaborates to (see [`Env::scope`]).
    pub scope: Vec<String>,
}

/// Why the environment could not be loaded, in Lean's words (`importModules`).
#[derive(Debug)]
pub struct LoadError(pub String);

#[derive(Default)]
pub struct Env {
    pub consts: BTreeMap<String, Constant>,
    /// Each loaded module's workspace imports.
    imports: BTreeMap<String, Vec<String>>,
    /// Each loaded module's scope-changing commands, by command index.
    scopes: BTreeMap<String, Vec<(usize, String)>>,
}

/// A name's components, `«»` removed (`Foo.«bar baz»` is `Foo`, `bar baz`).
pub fn components(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in name.chars() {
        match c {
            '«' if !quoted => quoted = true,
            '»' if quoted => quoted = false,
            '.' if !quoted => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out
}

/// `Name.toString`: components joined by `.`, each quoted in `«»` unless it reads as an
/// identifier (`Name.escapePart`, `Lean/Data/Name.lean` … `Init/Meta.lean`).
pub fn printed<S: AsRef<str>>(components: &[S]) -> String {
    let part = |s: &str| {
        let mut chars = s.chars();
        let plain = chars.next().is_some_and(lexer::is_ident_start)
            && s.chars().all(lexer::is_ident_char)
            || s.parse::<u64>().is_ok();
        if plain {
            s.to_owned()
        } else {
            format!("«{s}»")
        }
    };
    let parts: Vec<String> = components.iter().map(|c| part(c.as_ref())).collect();
    parts.join(".")
}

fn canonical(name: &str) -> String {
    printed(&components(name))
}

/// The command words whose commands change what later statements elaborate to without being
/// constants: notations, macros and syntax, elaborators, attributes (`attribute [instance]`).
const SCOPE_WORDS: [&str; 13] = [
    "notation",
    "infix",
    "infixl",
    "infixr",
    "prefix",
    "postfix",
    "macro",
    "macro_rules",
    "syntax",
    "elab",
    "elab_rules",
    "attribute",
    "instance",
];

impl Env {
    /// The environment of `module` as built: its `.olean` and its workspace imports'.
    pub fn load(root: &Path, module: &str) -> Result<Env, LoadError> {
        let mut env = Env::default();
        for (k, v) in BUILTINS {
            env.consts.insert(
                k.to_owned(),
                Constant {
                    name: k.to_owned(),
                    kind: v,
                    module: "Init".to_owned(),
                    ty: String::new(),
                    ..Constant::default()
                },
            );
        }
        for n in CLASSICAL {
            let axioms = ["Classical.choice", "propext", "Quot.sound"];
            env.consts.insert(
                n.to_owned(),
                Constant {
                    name: n.to_owned(),
                    kind: "theorem",
                    module: "Init.Classical".to_owned(),
                    own_axioms: axioms.map(String::from).into(),
                    ..Constant::default()
                },
            );
        }
        let mut order = Vec::new();
        let mut texts = BTreeMap::new();
        visit(root, module, &mut order, &mut texts)?;
        for m in &order {
            env.add_module(root, m, &texts[m]);
        }
        Ok(env)
    }

    fn add_module(&mut self, root: &Path, module: &str, text: &str) {
        let a = Analysis::new(Text::new(text));
        let workspace: Vec<String> = a
            .outline
            .imports
            .iter()
            .filter(|i| lake_build::source(root, i).exists())
            .cloned()
            .collect();
        self.imports.insert(module.to_owned(), workspace);
        let last = a.exit.unwrap_or(a.outline.commands.len());
        let mut declared: Vec<(usize, Constant, Option<usize>)> = Vec::new();
        let mut scope = Vec::new();
        for (k, c) in a.outline.commands.iter().enumerate().take(last) {
            let unchecked = skip_kernel(&a, k);
            let word = command_word(&a, c);
            if SCOPE_WORDS.contains(&word.as_str()) {
                scope.push((k, normalize_ws(&text[c.start..c.end])));
            }
            if let CmdKind::Decl(i) = c.kind {
                for (constant, decl) in constants_of(&a, module, i) {
                    declared.push((
                        k,
                        Constant {
                            unchecked,
                            ..constant
                        },
                        decl,
                    ));
                }
            }
            for d in a.directives.iter().filter(|d| d.name == "add-decl") {
                let line = d.target as usize;
                let here = a.text.line_of(c.start) <= line && line <= a.text.line_of(c.end);
                if let (true, Some(name)) = (here, d.str_arg(0)) {
                    declared.push((k, added(d, module, name, unchecked), None));
                }
            }
        }
        self.scopes.insert(module.to_owned(), scope);
        // Names first, so a declaration may name one declared after it (a mutual block).
        for (_, constant, _) in &declared {
            self.consts.insert(constant.name.clone(), constant.clone());
        }
        for (k, mut constant, decl) in declared {
            let c = &a.outline.commands[k];
            if let Some(i) = decl {
                let d = &a.outline.decls[i];
                let value = value_span(&a, d, &constant);
                constant.type_refs = self.refs(&a, module, c, &constant.ty, &constant.name);
                constant.value_refs = self.refs(&a, module, c, &value, &constant.name);
            }
            constant.scope = self.scope(module, k);
            self.consts.insert(constant.name.clone(), constant);
        }
    }

    /// The constants `text` names at command `c` of `module` (see the contract), without `me`.
    fn refs(
        &self,
        a: &Analysis,
        module: &str,
        c: &Command,
        text: &str,
        me: &str,
    ) -> BTreeSet<String> {
        let mut opens = c.opens.clone();
        opens.extend(prefix_opens(a.code(), c));
        lexer::idents(text, 0, text.len())
            .into_iter()
            .filter_map(|(x, y)| self.resolve(module, c, &opens, &text[x..y]))
            .filter(|n| n != me)
            .collect()
    }

    /// What identifier `word` names at command `c` of `module`: `ResolveName.resolveGlobalName`
    /// over the constants (a private one of the module by its own name), a projection
    /// (`h.elim`) naming its head.
    fn resolve(&self, module: &str, c: &Command, opens: &[String], word: &str) -> Option<String> {
        let known = |n: &String| {
            let private = format!("_private.{module}.0.{n}");
            if self.consts.contains_key(&private) {
                Some(private)
            } else {
                self.consts.contains_key(n).then(|| n.clone())
            }
        };
        let parts = components(word);
        let ns: Vec<String> = c.ns.iter().flat_map(|n| components(n)).collect();
        for k in (1..=parts.len()).rev() {
            let head = &parts[..k];
            if head[0] == "_root_" {
                match known(&printed(&head[1..])) {
                    Some(n) => return Some(n),
                    None => continue,
                }
            }
            let scoped = (0..=ns.len()).rev().map(|j| {
                let mut full: Vec<String> = ns[..j].to_vec();
                full.extend(head.iter().cloned());
                printed(&full)
            });
            let opened = opens.iter().map(|o| {
                let mut full = components(o);
                full.extend(head.iter().cloned());
                printed(&full)
            });
            if let Some(n) = scoped.chain(opened).find_map(|n| known(&n)) {
                return Some(n);
            }
        }
        None
    }

    /// The modules replayed: `modules` and every loaded module importing one of them, directly
    /// or not (the real checker's base environment cannot hold those).
    pub fn replay_set(&self, modules: &BTreeSet<String>) -> BTreeSet<String> {
        let mut set = modules.clone();
        loop {
            let more: Vec<String> = self
                .imports
                .iter()
                .filter(|(m, imports)| !set.contains(*m) && imports.iter().any(|i| set.contains(i)))
                .map(|(m, _)| m.clone())
                .collect();
            if more.is_empty() {
                return set;
            }
            set.extend(more);
        }
    }

    /// The scope-changing commands in force where command `k` of `module` stands: those of the
    /// workspace modules it imports (transitively) and its own before `k`. The fake cannot
    /// elaborate, so it counts them all into a statement's hash, as Lean's elaborated type would
    /// change with any of them that applies.
    fn scope(&self, module: &str, k: usize) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut todo = self.imports.get(module).cloned().unwrap_or_default();
        let mut out = Vec::new();
        while let Some(m) = todo.pop() {
            if !seen.insert(m.clone()) {
                continue;
            }
            out.extend(
                self.scopes
                    .get(&m)
                    .into_iter()
                    .flatten()
                    .map(|s| s.1.clone()),
            );
            todo.extend(self.imports.get(&m).cloned().unwrap_or_default());
        }
        out.sort();
        let own = self.scopes.get(module).into_iter().flatten();
        out.extend(own.filter(|s| s.0 < k).map(|s| s.1.clone()));
        out
    }
}

/// Loads `module`'s built text and its workspace imports', imports first.
fn visit(
    root: &Path,
    module: &str,
    order: &mut Vec<String>,
    texts: &mut BTreeMap<String, String>,
) -> Result<(), LoadError> {
    if texts.contains_key(module) {
        return Ok(());
    }
    // `findOLean` searches `LEAN_PATH`, which `lake env` sets to the build directory: an
    // `.olean` left in Lake's artifact cache after a fetch is not found there.
    let olean = lake_build::local(root, module).path("olean");
    let Ok(contents) = std::fs::read_to_string(&olean) else {
        // `importModulesCore`/`findOLean` (`Lean/Environment.lean`, `Lean/Util/Path.lean`).
        return Err(LoadError(format!(
            "object file '{}' of module {module} does not exist",
            olean.display()
        )));
    };
    let Some((_, text)) = lake_build::built_text(&contents) else {
        // `readModuleData` of a file that is no `.olean` (`src/runtime/object.cpp`'s header check).
        return Err(LoadError(format!(
            "failed to read file '{}', invalid header",
            olean.display()
        )));
    };
    texts.insert(module.to_owned(), text.to_owned());
    let a = Analysis::new(Text::new(text));
    for i in &a.outline.imports {
        if lake_build::source(root, i).exists() {
            visit(root, i, order, texts)?;
        }
    }
    order.push(module.to_owned());
    Ok(())
}

/// The namespaces an `open … in` prefix of command `c` opens for it (`Lean/Elab/BuiltinCommand.lean`:
/// `open Foo in cmd` elaborates `cmd` with `Foo` open).
fn prefix_opens(code: &str, c: &Command) -> Vec<String> {
    let mut out = Vec::new();
    let mut opening = false;
    for (x, y) in lexer::idents(code, c.start, c.body) {
        match &code[x..y] {
            "open" => opening = true,
            "in" | "set_option" => opening = false,
            "scoped" | "hiding" | "renaming" => {}
            word if opening => out.push(word.to_owned()),
            _ => {}
        }
    }
    out
}

/// The first word of a command, after its `… in` prefixes and modifiers.
fn command_word(a: &Analysis, c: &Command) -> String {
    let code = a.code();
    let mut i = c.body;
    for m in crate::outline::MODIFIERS {
        if lexer::word_at(code, i, m) {
            i = lexer::skip_ws(code, i + m.len(), c.end);
        }
    }
    code[i..c.end]
        .split(|ch: char| ch.is_whitespace() || ch == '[' || ch == '(')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Whether `debug.skipKernelTC` is true at command `k`: its `set_option … in` prefixes, else the
/// last `set_option` command before it; the option's name read as Lean reads it (`«»` quote).
fn skip_kernel(a: &Analysis, k: usize) -> bool {
    let is_it = |n: &str| canonical(n) == "debug.skipKernelTC";
    let c = &a.outline.commands[k];
    let scoped = c.prefix.options.iter().rev().find(|(n, _)| is_it(n));
    let earlier = a.outline.commands[..k]
        .iter()
        .rev()
        .find_map(|x| match &x.kind {
            CmdKind::SetOption(n, v) if is_it(n) => Some(v.as_str()),
            _ => None,
        });
    scoped.map(|(_, v)| v.as_str()).or(earlier) == Some("true")
}

/// The constants declaration `i` of `a` adds (see the contract), each with the declaration it
/// reads its references from.
fn constants_of(a: &Analysis, module: &str, i: usize) -> Vec<(Constant, Option<usize>)> {
    let d = &a.outline.decls[i];
    let Some(full) = d.full_name.as_deref() else {
        return Vec::new();
    };
    let code = a.code();
    let c = a.outline.decl_command(d);
    let has = |w: &str| lexer::find_word(code, c.body, d.kw_start, w).is_some();
    let name = if has("private") {
        format!("_private.{module}.0.{}", canonical(full))
    } else {
        canonical(full)
    };
    let ty = crate::certify::elaborated_type(a, d);
    let own: BTreeSet<String> = crate::certify::own(a, d)
        .into_iter()
        .filter(|x| Some(x.as_str()) != d.full_name.as_deref())
        .collect();
    let base = Constant {
        name: name.clone(),
        module: module.to_owned(),
        ty: ty.clone(),
        is_unsafe: has("unsafe"),
        ..Constant::default()
    };
    let with_value = d.assign.is_some();
    let mut out = Vec::new();
    match d.keyword.as_str() {
        "theorem" | "lemma" => out.push((
            Constant {
                kind: "theorem",
                own_axioms: own,
                ..base
            },
            Some(i),
        )),
        "def" | "abbrev" | "instance" if has("partial") => {
            // `addAndCompilePartial`: the opaque `f` with an inhabitant as value, and the body
            // in the unsafe `f._unsafe_rec` (`Lean/Elab/PreDefinition/Main.lean`).
            out.push((
                Constant {
                    kind: "opaque",
                    ..base.clone()
                },
                Some(i),
            ));
            out.push((
                Constant {
                    name: format!("{name}._unsafe_rec"),
                    kind: "def",
                    is_unsafe: true,
                    own_axioms: own,
                    ..base
                },
                Some(i),
            ));
        }
        "def" | "abbrev" | "instance" => out.push((
            Constant {
                kind: "def",
                value: Some(value_text(a, d)),
                own_axioms: own,
                ..base
            },
            Some(i),
        )),
        "opaque" => out.push((
            Constant {
                kind: "opaque",
                own_axioms: if with_value { own } else { BTreeSet::new() },
                ..base
            },
            Some(i),
        )),
        "axiom" => out.push((
            Constant {
                kind: "axiom",
                own_axioms: BTreeSet::from([name.clone()]),
                ..base
            },
            Some(i),
        )),
        "structure" | "class" | "inductive" => {
            let members: Vec<&Decl> = a
                .outline
                .decls
                .iter()
                .filter(|m| m.parent == Some(i))
                .collect();
            let ctor_names: Vec<String> = if d.keyword == "inductive" {
                members
                    .iter()
                    .filter_map(|m| m.full_name.as_deref().map(canonical))
                    .collect()
            } else {
                vec![format!("{name}.mk")]
            };
            out.push((
                Constant {
                    kind: "inductive",
                    companions: ctor_names.clone(),
                    ..base.clone()
                },
                Some(i),
            ));
            for ctor in ctor_names {
                out.push((
                    Constant {
                        name: ctor,
                        kind: "ctor",
                        ty: name.clone(),
                        companions: vec![name.clone()],
                        ..base.clone()
                    },
                    None,
                ));
            }
            if d.keyword != "inductive" {
                for field in members.iter().filter_map(|m| m.full_name.as_deref()) {
                    out.push((
                        Constant {
                            name: canonical(field),
                            kind: "def",
                            ty: name.clone(),
                            value: Some(String::new()),
                            type_refs: BTreeSet::from([name.clone()]),
                            ..base.clone()
                        },
                        None,
                    ));
                }
            }
            out.push((
                Constant {
                    name: format!("{name}.rec"),
                    kind: "rec",
                    companions: vec![name.clone()],
                    type_refs: BTreeSet::from([name.clone()]),
                    ..base
                },
                None,
            ));
        }
        _ => {}
    }
    out
}

/// Where a declaration's value begins: after `:=`, else after its name (`where`, `|` arms).
fn value_start(a: &Analysis, d: &Decl) -> usize {
    let c = a.outline.decl_command(d);
    d.assign
        .or(d.name_span.map(|s| s.1))
        .unwrap_or(c.end)
        .min(c.end)
}

/// A definition's value as the hash reads it: its code (comments blanked), whitespace-normalised.
fn value_text(a: &Analysis, d: &Decl) -> String {
    normalize_ws(&a.code()[value_start(a, d)..a.outline.decl_command(d).end])
}

/// The code a declared constant's value references are read from. A partial definition's
/// opaque and a value-less `opaque` have an inhabitant of their type as value: nothing more.
fn value_span(a: &Analysis, d: &Decl, constant: &Constant) -> String {
    let reads = match constant.kind {
        "theorem" | "def" => true,
        "opaque" => d.keyword == "opaque" && d.assign.is_some(),
        _ => false,
    };
    match reads {
        true => a.code()[value_start(a, d)..a.outline.decl_command(d).end].to_owned(),
        false => String::new(),
    }
}

/// A constant an `add-decl "NAME" [KIND] ["REF"…] [unchecked]` directive adds (a `run_cmd` or
/// `elab` that calls `addDecl`, or one that skips the kernel).
fn added(d: &crate::directives::Directive, module: &str, name: &str, unchecked: bool) -> Constant {
    const KINDS: [&str; 5] = ["theorem", "axiom", "def", "opaque", "inductive"];
    let kind = KINDS
        .into_iter()
        .find(|k| d.has_flag(k))
        .unwrap_or("theorem");
    let name = canonical(name);
    let refs: BTreeSet<String> = d
        .positional
        .iter()
        .skip(1)
        .filter_map(|v| v.as_str().map(canonical))
        .collect();
    Constant {
        name: name.clone(),
        kind,
        module: module.to_owned(),
        own_axioms: if kind == "axiom" {
            BTreeSet::from([name])
        } else {
            BTreeSet::new()
        },
        value_refs: refs,
        unchecked: unchecked || d.has_flag("unchecked"),
        ..Constant::default()
    }
}
