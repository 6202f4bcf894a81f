//! Teaching wasm-bindgen's JavaScript glue to load the lazy module.
//!
//! The glue builds the primary module's imports and instantiates it; after the split, the primary
//! also imports `__kl.load` and the lazy module imports the primary's exports. Three small edits
//! at anchors the pinned wasm-bindgen (0.2.130) writes, each required to match exactly once, so a
//! different glue fails the build instead of shipping a page that cannot load its code:
//! the import object gains `__kl`, the instance's exports are kept for the lazy module, and once
//! the app has started and drawn its first picture the lazy module is fetched in the background.

/// The loader, appended to the glue. `__kl_load` runs inside a stub when a lazy body is needed;
/// if the background fetch has not finished it fetches the module synchronously (a blocking
/// request, the only way to answer a synchronous call; the keep list makes it rare). With
/// `globalThis.kubeloopSplitProfile` set to a `Set` (scripts/split-profile.mjs), every call of a
/// lazy body is recorded by slot and the flag that skips the loader is never set.
const LOADER: &str = r#"
// Added by kubeloop-split (src/bin/kubeloop-split): the code the first picture does not need
// lives in kubeloop-web_lazy.wasm and is fetched once the app has started.
const __kl = { exports: null, lazy: null, fetching: null, profile: globalThis.kubeloopSplitProfile || null, demandedBy: null };
// How the lazy module arrived, for tests and the page benchmark: `demandedBy` is the slot whose
// call had to fetch it synchronously (null when the background fetch was first).
globalThis.kubeloopLazy = () => ({ loaded: __kl.lazy !== null, demandedBy: __kl.demandedBy });
function __kl_url() { return new URL('kubeloop-web_lazy.wasm', import.meta.url); }
function __kl_instantiate(module) {
    if (__kl.lazy) return;
    __kl.lazy = new WebAssembly.Instance(module, { p: __kl.exports });
    if (!__kl.profile) __kl.exports.__kl_loaded.value = 1;
}
function __kl_load(slot) {
    if (__kl.profile) __kl.profile.add(slot);
    if (__kl.lazy) return;
    __kl.demandedBy = slot;
    const request = new XMLHttpRequest();
    request.open('GET', __kl_url(), false);
    request.overrideMimeType('text/plain; charset=x-user-defined');
    request.send();
    if (request.status !== 200) throw new Error(`kubeloop: cannot load ${__kl_url()}: HTTP ${request.status}`);
    const text = request.responseText;
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
    __kl_instantiate(new WebAssembly.Module(bytes));
}
// Fetch once the page says it is live (<body data-ready="true">), so that the lazy module does not
// compete for the link and the CPU with the first picture; an embedding page that never says so
// gets it three seconds after the start.
function __kl_prefetch_when_ready() {
    const ready = () => document.body?.dataset.ready === 'true';
    if (typeof document === 'undefined' || ready()) return __kl_prefetch();
    const observer = new MutationObserver(() => {
        if (ready()) { observer.disconnect(); __kl_prefetch(); }
    });
    observer.observe(document.documentElement, { subtree: true, attributes: true, attributeFilter: ['data-ready'] });
    setTimeout(() => { observer.disconnect(); __kl_prefetch(); }, 3000);
}
function __kl_prefetch() {
    if (__kl.lazy || __kl.fetching) return;
    __kl.fetching = fetch(__kl_url())
        .then((response) => {
            if (!response.ok) throw new Error(`HTTP ${response.status}`);
            return response.arrayBuffer();
        })
        .then((bytes) => WebAssembly.compile(bytes))
        .then((module) => __kl_instantiate(module))
        .catch((error) => {
            __kl.fetching = null;
            console.warn('kubeloop: the lazy module will be loaded when first needed:', error);
        });
}
"#;

/// The glue with the three edits and the loader, or what did not match.
pub fn patch(glue: &str) -> Result<String, String> {
    if glue.contains("const __kl =") {
        return Err("the glue is already patched".to_string());
    }
    let imports = anchor_after(glue, "\"./kubeloop-web_bg.js\": import0,", "\n        \"__kl\": { __proto__: null, load: __kl_load },")?;
    let exports = anchor_after(&imports, "    wasm = instance.exports;", "\n    __kl.exports = instance.exports;")?;
    let started = anchor_after(&exports, "    wasm.__wbindgen_start();", "\n    __kl_prefetch_when_ready();")?;
    Ok(format!("{started}{LOADER}"))
}

/// `text` with `insert` after the one occurrence of `anchor`.
fn anchor_after(text: &str, anchor: &str, insert: &str) -> Result<String, String> {
    let mut found = text.match_indices(anchor);
    let (Some((at, _)), None) = (found.next(), found.next()) else {
        return Err(format!("the wasm-bindgen glue does not have exactly one `{anchor}`"));
    };
    let end = at + anchor.len();
    Ok(format!("{}{insert}{}", &text[..end], &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GLUE: &str = "function __wbg_get_imports() {\n    return {\n        __proto__: null,\n        \"./kubeloop-web_bg.js\": import0,\n    };\n}\nfunction __wbg_finalize_init(instance, module) {\n    wasm = instance.exports;\n    wasm.__wbindgen_start();\n    return wasm;\n}\n";

    #[test]
    fn the_three_edits_land_in_order_and_the_loader_is_appended() {
        let patched = patch(GLUE).unwrap();
        let import = patched.find("\"__kl\": { __proto__: null, load: __kl_load }").unwrap();
        let keep = patched.find("__kl.exports = instance.exports;").unwrap();
        let start = patched.find("wasm.__wbindgen_start();").unwrap();
        let prefetch = patched.find("__kl_prefetch_when_ready();").unwrap();
        assert!(import < keep && keep < start && start < prefetch);
        assert!(patched.ends_with(LOADER));
    }

    #[test]
    fn a_glue_without_an_anchor_or_already_patched_is_refused() {
        let missing = GLUE.replace("    wasm.__wbindgen_start();\n", "");
        assert!(patch(&missing).unwrap_err().contains("__wbindgen_start"));
        let twice = GLUE.replace("    wasm = instance.exports;", "    wasm = instance.exports;\n    wasm = instance.exports;");
        assert!(patch(&twice).unwrap_err().contains("exactly one"));
        assert!(patch(&patch(GLUE).unwrap()).is_err());
    }
}
