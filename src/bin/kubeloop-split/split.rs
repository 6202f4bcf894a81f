//! Splitting one wasm module into a primary module and a lazy one.
//!
//! The primary module keeps every function the page runs while it first comes alive (the keep
//! list, recorded by `scripts/split-profile.mjs`) and replaces each other function's body with a
//! stub; the lazy module holds those bodies. Both are derived from the same input, so every
//! function, global, table and memory keeps its input index on both sides, and the two are joined
//! by name: the lazy module imports `p.f<index>`, `p.g<index>`, `p.t<index>` and `p.m<index>`, and
//! the primary exports exactly the ones it asks for.
//!
//! A stub passes its slot to `ensure`, which checks the exported global `__kl_loaded`; while it is
//! 0 it calls the imported `__kl.load(slot)`, which makes sure the lazy module is instantiated (its
//! active element segment fills the primary's `lazy` table). Then the stub calls its body through
//! that table. So a function
//! that the keep list missed still runs, only later; nothing traps. The data segments stay in the
//! primary module (bodies address memory absolutely, and the memory is shared).

use std::collections::{BTreeMap, BTreeSet};

use walrus::ir::{dfs_in_order, dfs_pre_order_mut, Instr, InstrLocId, UnaryOp, Value, Visitor, VisitorMut};
use walrus::{
    ConstExpr, ElementItems, ElementKind, ExportItem, FunctionBuilder, FunctionId, FunctionKind, GlobalKind, ImportKind, ImportedFunction,
    LocalFunction, Module, ModuleConfig, RefType, ValType,
};

/// The import module of everything the lazy module takes from the primary one.
pub const PRIMARY: &str = "p";
/// The primary module's table of lazy bodies, one slot per split function.
pub const LAZY_TABLE: &str = "lazy";
/// The primary module's flag: 1 once the lazy module's bodies are in the table.
pub const LOADED_GLOBAL: &str = "__kl_loaded";
/// The import module and name of the host function that loads the lazy module.
pub const LOADER_MODULE: &str = "__kl";
pub const LOADER_NAME: &str = "load";

/// A body smaller than this many instructions stays in the primary module: its stub
/// (about ten instructions) would be as big as the body it replaces.
const SMALLEST_SPLIT: u64 = 12;

/// The two modules, and which function went to which slot.
pub struct Split {
    pub primary: Vec<u8>,
    pub lazy: Vec<u8>,
    /// The name of the function in each slot of the lazy table (for the profile script).
    pub lazy_names: Vec<String>,
    /// Local functions the primary module kept with their body.
    pub kept: usize,
}

/// How the lazy module calls its own functions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Calls {
    /// Directly: the shipped build.
    Direct,
    /// Through the primary module's stubs, so that every call of a lazy function passes the
    /// loader and can be recorded (the profile build: `scripts/split-profile.mjs`).
    ThroughStubs,
}

/// Splits `wasm`: functions whose name `keep` accepts stay in the primary module, as do the
/// start function, tiny functions, functions without a name (wasm-opt's own, such as the shared
/// bodies of merged functions: a keep list cannot name them, and they are often hot) and
/// functions whose bodies the lazy module could not hold (they touch data or element segments,
/// or take a function's reference).
pub fn split(wasm: &[u8], keep: &dyn Fn(&str) -> bool, calls: Calls) -> Result<Split, String> {
    let mut primary = parse(wasm)?;
    let mut lazy = parse(wasm)?;
    let (slots, kept) = choose(&primary, keep);
    if slots.is_empty() {
        return Err("nothing to split: every function is kept".to_string());
    }
    let ids = function_ids(&primary);
    let lazy_names = slots.iter().map(|&index| function_name(&primary, ids[index])).collect();
    let wanted = make_lazy(&mut lazy, &slots, calls)?;
    make_primary(&mut primary, &slots, &wanted)?;
    Ok(Split { primary: primary.emit_wasm(), lazy: lazy.emit_wasm(), lazy_names, kept })
}

