-- lean-beam certification checker, protocol 1
/-
The certification checker of lean-beam-mcp. The host writes this file to
`<root>/.lake/beam/certify/Checker.lean` and runs, in the workspace,

    lake env lean --run .lake/beam/certify/Checker.lean <request.json>

It reads the request, loads the BUILT module with `importModules` (initializers are not run,
trust level 0), and prints one JSON line answering for each requested name: whether it exists,
its kind, module and type (`pp.all`), its statement closure and that closure's hash, its axioms
(`Lean.collectAxioms`, full names), and a kernel replay of every constant it depends on that
comes from the workspace's own modules. Nothing the checked file prints about itself is read:
macros, elaborators and options of the user's files never run here. The answer's shape is
`CONTRACT.md` beside this file.

Only APIs that have kept their shape across the toolchains the server supports are used (see
CONTRACT.md, "Toolchains"); each is cited with the file of `leanprover/lean4` that declares it.
-/
import Lean

open Lean

namespace LeanBeamChecker

/-! ## SHA-256 (FIPS 180-4)

The closure's hash. `Expr.hash` (a 64-bit structural mix) could be matched by a crafted
definition, so the canonical serialization of the closure is hashed with SHA-256 instead. -/

def roundConstants : Array UInt32 := #[
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]

def rotr (x : UInt32) (n : UInt32) : UInt32 :=
  (x >>> n) ||| (x <<< (32 - n))

/-- One 64-byte block of `m` at `off` folded into the state `h`. -/
def compress (h : Array UInt32) (m : ByteArray) (off : Nat) : Array UInt32 := Id.run do
  let mut w : Array UInt32 := #[]
  for i in [0:16] do
    let byte := fun (j : Nat) => (m.get! (off + 4 * i + j)).toUInt32
    w := w.push ((byte 0 <<< 24) ||| (byte 1 <<< 16) ||| (byte 2 <<< 8) ||| byte 3)
  for i in [16:64] do
    let x := w[i - 15]!
    let y := w[i - 2]!
    let s0 := rotr x 7 ^^^ rotr x 18 ^^^ (x >>> 3)
    let s1 := rotr y 17 ^^^ rotr y 19 ^^^ (y >>> 10)
    w := w.push (w[i - 16]! + s0 + w[i - 7]! + s1)
  let mut a := h[0]!
  let mut b := h[1]!
  let mut c := h[2]!
  let mut d := h[3]!
  let mut e := h[4]!
  let mut f := h[5]!
  let mut g := h[6]!
  let mut k := h[7]!
  for i in [0:64] do
    let s1 := rotr e 6 ^^^ rotr e 11 ^^^ rotr e 25
    let ch := (e &&& f) ^^^ ((~~~e) &&& g)
    let t1 := k + s1 + ch + roundConstants[i]! + w[i]!
    let s0 := rotr a 2 ^^^ rotr a 13 ^^^ rotr a 22
    let maj := (a &&& b) ^^^ (a &&& c) ^^^ (b &&& c)
    let t2 := s0 + maj
    k := g
    g := f
    f := e
    e := d + t1
    d := c
    c := b
    b := a
    a := t1 + t2
  return #[h[0]! + a, h[1]! + b, h[2]! + c, h[3]! + d, h[4]! + e, h[5]! + f, h[6]! + g,
    h[7]! + k]

def hex8 (x : UInt32) : String :=
  let digits := (Nat.toDigits 16 x.toNat).foldl String.push ""
  "".pushn '0' (8 - digits.length) ++ digits

def sha256 (msg : ByteArray) : String := Id.run do
  let bits : UInt64 := msg.size.toUInt64 * 8
  let mut m := msg.push 0x80
  while m.size % 64 != 56 do
    m := m.push 0
  for i in [0:8] do
    m := m.push (bits >>> (8 * (7 - i)).toUInt64).toUInt8
  let mut h : Array UInt32 := #[0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
    0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
  let mut off := 0
  while off < m.size do
    h := compress h m off
    off := off + 64
  return h.foldl (fun s x => s ++ hex8 x) ""

/-! ## Canonical serialization of expressions

Every distinct subterm gets a number the first time it is met (memoized, so a term shared many
times is written once) and is written as one line naming its children by number. Binder names
and metadata do not change what a term means and are left out; everything else is written,
names and strings with their length before them so no two terms write the same text.
`Expr` and `Level` constructors: `src/Lean/Expr.lean`, `src/Lean/Level.lean`. -/

