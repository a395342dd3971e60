// Package search page: calls /npm/search as you type and renders pinned, copy-ready tags.
// Everything from the catalogs is attacker-controlled: it is only ever assigned to textContent
// (never innerHTML), so names and descriptions render as text. The page's CSP allows scripts
// and fetches from this origin only.
"use strict";

(function () {
  const DEBOUNCE_MS = 200;
  const form = document.getElementById("search-form");
  const input = document.getElementById("q");
  const status = document.getElementById("status");
  const list = document.getElementById("results");
  const template = document.getElementById("result-template");
  const warnings = document.getElementById("warnings");
  let timer = 0;
  let generation = 0;

  function absolute(url) {
    return new URL(url, window.location.origin).href;
  }

  function isCss(url) {
    return /\.css$/i.test(url.split("?")[0]);
  }

  function makeTag(url, integrity) {
    const sri = integrity ? ` integrity="${integrity}" crossorigin="anonymous"` : "";
    if (isCss(url)) {
      return `<link rel="stylesheet" href="${url}"${sri}>`;
    }
    return `<script src="${url}"${sri}></script>`;
  }

  // A package's default file that a classic <script> cannot run (CommonJS: react's index.js
  // throws "process is not defined"; an ES module: a syntax error) is offered as an ES module
  // import of the package's +esm build instead, as jsDelivr's and esm.sh's module URLs are.
  function makeModuleTag(item) {
    const url = absolute(`/npm/${item.name}@${item.version}/+esm`);
    return `<script type="module">\nimport * as pkg from ${JSON.stringify(url)};\n</script>`;
  }

  const MODULE_NOTES = {
    commonjs: "The default file is CommonJS: a <script src> tag would throw in a browser " +
      "(process, require). This imports the package's ES module build; a <script src> needs a " +
      "UMD build of the package.",
    esm: "The default file is an ES module: it loads with <script type=\"module\">.",
  };

  async function fetchSri(item, code, note) {
    // Only for results already in the store: typing never makes the server download packages.
    try {
      const response = await fetch(`${item.url}?sri`, { headers: { Accept: "application/json" } });
      if (!response.ok) return;
      const data = await response.json();
      if (Object.prototype.hasOwnProperty.call(MODULE_NOTES, data.module)) {
        code.textContent = makeModuleTag(item);
        note.textContent = MODULE_NOTES[data.module];
        note.hidden = false;
      } else if (typeof data.url === "string" && typeof data.integrity === "string") {
        code.textContent = makeTag(absolute(data.url), data.integrity);
      }
    } catch (error) {
      // Keep the tag without integrity.
    }
  }

  function copy(text) {
    navigator.clipboard.writeText(text).then(
      () => { status.textContent = "Copied."; },
      () => { status.textContent = "Copy failed: select the tag and copy it by hand."; },
    );
  }

  // An npm result's import map (/npm/importmap: every module pinned, with integrity), asked for
  // on a click only, since it builds the package's modules.
  async function showImportMap(item, box) {
    const code = box.querySelector(".map");
    code.hidden = false;
    code.textContent = "Building the ES modules…";
    try {
      const pkg = encodeURIComponent(`${item.name}@${item.version}`);
      const response = await fetch(`/npm/importmap?pkg=${pkg}`);
      const data = await response.json();
      if (!response.ok) {
        code.textContent = `No import map: ${data.error || response.status}`;
        return;
      }
      const json = JSON.stringify(data, null, 2).replace(/</g, "\\u003c");
      code.textContent =
        `<script type="importmap">\n${json}\n</script>\n` +
        `<script type="module">\nimport * as pkg from ${JSON.stringify(item.name)};\n</script>`;
      box.querySelector(".copy-map").hidden = false;
    } catch (error) {
      code.textContent = "No import map: the service is unreachable.";
    }
  }

  function render(data) {
    list.replaceChildren();
    for (const item of data.results) {
      const node = template.content.firstElementChild.cloneNode(true);
      node.querySelector(".name").textContent = item.name;
      node.querySelector(".version").textContent = item.version;
      node.querySelector(".kind").textContent = item.kind;
      node.querySelector(".description").textContent = item.description;
      node.querySelector(".ready").hidden = !item.ready;
      const code = node.querySelector(".tag");
      code.textContent = makeTag(absolute(item.url), "");
      node.querySelector(".copy").addEventListener("click", () => copy(code.textContent));
      const esm = node.querySelector(".esm");
      if (item.kind === "package") {
        esm.hidden = false;
        esm.querySelector(".show-map").addEventListener("click", () => showImportMap(item, esm));
        esm.querySelector(".copy-map").addEventListener("click", () => {
          copy(esm.querySelector(".map").textContent);
        });
      }
      if (item.ready) fetchSri(item, code, node.querySelector(".module-note"));
      list.appendChild(node);
    }
    // A catalog that failed makes the answer partial: say so, or "no results" would mislead.
    const notes = Array.isArray(data.warnings) ? data.warnings : [];
    warnings.textContent = notes.length ? `Incomplete results. ${notes.join(" ")}` : "";
    warnings.hidden = notes.length === 0;
    const shown = data.results.length;
    status.textContent = shown
      ? `${shown} of ${data.total} result${data.total === 1 ? "" : "s"} for “${data.query}”`
      : `No results for “${data.query}”`;
  }

  async function search(query) {
    const mine = ++generation;
    status.textContent = "Searching…";
    try {
      const response = await fetch(`/npm/search?q=${encodeURIComponent(query)}&limit=12`, {
        headers: { Accept: "application/json" },
      });
      const data = await response.json();
      if (mine !== generation) return;
      if (!response.ok) {
        list.replaceChildren();
        warnings.hidden = true;
        status.textContent = `Search failed: ${data.error || response.status}`;
        return;
      }
      render(data);
    } catch (error) {
      if (mine === generation) status.textContent = "Search failed: the service is unreachable.";
    }
  }

  function schedule() {
    window.clearTimeout(timer);
    const query = input.value.trim();
    if (query.length < 2) {
      generation++;
      list.replaceChildren();
      status.textContent = query ? "Type at least two characters." : "";
      return;
    }
    timer = window.setTimeout(() => search(query.slice(0, 80)), DEBOUNCE_MS);
  }

  // The address holds the search: /npm?q=react opens with it, and typing keeps ?q= current, so a
  // search can be linked and survives a reload.
  function remember() {
    const query = input.value.trim();
    const url = query ? `/npm?q=${encodeURIComponent(query)}` : "/npm";
    if (url !== window.location.pathname + window.location.search) {
      window.history.replaceState(null, "", url);
    }
  }

  input.addEventListener("input", schedule);
  input.addEventListener("input", remember);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    window.clearTimeout(timer);
    remember();
    const query = input.value.trim();
    if (query.length >= 2) search(query.slice(0, 80));
  });
  const asked = new URLSearchParams(window.location.search).get("q");
  if (asked !== null) input.value = asked.slice(0, 80);
  if (input.value.trim()) schedule();
})();