fn parse(wasm: &[u8]) -> Result<Module, String> {
    let mut config = ModuleConfig::new();
    config.generate_name_section(false).generate_producers_section(false);
    config.parse(wasm).map_err(|error| format!("cannot read the wasm module: {error}"))
}

/// The module's functions by input index: walrus numbers a freshly read module's functions (and
/// globals, tables, memories) in input order, imports first, so both parses agree on it.
fn function_ids(module: &Module) -> Vec<FunctionId> {
    module.funcs.iter().map(|function| function.id()).collect()
}

fn function_name(module: &Module, id: FunctionId) -> String {
    without_crate_hashes(module.funcs.get(id).name.as_deref().unwrap_or(""))
}

/// A function's name without the crate disambiguators of Rust's symbol names
/// (`kubeloop[b12410c01d1c0f3a]::sim::Sim` reads `kubeloop::sim::Sim`): they hash the compiler
/// version and build settings, and the keep list should outlive both.
pub fn without_crate_hashes(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('[') {
        let hash = rest[at + 1..].find(']').map(|end| &rest[at + 1..at + 1 + end]);
        match hash {
            Some(hash) if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
                out.push_str(&rest[..at]);
                rest = &rest[at + hash.len() + 2..];
            }
            _ => {
                out.push_str(&rest[..=at]);
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The input indices of the functions to split, in slot order, and how many local functions stay.
fn choose(module: &Module, keep: &dyn Fn(&str) -> bool) -> (Vec<usize>, usize) {
    let mut slots = Vec::new();
    let mut kept = 0;
    for (index, function) in module.funcs.iter().enumerate() {
        let FunctionKind::Local(body) = &function.kind else { continue };
        let name = function_name(module, function.id());
        let splittable =
            Some(function.id()) != module.start && body.size() >= SMALLEST_SPLIT && !name.is_empty() && !keep(&name) && movable(body);
        if splittable {
            slots.push(index);
        } else {
            kept += 1;
        }
    }
    (slots, kept)
}

/// Whether a body can live in another module: it must not name a data or element segment
/// (those stay in the primary module) nor take a function's reference.
fn movable(body: &LocalFunction) -> bool {
    struct Scan(bool);
    impl<'instr> Visitor<'instr> for Scan {
        fn visit_instr(&mut self, instr: &'instr Instr, _: &'instr InstrLocId) {
            if matches!(
                instr,
                Instr::RefFunc(_)
                    | Instr::MemoryInit(_)
                    | Instr::DataDrop(_)
                    | Instr::TableInit(_)
                    | Instr::ElemDrop(_)
                    | Instr::ArrayNewData(_)
                    | Instr::ArrayNewElem(_)
                    | Instr::ArrayInitData(_)
                    | Instr::ArrayInitElem(_)
            ) {
                self.0 = false;
            }
        }
    }
    let mut scan = Scan(true);
    dfs_in_order(&mut scan, body, body.entry_block());
    scan.0
}

/// Turns a copy of the input into the lazy module: every function that is not split, every
/// global, table and memory becomes an import from the primary module; the split bodies go into
/// the primary's `lazy` table through an active element segment. Returns the names it imports.
fn make_lazy(module: &mut Module, slots: &[usize], calls: Calls) -> Result<BTreeSet<String>, String> {
    let split: BTreeSet<usize> = slots.iter().copied().collect();
    let ids = function_ids(module);
    if calls == Calls::ThroughStubs {
        call_through_stubs(module, slots, &ids);
    }
    for (index, &id) in ids.iter().enumerate() {
        if split.contains(&index) {
            continue;
        }
        let ty = module.funcs.get(id).ty();
        let old = match &module.funcs.get(id).kind {
            FunctionKind::Import(imported) => Some(imported.import),
            _ => None,
        };
        let import = import_from_primary(module, old, format!("f{index}"), ImportKind::Function(id));
        module.funcs.get_mut(id).kind = FunctionKind::Import(ImportedFunction { import, ty });
    }
    let globals: Vec<_> = module.globals.iter().map(|global| global.id()).collect();
    for (index, id) in globals.into_iter().enumerate() {
        let old = match module.globals.get(id).kind {
            GlobalKind::Import(old) => Some(old),
            GlobalKind::Local(_) => None,
        };
        let import = import_from_primary(module, old, format!("g{index}"), ImportKind::Global(id));
        module.globals.get_mut(id).kind = GlobalKind::Import(import);
    }
    let memories: Vec<_> = module.memories.iter().map(|memory| memory.id()).collect();
    for (index, id) in memories.into_iter().enumerate() {
        let old = module.memories.get(id).import;
        let import = import_from_primary(module, old, format!("m{index}"), ImportKind::Memory(id));
        let memory = module.memories.get_mut(id);
        memory.import = Some(import);
        memory.data_segments.clear();
    }
    let tables: Vec<_> = module.tables.iter().map(|table| table.id()).collect();
    for (index, id) in tables.into_iter().enumerate() {
        let old = module.tables.get(id).import;
        let import = import_from_primary(module, old, format!("t{index}"), ImportKind::Table(id));
        let table = module.tables.get_mut(id);
        table.import = Some(import);
        table.elem_segments.clear();
        table.init = None;
    }
    let data: Vec<_> = module.data.iter().map(|data| data.id()).collect();
    data.into_iter().for_each(|id| module.data.delete(id));
    let elements: Vec<_> = module.elements.iter().map(|element| element.id()).collect();
    elements.into_iter().for_each(|id| module.elements.delete(id));
    let exports: Vec<_> = module.exports.iter().map(|export| export.id()).collect();
    exports.into_iter().for_each(|id| module.exports.delete(id));
    let customs: Vec<_> = module.customs.iter().map(|(id, _)| id).collect();
    customs.into_iter().for_each(|id| drop(module.customs.delete(id)));
    module.start = None;

    let size = slots.len() as u64;
    let (table, _) = module.add_import_table(PRIMARY, LAZY_TABLE, false, size, Some(size), RefType::FUNCREF);
    let bodies = slots.iter().map(|&index| ids[index]).collect();
    let offset = ConstExpr::Value(Value::I32(0));
    let element = module.elements.add(ElementKind::Active { table, offset }, ElementItems::Functions(bodies));
    module.tables.get_mut(table).elem_segments.insert(element);
    walrus::passes::gc::run(module);
    Ok(module.imports.iter().filter(|import| import.module == PRIMARY).map(|import| import.name.clone()).collect())
}

/// Replaces an item's import (if it had one) with `p.<name>`, the primary module's export of it.
fn import_from_primary(module: &mut Module, old: Option<walrus::ImportId>, name: String, kind: ImportKind) -> walrus::ImportId {
    if let Some(old) = old {
        module.imports.delete(old);
    }
    module.imports.add(PRIMARY, &name, kind)
}

/// Points every call between lazy bodies at an import of the callee's stub (`p.f<index>`).
fn call_through_stubs(module: &mut Module, slots: &[usize], ids: &[FunctionId]) {
    let mut stubs = BTreeMap::new();
    for &index in slots {
        let ty = module.funcs.get(ids[index]).ty();
        let (stub, _) = module.add_import_func(PRIMARY, &format!("f{index}"), ty);
        stubs.insert(ids[index], stub);
    }
    struct Redirect<'a>(&'a BTreeMap<FunctionId, FunctionId>);
    impl VisitorMut for Redirect<'_> {
        fn visit_instr_mut(&mut self, instr: &mut Instr, _: &mut InstrLocId) {
            let func = match instr {
                Instr::Call(call) => &mut call.func,
                Instr::ReturnCall(call) => &mut call.func,
                _ => return,
            };
            if let Some(&stub) = self.0.get(func) {
                *func = stub;
            }
        }
    }
    for &index in slots {
        if let FunctionKind::Local(body) = &mut module.funcs.get_mut(ids[index]).kind {
            let entry = body.entry_block();
            dfs_pre_order_mut(&mut Redirect(&stubs), body, entry);
        }
    }
}

/// `ensure(slot) -> slot`: calls the loader with the slot while the lazy module is not in, and
/// hands the slot back for the stub's `call_indirect`. One function, so that each stub is small.
fn ensure_loaded(module: &mut Module, load: FunctionId, loaded: walrus::GlobalId) -> FunctionId {
    let slot = module.locals.add(ValType::I32);
    let mut builder = FunctionBuilder::new(&mut module.types, &[ValType::I32], &[ValType::I32]);
    builder.func_body().global_get(loaded).unop(UnaryOp::I32Eqz).if_else(
        None,
        |then| {
            then.local_get(slot).call(load);
        },
        |_| {},
    );
    builder.func_body().local_get(slot);
    builder.finish(vec![slot], &mut module.funcs)
}

/// Turns a copy of the input into the primary module: each split function's body becomes a stub
/// that calls through the `lazy` table, and everything the lazy module imports is exported.
fn make_primary(module: &mut Module, slots: &[usize], wanted: &BTreeSet<String>) -> Result<(), String> {
    let load_type = module.types.add(&[ValType::I32], &[]);
    let (load, _) = module.add_import_func(LOADER_MODULE, LOADER_NAME, load_type);
    let loaded = module.globals.add_local(ValType::I32, true, false, ConstExpr::Value(Value::I32(0)));
    let ensure = ensure_loaded(module, load, loaded);
    let size = slots.len() as u64;
    let table = module.tables.add_local(false, size, Some(size), RefType::FUNCREF);
    let ids = function_ids(module);
    for (slot, &index) in slots.iter().enumerate() {
        let id = ids[index];
        let slot = i32::try_from(slot).map_err(|_| "too many functions to split".to_string())?;
        let ty = module.funcs.get(id).ty();
        let (params, results) = {
            let ty = module.types.get(ty);
            (ty.params().to_vec(), ty.results().to_vec())
        };
        // The stub: its arguments, then its slot (through `ensure`, which loads the lazy module
        // first if need be), then a call through the lazy table. About ten bytes each.
        let mut builder = FunctionBuilder::new(&mut module.types, &params, &results);
        let args: Vec<_> = params.iter().map(|&param| module.locals.add(param)).collect();
        let mut body = builder.func_body();
        for &arg in &args {
            body.local_get(arg);
        }
        body.i32_const(slot).call(ensure).call_indirect(ty, table);
        module.funcs.get_mut(id).kind = FunctionKind::Local(builder.local_func(args));
    }

    let taken: BTreeSet<String> = module.exports.iter().map(|export| export.name.clone()).collect();
    for name in [LAZY_TABLE, LOADED_GLOBAL] {
        if taken.contains(name) {
            return Err(format!("the module already exports {name}"));
        }
    }
    module.exports.add(LAZY_TABLE, table);
    module.exports.add(LOADED_GLOBAL, loaded);
    let globals: Vec<_> = module.globals.iter().map(|global| global.id()).collect();
    let tables: Vec<_> = module.tables.iter().map(|table| table.id()).collect();
    let memories: Vec<_> = module.memories.iter().map(|memory| memory.id()).collect();
    for name in wanted.iter().filter(|name| name.as_str() != LAZY_TABLE) {
        if taken.contains(name) {
            return Err(format!("the module already exports {name}, which the lazy module imports"));
        }
        let (kind, index) = name.split_at(1);
        let index: usize = index.parse().map_err(|_| format!("unexpected import p.{name}"))?;
        let item = match kind {
            "f" => ExportItem::Function(ids[index]),
            "g" => ExportItem::Global(globals[index]),
            "t" => ExportItem::Table(tables[index]),
            "m" => ExportItem::Memory(memories[index]),
            _ => return Err(format!("unexpected import p.{name}")),
        };
        module.exports.add(name, item);
    }
    walrus::passes::gc::run(module);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use walrus::{FunctionBuilder, Module, ValType};

    /// A module of three functions: `main` (exported, kept) calls `middle`, which calls `leaf`;
    /// `middle` and `leaf` are big enough to split. Returns its bytes.
    fn three_functions() -> Vec<u8> {
        let mut module = Module::default();
        let memory = module.memories.add_local(false, false, 1, None, None);
        module.exports.add("memory", memory);
        let leaf = padded(&mut module, "leaf", |_| {});
        let middle = padded(&mut module, "middle", |body| {
            body.call(leaf);
        });
        let main = padded(&mut module, "main", |body| {
            body.call(middle);
        });
        module.exports.add("main", main);
        module.emit_wasm()
    }

    /// A function `(i32) -> i32` named `name`: enough arithmetic on its argument to be worth
    /// splitting, then `extra` (a call of another such function, or nothing).
    fn padded(module: &mut Module, name: &str, extra: impl FnOnce(&mut walrus::InstrSeqBuilder)) -> FunctionId {
        let arg = module.locals.add(ValType::I32);
        let mut builder = FunctionBuilder::new(&mut module.types, &[ValType::I32], &[ValType::I32]);
        builder.name(name.to_string());
        let mut body = builder.func_body();
        body.local_get(arg);
        for _ in 0..SMALLEST_SPLIT {
            body.i32_const(1).binop(walrus::ir::BinaryOp::I32Add);
        }
        extra(&mut body);
        builder.finish(vec![arg], &mut module.funcs)
    }

    fn sorted(names: &[String]) -> Vec<&str> {
        let mut names: Vec<_> = names.iter().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    fn validate(bytes: &[u8]) {
        wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all()).validate_all(bytes).unwrap();
    }

    fn imports(bytes: &[u8]) -> Vec<String> {
        let module = parse(bytes).unwrap();
        module.imports.iter().map(|import| format!("{}.{}", import.module, import.name)).collect()
    }

    #[test]
    fn kept_functions_stay_and_the_rest_become_stubs_over_a_lazy_table() {
        let input = three_functions();
        let split = split(&input, &|name| name == "main", Calls::Direct).unwrap();
        validate(&split.primary);
        validate(&split.lazy);
        assert_eq!(sorted(&split.lazy_names), ["leaf", "middle"]);
        assert_eq!(imports(&split.primary), ["__kl.load"]);
        let primary = parse(&split.primary).unwrap();
        let exports: Vec<_> = primary.exports.iter().map(|export| export.name.as_str()).collect();
        for name in ["main", "memory", LAZY_TABLE, LOADED_GLOBAL] {
            assert!(exports.contains(&name), "{exports:?}");
        }
        // The lazy module calls its own functions directly: it imports only the table.
        assert_eq!(imports(&split.lazy), ["p.lazy"]);
    }

    #[test]
    fn the_profile_build_routes_lazy_calls_through_the_stubs() {
        let split = split(&three_functions(), &|_| false, Calls::ThroughStubs).unwrap();
        validate(&split.primary);
        validate(&split.lazy);
        assert_eq!(sorted(&split.lazy_names), ["leaf", "main", "middle"]);
        // `main` calls `middle` and `middle` calls `leaf`: both calls go to imported stubs.
        let lazy = imports(&split.lazy);
        assert_eq!(lazy.iter().filter(|name| name.starts_with("p.f")).count(), 2, "{lazy:?}");
    }

    #[test]
    fn crate_hashes_are_dropped_from_names_and_other_brackets_kept() {
        assert_eq!(without_crate_hashes("<kubeloop[b12410c01d1c0f3a]::sim::Sim>::step"), "<kubeloop::sim::Sim>::step");
        assert_eq!(without_crate_hashes("f[i] and [x1]"), "f[i] and [x1]");
        assert_eq!(without_crate_hashes("core[0ab1]::a<alloc[ffee]::B>"), "core::a<alloc::B>");
    }

    #[test]
    fn a_module_with_nothing_to_split_is_refused() {
        assert!(split(&three_functions(), &|_| true, Calls::Direct).is_err());
    }
}
