// One ES-module build of one npm package entry, for assetgate's /npm/<pkg>@<version>[/<sub>]/+esm
// (docs/packages.md, "ES modules").
//
// Run by assetgate (packages/esm/bundler.py) as `node build.mjs` with a JSON job on stdin and
// ASSETGATE_BUNDLER_DIR naming the node_modules folder that holds esbuild and cjs-module-lexer.
// It writes the module to job.out and prints {"imports": [...]} (the external module URLs the
// module imports); on failure it exits 2 (build) or 3 (no such entry) with one line on stderr.
//
// The package's code is only ever parsed: by esbuild, which bundles it, and by cjs-module-lexer
// (the lexer Node.js itself uses to name a CommonJS module's exports for `import`). No plugin or
// script of the package runs; the one plugin is below. Nothing outside the package's folder is
// read: every resolved path is checked, and tsconfig discovery is pinned to an empty file.
//
// Job: {dir, name, subpath, out, externals: {pkg: "/npm/pkg@1.2.3"}, dependencies: [pkg],
//       pending, minify, target}
//   dir/node_modules/<name>/  the package's files
//   externals                 what is pinned already (the package itself, for its other entries):
//                             `import` of them becomes an import of "<base>[/<sub>]/+esm";
//                             require() of them gets that module's CommonJS value.
//   dependencies, pending     every dependency and peer dependency, not yet pinned: an import of
//                             one becomes "/npm/<dep>@<pending>[/<sub>]/+esm", and assetgate pins
//                             only the ones the module really imports (`pending` is a random token
//                             per build, replaced by the exact version after the build).
//   An `import` of any other bare name stays as it is (the page's map names it).
// A bare import's subpath is normalised ("a/./b//c" is "a/b/c"); one that would leave the
// package ("..", "?", "#", "%", "\\") fails the build: the URL must stay a pinned module, and a
// bare name left for the page's map must not climb out of the package the map names.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.ASSETGATE_BUNDLER_DIR, "noop.js"));
const esbuild = require("esbuild");
const lexer = require("cjs-module-lexer");

const job = JSON.parse(readFileSync(0, "utf8"));
const pkgDir = path.join(job.dir, "node_modules", ...job.name.split("/"));
const IDENT = /^[A-Za-z_$][\w$]*$/;
const RESERVED = new Set(["default", "__esModule"]);
const imports = new Set();

class EntryMissing extends Error {}

function fail(message, code = 2) {
  process.stderr.write(String(message).split("\n")[0].slice(0, 400) + "\n");
  process.exit(code);
}

function inside(file) {
  return file === pkgDir || file.startsWith(pkgDir + path.sep);
}

function splitBare(spec) {
  const parts = spec.split("/");
  const take = spec.startsWith("@") ? 2 : 1;
  return [parts.slice(0, take).join("/"), parts.slice(take).join("/")];
}

const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@-]+$/;

// The subpath of a bare import as a path inside its package, or null when it leaves it.
function cleanSub(sub) {
  const kept = [];
  for (const segment of sub.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === ".." || !SEGMENT.test(segment)) return null;
    kept.push(segment);
  }
  return kept.join("/");
}

const dependencies = new Set(job.dependencies || []);

// The module URL a bare import of a dependency (or of the package itself) becomes.
function externalUrl(pkg, sub) {
  const base = Object.hasOwn(job.externals, pkg)
    ? job.externals[pkg]
    : dependencies.has(pkg)
      ? `/npm/${pkg}@${job.pending}`
      : null;
  if (base === null) return undefined;
  const clean = cleanSub(sub);
  if (clean === null) return null;
  return `${base}${clean ? "/" + clean : ""}/+esm`;
}

// Named exports of a CommonJS file, following relative re-exports (module.exports = require("./x")).
function cjsExports(file, seen = new Set()) {
  if (seen.has(file) || seen.size > 64) return new Set();
  seen.add(file);
  let parsed;
  try {
    parsed = lexer.parse(readFileSync(file, "utf8"));
  } catch {
    return new Set();
  }
  const names = new Set(parsed.exports);
  for (const target of parsed.reexports) {
    if (!target.startsWith(".")) continue;
    let found;
    try {
      found = require.resolve(path.resolve(path.dirname(file), target));
    } catch {
      continue;
    }
    if (!inside(found)) continue;
    for (const name of cjsExports(found, seen)) names.add(name);
  }
  return names;
}

const REQUIRE_VALUE = (url) => `var ns = require(${JSON.stringify("assetgate-ns:" + url)}).m;
var d = ns.default;
module.exports = d != null && (typeof d === "object" || typeof d === "function") &&
  Object.keys(ns).every(function (k) { return k === "default" || d[k] === ns[k]; })
  ? d
  : Object.defineProperty(Object.assign({}, ns), "__esModule", { value: true });`;

