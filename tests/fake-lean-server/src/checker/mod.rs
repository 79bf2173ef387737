//! The certification checker's model (README "The certification checker"): the environment
//! `importModules` would load from the BUILT artifacts, and the checker's answer over it
//! (`src/lean/certify/checker/CONTRACT.md`; `lean_run.rs` runs it).
//!
//! Contract:
//! 1. [`Env::load`] reads each module's `.olean` (the text its last build compiled,
//!    `lake_build::built_text`), then the modules it imports that the workspace builds, imports
//!    first. Imports outside the workspace (the toolchain, dependency packages) hold only the
//!    [`BUILTINS`]. Nothing of a file is run: macros, elaborators and redefined commands play no
//!    part; only declarations and the `add-decl` directive (a `run_cmd`/`elab` that adds a
//!    constant) put constants in the environment.
//! 2. Names are Lean's: the namespaces enclosing the declaration (`_root_.x` opts out), `«»`
//!    only quoting (`«main»` is `main`), `private` names mangled as Lean's `mkPrivateName`
//!    (`_private.<Module>.0.<name>`), constructors, `.rec` and structure projections, and for a
//!    `partial def f` the opaque `f` and the unsafe `f._unsafe_rec`.
//! 3. A constant names the constants whose names appear in its type (binders and type, or the
//!    `type` directive's text) and value (the text after `:=`), resolved as Lean resolves a
//!    name: under each enclosing namespace, innermost first, then at the root, then under each
//!    `open` (an `open … in` prefix's too); `h.elim` names `h`. Its own axioms are `#print axioms`' (`certify::own`), except
//!    that a partial or opaque-without-value constant's value is an inhabitant, so its body adds
//!    nothing; its closure, axioms and replay follow the contract's rules over these references.
//! 4. A constant declared while `debug.skipKernelTC` (however quoted) is true, or added by an
//!    `add-decl … unchecked` directive, never met the kernel: its replay fails. A safe constant
//!    naming an unsafe one fails as the kernel fails it.
//!
//! `env.rs` builds the environment (points 1 to 4's constants and references); `answer.rs` reads
//! the request and answers it (the closure, its hash, the axioms and the replay).

mod answer;
mod env;

pub use answer::{Request, answer};
pub use env::{BUILTINS, Constant, Env, LoadError, components, printed};
