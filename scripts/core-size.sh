#!/usr/bin/env bash
# How much of the page's download is the simulation core and the command language alone: builds
# examples/core_size.rs (no Yew, no page views) with the page's Cargo profile (`page`), runs the same
# wasm-opt passes as index.html, and prints the brotli -11 size next to the page's own wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
cargo build --quiet --profile page --target wasm32-unknown-unknown --example core_size
out=target/wasm32-unknown-unknown/page/examples
wasm-opt -Oz --converge --low-memory-unused --strip-debug --strip-producers "$out/core_size.wasm" -o "$out/core_size.opt.wasm"
node - "$out/core_size.opt.wasm" <<'JS'
const zlib = require("zlib"), fs = require("fs");
const brotli = (file) => {
  const bytes = fs.readFileSync(file); // compressed as scripts/size.mjs does
  const params = { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length };
  return zlib.brotliCompressSync(bytes, { params }).length / 1024;
};
const page = fs.existsSync("dist") ? fs.readdirSync("dist").find((f) => f.endsWith("_bg.wasm")) : undefined;
console.log(`simulation core + command language alone: ${brotli(process.argv[2]).toFixed(1)} KB brotli`);
if (page) console.log(`the page's wasm (dist/${page}): ${brotli("dist/" + page).toFixed(1)} KB brotli`);
JS