const guardPlugin = {
  name: "assetgate",
  setup(build) {
    build.onResolve({ filter: /^assetgate-ns:/ }, (args) => ({
      path: args.path.slice("assetgate-ns:".length),
      namespace: "assetgate-ns",
    }));
    build.onResolve({ filter: /.*/, namespace: "assetgate-ns" }, (args) => {
      imports.add(args.path);
      return { path: args.path, external: true };
    });
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === "checking" || args.kind === "entry-point") return undefined;
      if (/^[^./]/.test(args.path) && !/^[a-z]+:/i.test(args.path)) {
        const [pkg, sub] = splitBare(args.path);
        const url = externalUrl(pkg, sub);
        if (url === null) {
          return { errors: [{ text: `${args.path} leaves the package ${pkg}` }] };
        }
        if (url !== undefined) {
          if (args.kind === "require-call") return { path: url, namespace: "assetgate-require" };
          imports.add(url);
          return { path: url, external: true };
        }
      }
      // Anything else must resolve to a file of the package itself ...
      const found = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "checking",
      });
      // ... except an `import` of a bare name the package does not depend on (an optional
      // peer, as htm/preact's "preact"): it stays a bare import for the page's own import map.
      // require() of one still fails: it would only throw later, in the browser.
      const bare = /^[^./]/.test(args.path) && !/^[a-z]+:/i.test(args.path);
      const missing = found.errors.length || (found.namespace === "file" && !inside(found.path));
      if (bare && missing && (args.kind === "import-statement" || args.kind === "dynamic-import")) {
        const [pkg, sub] = splitBare(args.path);
        const clean = cleanSub(sub);
        if (clean === null) return { errors: [{ text: `${args.path} leaves the package ${pkg}` }] };
        return { path: clean ? `${pkg}/${clean}` : pkg, external: true };
      }
      if (found.errors.length) return { errors: found.errors };
      if (found.external || found.namespace !== "file") return found;
      if (!inside(found.path)) {
        return { errors: [{ text: `${args.path} is not a file of ${job.name} nor a dependency` }] };
      }
      return { path: found.path, sideEffects: found.sideEffects };
    });
    // The namespace of an external module, imported statically (so it stays an ESM import) ...
    build.onLoad({ filter: /.*/, namespace: "assetgate-ns" }, (args) => ({
      contents: `import * as m from ${JSON.stringify(args.path)}; export { m };`,
      loader: "js",
    }));
    // ... and what require() of it returns: module.exports when it was a CommonJS package
    // (every named export is a property of its default), else the namespace, as __esModule.
    build.onLoad({ filter: /.*/, namespace: "assetgate-require" }, (args) => ({
      contents: REQUIRE_VALUE(args.path),
      loader: "js",
    }));
  },
};

const tsconfig = path.join(job.dir, "assetgate-tsconfig.json");
writeFileSync(tsconfig, "{}");
const common = { absWorkingDir: job.dir, tsconfig, logLevel: "silent", write: false };

async function resolveEntry() {
  const spec = job.subpath ? `${job.name}/${job.subpath}` : job.name;
  let resolved;
  await esbuild.build({
    ...common,
    stdin: { contents: "", resolveDir: job.dir },
    platform: "browser",
    plugins: [
      {
        name: "assetgate-entry",
        setup(build) {
          build.onStart(async () => {
            resolved = await build.resolve(spec, { kind: "import-statement", resolveDir: job.dir });
          });
        },
      },
    ],
  });
  if (!resolved || resolved.errors.length || !resolved.path || !inside(resolved.path)) {
    throw new EntryMissing(`${spec} names no module of the package`);
  }
  return resolved.path;
}

async function formatOf(file) {
  const probe = await esbuild.build({
    ...common,
    entryPoints: [file],
    bundle: false,
    metafile: true,
    format: "esm",
    outdir: "probe",
  });
  const input = Object.values(probe.metafile.inputs)[0];
  return input && input.format;
}

function wrapperFor(file) {
  const names = [...cjsExports(file)].filter((n) => !RESERVED.has(n)).sort();
  const lines = [`import m from ${JSON.stringify(file)};`, "export default m;"];
  names.forEach((name, i) => {
    lines.push(`var e${i} = m[${JSON.stringify(name)}];`);
    lines.push(`export { e${i} as ${IDENT.test(name) ? name : JSON.stringify(name)} };`);
  });
  return lines.join("\n");
}

try {
  const entry = await resolveEntry();
  const format = await formatOf(entry);
  const input =
    format === "esm"
      ? { entryPoints: [entry] }
      : { stdin: { contents: wrapperFor(entry), resolveDir: path.dirname(entry), sourcefile: "entry.js" } };
  const result = await esbuild.build({
    ...common,
    ...input,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: job.target || "es2022", // import maps need newer browsers anyway
    minify: job.minify !== false,
    legalComments: "eof",
    define: { "process.env.NODE_ENV": '"production"', global: "globalThis" },
    plugins: [guardPlugin],
    outdir: "out",
  });
  const js = result.outputFiles.find((f) => f.path.endsWith(".js"));
  if (!js) fail("the bundler produced no JavaScript");
  writeFileSync(job.out, js.contents);
  process.stdout.write(JSON.stringify({ imports: [...imports].sort() }));
} catch (err) {
  if (err instanceof EntryMissing) fail(err.message, 3);
  const first = err && err.errors && err.errors.length ? err.errors[0] : null;
  fail(first ? first.text : (err && err.message) || String(err));
}