def framed (s : String) : String := s!"{s.length}:{s}"

partial def levelText : Level → String
  | .zero => "0"
  | .succ l => s!"s({levelText l})"
  | .max a b => s!"m({levelText a},{levelText b})"
  | .imax a b => s!"i({levelText a},{levelText b})"
  | .param n => s!"p{framed n.toString}"
  | .mvar _ => "?"

def levelsText (us : List Level) : String :=
  framed (",".intercalate (us.map levelText))

def binderText : BinderInfo → String
  | .implicit => "i"
  | .strictImplicit => "s"
  | .instImplicit => "c"
  | _ => "d"

/-- An expression compared with `Expr.equal` (`src/Lean/Expr.lean`): binder names and
annotations count. `BEq Expr` is `Expr.eqv`, which ignores annotations, so an implicit binder
made explicit would reuse an earlier id and leave the hash unchanged. -/
structure Key where
  e : Expr

instance : BEq Key := ⟨fun a b => a.e.equal b.e⟩
instance : Hashable Key := ⟨fun a => a.e.hash⟩

structure Serial where
  ids : PersistentHashMap Key Nat := {}
  out : String := ""
  count : Nat := 0

partial def serialize (r : IO.Ref Serial) (e : Expr) : IO Nat := do
  if let some i := (← r.get).ids.find? ⟨e⟩ then
    return i
  let line ← match e with
    | .bvar i => pure s!"B{i}"
    | .fvar id => pure s!"F{framed id.name.toString}"
    | .mvar id => pure s!"M{framed id.name.toString}"
    | .sort u => pure s!"S{framed (levelText u)}"
    | .const n us => pure s!"C{framed n.toString}{levelsText us}"
    | .app f a => do
      let i ← serialize r f
      let j ← serialize r a
      pure s!"A{i},{j}"
    | .lam _ t b bi => do
      let i ← serialize r t
      let j ← serialize r b
      pure s!"L{binderText bi}{i},{j}"
    | .forallE _ t b bi => do
      let i ← serialize r t
      let j ← serialize r b
      pure s!"P{binderText bi}{i},{j}"
    | .letE _ t v b _ => do
      let i ← serialize r t
      let j ← serialize r v
      let k ← serialize r b
      pure s!"T{i},{j},{k}"
    | .lit (.natVal n) => pure s!"N{n}"
    | .lit (.strVal s) => pure s!"Z{framed s}"
    | .mdata _ b => do
      let i ← serialize r b
      pure s!"D{i}"
    | .proj s i b => do
      let j ← serialize r b
      pure s!"J{framed s.toString}{i},{j}"
  -- `modifyGet` takes the state out of the reference, so `out` grows in place.
  r.modifyGet fun s =>
    (s.count, { ids := s.ids.insert ⟨e⟩ s.count, out := s.out ++ s!"{s.count}={line}\n",
                count := s.count + 1 })

/-! ## Names, kinds, modules -/

partial def components : Name → List String
  | .anonymous => []
  | .str p s => components p ++ [s]
  | .num p k => components p ++ [toString k]

def ofComponents (cs : Array String) : Name :=
  cs.foldl Name.mkStr Name.anonymous

def sortNames (ns : Array Name) : Array Name :=
  ns.qsort (fun a b => decide (a.toString < b.toString))

def kindOf : ConstantInfo → String
  | .thmInfo _ => "theorem"
  | .axiomInfo _ => "axiom"
  | .defnInfo _ => "def"
  | .opaqueInfo _ => "opaque"
  | .quotInfo _ => "quot"
  | .inductInfo _ => "inductive"
  | .ctorInfo _ => "ctor"
  | .recInfo _ => "rec"

/-- Every constant an expression names (`Expr.getUsedConstants`, `src/Lean/Util/FoldConsts.lean`). -/
def used (es : Array Expr) : Array Name :=
  es.foldl (fun acc e => acc ++ e.getUsedConstants) #[]

/-- A constant's type and, for definitions, theorems and opaque constants, its value: what the
kernel checks when it is added, and what `collectAxioms` follows. -/
def typeAndValue : ConstantInfo → Array Expr
  | .defnInfo v => #[v.type, v.value]
  | .thmInfo v => #[v.type, v.value]
  | .opaqueInfo v => #[v.type, v.value]
  | ci => #[ci.type]

/-- The constants a constant needs beside its expressions: an inductive its mutual block and
constructors, a constructor its inductive, a recursor its inductives. -/
def companions : ConstantInfo → List Name
  | .inductInfo v => v.all ++ v.ctors
  | .ctorInfo v => [v.induct]
  | .recInfo v => v.all
  | _ => []

/-- The module of each constant of the given modules (`EnvironmentHeader.moduleNames` and
`.moduleData`, `ModuleData.constNames`: `src/Lean/Environment.lean`). -/
def owners (env : Environment) (mods : NameSet) : PersistentHashMap Name Name := Id.run do
  let mut out : PersistentHashMap Name Name := {}
  for (m, md) in env.header.moduleNames.zip env.header.moduleData do
    if mods.contains m then
      for n in md.constNames do
        out := out.insert n m
  return out

def moduleOf (env : Environment) (own : PersistentHashMap Name Name) (n : Name) : Option Name :=
  match own.find? n with
  | some m => some m
  | none => Id.run do
    for (m, md) in env.header.moduleNames.zip env.header.moduleData do
      if md.constNames.contains n then
        return some m
    return none

/-! ## The statement closure (CONTRACT.md): reachable from the TYPE, never the proof. -/

/-- What a closure member contributes: definitions (abbrevs and instances are definitions)
their type and value; every other kind its type alone. An inductive also reaches its
constructors. -/
def contribution : ConstantInfo → Array Expr × List Name
  | .defnInfo v => (#[v.type, v.value], [])
  | .inductInfo v => (#[v.type], v.ctors)
  | ci => (#[ci.type], [])

def closure (env : Environment) (root : ConstantInfo) : Array ConstantInfo := Id.run do
  let mut seen : NameSet := ({} : NameSet).insert root.name
  let mut members : Array ConstantInfo := #[root]
  let mut todo : Array Name := used #[root.type]
  while !todo.isEmpty do
    let n := todo[todo.size - 1]!
    todo := todo.pop
    if seen.contains n then
      continue
    seen := seen.insert n
    if let some ci := env.find? n then
      members := members.push ci
      let (es, more) := contribution ci
      todo := todo ++ used es ++ more.toArray
  return members

def closureHash (members : Array ConstantInfo) : IO String := do
  let r ← IO.mkRef ({} : Serial)
  let sorted := members.qsort (fun a b => decide (a.name.toString < b.name.toString))
  for ci in sorted do
    let lps := ",".intercalate (ci.levelParams.map fun u => u.toString)
    r.modify fun s => { s with
      out := s.out ++ s!"member {framed ci.name.toString} {kindOf ci} {framed lps}\n" }
    let (es, _) := contribution ci
    for e in es do
      let i ← serialize r e
      r.modify fun s => { s with out := s.out ++ s!"expr {i}\n" }
  return sha256 (← r.get).out.toUTF8

/-! ## Kernel replay

As lean4checker and Lean's own `Environment.replay` (`src/Lean/Replay.lean`) do: every constant
the theorem depends on (type and value, transitively) that comes from a workspace module is
given to the kernel again, in dependency order, in an environment that holds everything else
(the workspace's other imports). Constructors and recursors are not sent: the kernel generates
them with their inductive, and they must equal the stored ones. Unsafe and partial constants
are implementation only (`partial def f` is the opaque `f` plus the unsafe `f._unsafe_rec`,
`src/Lean/Elab/PreDefinition/Main.lean`), never used by a safe constant the kernel accepted,
so they are skipped as `Replay.lean` skips them; a safe constant that names one fails. The
kernel is reached through `Lean.addDecl` (`src/Lean/AddDecl.lean`; `src/Lean/CoreM.lean` in
older toolchains), run with `debug.skipKernelTC` false and `Elab.async` false (synchronous). -/

/-- A `partial` definition (`DefinitionSafety.partial`, `src/Lean/Declaration.lean`): the
`_unsafe_rec` implementation of a `partial def`. -/
def isPartialDef : ConstantInfo → Bool
  | .defnInfo v => v.safety == .partial
  | _ => false

structure Replay where
  consts : PersistentHashMap Name ConstantInfo
  visited : IO.Ref NameSet
  ctors : IO.Ref (Array Name)
  recs : IO.Ref (Array Name)
  checked : IO.Ref Nat
  failure : IO.Ref (Option (Name × String))

def kernelAdd (r : Replay) (n : Name) (d : Declaration) : CoreM Unit := do
  try
    addDecl d
  catch e =>
    let words ← e.toMessageData.toString
    (r.failure.set (some (n, words)) : IO Unit)
    throw e
  (r.checked.modify (· + 1) : IO Unit)

def refuse (r : Replay) (n : Name) (words : String) : CoreM Unit := do
  (r.failure.set (some (n, words)) : IO Unit)
  throwError words

partial def replayConst (r : Replay) (n : Name) : CoreM Unit := do
  let some ci := r.consts.find? n | return
  if (← (r.visited.get : IO NameSet)).contains n then
    return
  (r.visited.modify (·.insert n) : IO Unit)
  if ci.isUnsafe || isPartialDef ci then
    return
  for m in used (typeAndValue ci) ++ (companions ci).toArray do
    replayConst r m
  match ci with
  | .defnInfo v => kernelAdd r n (.defnDecl v)
  | .thmInfo v => kernelAdd r n (.thmDecl v)
  | .axiomInfo v => kernelAdd r n (.axiomDecl v)
  | .opaqueInfo v => kernelAdd r n (.opaqueDecl v)
  | .quotInfo _ => kernelAdd r n .quotDecl
  | .ctorInfo _ => (r.ctors.modify (·.push n) : IO Unit)
  | .recInfo _ => (r.recs.modify (·.push n) : IO Unit)
  | .inductInfo v =>
    let mut types : Array InductiveType := #[]
    for m in v.all do
      (r.visited.modify (·.insert m) : IO Unit)
    for m in v.all do
      match r.consts.find? m with
      | some (.inductInfo iv) =>
        for d in used #[iv.type] do
          replayConst r d
        let mut ctors : Array Constructor := #[]
        for c in iv.ctors do
          match r.consts.find? c with
          | some cc =>
            for d in used #[cc.type] do
              replayConst r d
            ctors := ctors.push { name := c, type := cc.type }
          | none => refuse r n s!"constructor {c} of {m} is missing from its module"
        types := types.push { name := m, type := iv.type, ctors := ctors.toList }
      | _ => refuse r n s!"inductive {m} of the block of {n} is missing from its module"
    kernelAdd r n (.inductDecl v.levelParams v.numParams types.toList v.isUnsafe)

/-- The generated constructors and recursors equal the stored ones (`Replay.lean`'s
`checkPostponedConstructors` and `checkPostponedRecursors`). -/
def comparePostponed (r : Replay) : CoreM Unit := do
  let env ← getEnv
  for n in (← (r.ctors.get : IO (Array Name))) ++ (← (r.recs.get : IO (Array Name))) do
    let same := match env.find? n, r.consts.find? n with
      | some (.ctorInfo generated), some (.ctorInfo stored) => generated == stored
      | some (.recInfo generated), some (.recInfo stored) => generated == stored
      | _, _ => false
    if same then
      (r.checked.modify (· + 1) : IO Unit)
    else
      refuse r n s!"{n} is not the one the kernel generates for its inductive"

/-- The constants `root` depends on (type and value, transitively) that a workspace module
declares. Others come from the base environment, which holds everything they depend on. -/
def gather (env : Environment) (own : PersistentHashMap Name Name) (root : Name) :
    PersistentHashMap Name ConstantInfo := Id.run do
  let mut seen : NameSet := {}
  let mut out : PersistentHashMap Name ConstantInfo := {}
  let mut todo : Array Name := #[root]
  while !todo.isEmpty do
    let n := todo[todo.size - 1]!
    todo := todo.pop
    if seen.contains n || (own.find? n).isNone then
      continue
    seen := seen.insert n
    if let some ci := env.find? n then
      out := out.insert n ci
      todo := todo ++ used (typeAndValue ci) ++ (companions ci).toArray
  return out

/-! ## Running `CoreM` and `MetaM`

`Core.Context`/`Core.State` and `CoreM.toIO` (`src/Lean/CoreM.lean`), `MetaM.run'` and
`Meta.ppExpr` (`src/Lean/Meta/Basic.lean`). `Options` is a `KVMap` in older Leans and a
structure without `setNat` in the newest (`src/Lean/Data/Options.lean`); `setBool` and
`Lean.Option.set` (`maxHeartbeats`, `src/Lean/CoreM.lean`) exist in both. An option a toolchain
does not know is ignored by it. -/

def checkerOptions : Options :=
  let o := Options.empty.setBool `pp.all true
  let o := maxHeartbeats.set o 0
  (o.setBool `debug.skipKernelTC false).setBool `Elab.async false

def runCore {α : Type} (env : Environment) (x : CoreM α) : IO (α × Core.State) :=
  Core.CoreM.toIO x
    { fileName := "<lean-beam checker>", fileMap := default, options := checkerOptions } { env := env }

def printedType (env : Environment) (ty : Expr) : IO String := do
  try
    let (f, _) ← runCore env (Meta.MetaM.run' (Meta.ppExpr ty))
    return toString f
  catch _ =>
    return toString ty

/-- `Lean.collectAxioms` (`src/Lean/Util/CollectAxioms.lean`), full names, sorted. -/
def axiomsOf (env : Environment) (n : Name) : IO (Array String) := do
  let (axs, _) ← runCore env (collectAxioms n)
  return (sortNames axs).map fun a => a.toString

/-! ## The request and the answer -/

structure Request where
  target : Name
  names : Array (Array String)
  listTheorems : Bool
  replayModules : Array Name

def readRequest (path : String) : IO Request := do
  let j ← IO.ofExcept (Json.parse (← IO.FS.readFile path))
  let protocol ← IO.ofExcept (j.getObjValAs? Nat "checker")
  unless protocol == 1 do
    throw <| IO.userError s!"request for checker protocol {protocol}, this is protocol 1"
  let target ← IO.ofExcept (j.getObjValAs? String "module")
  let names ← IO.ofExcept (j.getObjValAs? (Array (Array String)) "names")
  let listTheorems := (j.getObjValAs? Bool "list_theorems").toOption.getD false
  let replay ← IO.ofExcept (j.getObjValAs? (Array String) "replay_modules")
  return { target := target.toName, names, listTheorems,
    replayModules := replay.map String.toName }

def componentsJson (n : Name) : Json :=
  toJson (components n).toArray

/-- The environment the workspace's constants are replayed into: the imports of the workspace
modules that are not themselves workspace modules (a dependency never imports the workspace). -/
def baseImports (env : Environment) (replay : NameSet) : Array Import := Id.run do
  let mut out : Array Import := #[]
  let mut seen : Array Name := #[]
  for (m, md) in env.header.moduleNames.zip env.header.moduleData do
    if replay.contains m then
      for i in md.imports do
        if !replay.contains i.module && !seen.contains i.module then
          seen := seen.push i.module
          out := out.push { module := i.module }
  return out

/-- The modules whose constants are replayed: `replay_modules` and every loaded module that
imports one of them (directly or not). Such a module cannot be in the base environment, which
would then hold the constants being replayed ("already declared"). -/
def replaySet (env : Environment) (replay : Array Name) : NameSet := Id.run do
  let mut chosen : NameSet := replay.foldl (fun acc m => acc.insert m) {}
  let mut changed := true
  while changed do
    changed := false
    for (m, md) in env.header.moduleNames.zip env.header.moduleData do
      if !chosen.contains m && md.imports.any (fun i => chosen.contains i.module) then
        chosen := chosen.insert m
        changed := true
  return chosen

structure Replayer where
  state : IO.Ref Core.State
  added : IO.Ref NameSet

/-- Replays what `n` depends on into the replayer's environment; on failure the environment is
left as it was, so the next theorem is judged on its own. -/
def replayTheorem (rp : Replayer) (env : Environment) (own : PersistentHashMap Name Name)
    (n : Name) : IO Json := do
  let before ← rp.state.get
  let added ← rp.added.get
  let r : Replay := {
    consts := gather env own n
    visited := ← IO.mkRef added
    ctors := ← IO.mkRef (#[] : Array Name)
    recs := ← IO.mkRef (#[] : Array Name)
    checked := ← IO.mkRef (0 : Nat)
    failure := ← IO.mkRef (none : Option (Name × String)) }
  let work : CoreM NameSet := do
    replayConst r n
    comparePostponed r
    return ← (r.visited.get : IO NameSet)
  try
    let (visited, after) ← Core.CoreM.toIO work
      { fileName := "<lean-beam checker>", fileMap := default, options := checkerOptions } before
    rp.state.set after
    rp.added.set visited
    return Json.mkObj [("ok", Json.bool true), ("checked", toJson (← r.checked.get))]
  catch e =>
    let (culprit, words) := (← r.failure.get).getD (n, toString e)
    return Json.mkObj [("ok", Json.bool false), ("constant", Json.str culprit.toString),
      ("error", Json.str words)]

def answerFor (env : Environment) (own : PersistentHashMap Name Name) (rp : Replayer)
    (replay : Array Name) (cs : Array String) : IO Json := do
  let n := ofComponents cs
  let head := [("name", toJson cs), ("printed", Json.str n.toString)]
  let some ci := env.find? n
    | return Json.mkObj (head ++ [("found", Json.bool false)])
  let members := closure env ci
  let ownMembers := sortNames ((members.map (·.name)).filter fun m =>
    match own.find? m with
    | some mod => replay.contains mod
    | none => false)
  let owner := match moduleOf env own n with
    | some m => Json.str m.toString
    | none => Json.null
  return Json.mkObj (head ++ [
    ("found", Json.bool true),
    ("kind", Json.str (kindOf ci)),
    ("module", owner),
    ("type", Json.str (← printedType env ci.type)),
    ("closure", Json.mkObj [
      ("hash", Json.str (← closureHash members)),
      ("count", toJson members.size),
      ("own", toJson ((ownMembers.extract 0 200).map fun m => m.toString))]),
    ("axioms", toJson (← axiomsOf env n)),
    ("replay", ← replayTheorem rp env own n)])

/-- The module's own theorems (not internal names such as `_proof_1` or `_auxLemma`). -/
def declared (env : Environment) (target : Name) : Array Json := Id.run do
  let mut out : Array Name := #[]
  for (m, md) in env.header.moduleNames.zip env.header.moduleData do
    if m == target then
      for ci in md.constants do
        if let .thmInfo _ := ci then
          if !ci.name.isInternal then
            out := out.push ci.name
  return ((sortNames out).extract 0 1000).map componentsJson

def answer (req : Request) : IO Json := do
  -- `initSearchPath`, `findSysroot`: `src/Lean/Util/Path.lean` (LEAN_PATH from `lake env`).
  -- `lean` enables initializer execution at startup (`src/util/shell.cpp`), and before
  -- `importModules` took `loadExts` (default false; lean4#6325, v4.19/v4.20) importing ran every
  -- imported module's `[init]` code (`finalizePersistentExtensions`, `InitAttr.lean`): the
  -- workspace could print an answer of its own. Those Leans are refused (checkerFailed).
  if Lean.version.major == 4 && Lean.version.minor < 20 then
    throw <| IO.userError s!"Lean {Lean.versionString}: importModules would run the \
      workspace's initializers here; certification needs Lean 4.20 or newer"
  initSearchPath (← findSysroot)
  -- `importModules`: `src/Lean/Environment.lean`; `loadExts` false by default (no extension
  -- and no initializer of the workspace is run), trust level 0.
  let env ← importModules #[{ module := req.target }] {} (trustLevel := 0)
  let replay := req.replayModules
  let replayed := replaySet env replay
  let own := owners env replayed
  let base ← importModules (baseImports env replayed) {} (trustLevel := 0)
  let rp : Replayer :=
    { state := ← IO.mkRef ({ env := base } : Core.State), added := ← IO.mkRef ({} : NameSet) }
  let mut theorems : Array Json := #[]
  for cs in req.names do
    theorems := theorems.push (← answerFor env own rp replay cs)
  let mut fields : List (String × Json) := [
    ("checker", toJson (1 : Nat)),
    ("lean_version", Json.str Lean.versionString),
    ("module", Json.str req.target.toString),
    ("theorems", Json.arr theorems)]
  if req.listTheorems then
    fields := fields ++ [("declared", Json.arr (declared env req.target))]
  return Json.mkObj fields

end LeanBeamChecker

def main (args : List String) : IO UInt32 := do
  let some path := args.head?
    | do
      IO.eprintln "usage: lean --run Checker.lean <request.json>"
      return 2
  let req ← LeanBeamChecker.readRequest path
  let answer ← LeanBeamChecker.answer req
  IO.println answer.compress
  return 0
