// Optimizer playground. The controls are built from the optimizer's parameters in /openapi.json
// (the table the server parses with), so the page cannot drift from the service. The page's own
// address (/ui/optimizer?file=…&width=…) holds the state; the result is fetched from the public
// URL of the file, and its sizes, ratio and format are read from the answer's headers.
"use strict";

(function () {
  const { bytes, element, errorText, copyButton, inline } = window.ui;
  const form = document.getElementById("controls");
  const fileInput = document.getElementById("file");
  const datalist = document.getElementById("file-list");
  const listingNote = document.getElementById("listing-note");
  const fieldset = document.getElementById("params");
  const status = document.getElementById("status");
  const liveUrl = document.getElementById("live-url");
  const original = document.getElementById("original");
  const result = document.getElementById("result");
  const textResult = document.getElementById("text-result");
  const widths = document.getElementById("widths");
  const snippet = document.getElementById("snippet");
  const snippetSection = document.getElementById("snippet-section");
  const originalFigure = document.getElementById("original-figure");
  const resultFigure = document.getElementById("result-figure");
  const explain = document.getElementById("explain");
  const ACCEPT = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8";
  const TEXT_FILE = /\.(css|js|mjs)$/i;
  const controls = new Map(); // parameter name -> input or select
  let resultUrl = "";
  let generation = 0;
  let listingTimer = 0;
  let snippetGeneration = 0;
  let snippetTimer = 0;
  const MAX_WIDTHS = 8;
  // What a 403 naming `s` means for this page (docs/deploying.md, "Signed URLs").
  const SIGNING_NOTE = "This server only answers signed optimizer URLs (ASSETGATE_SIGNING_KEYS " +
    "is set): a URL that transforms a file must end with an s= signature made with the " +
    "server's secret key, so that nobody can make it render variants it never published. This " +
    "page has no key, so it can show the original file (a URL without parameters needs no " +
    "signature) but no result. To see one, sign its URL on the server, e.g. " +
    "assetgate sign '/photo.jpg?width=400', and open the printed URL.";

  function isAlias(param) {
    return /^Short name of/.test(param.description || "");
  }

  function control(param) {
    const id = `p-${param.name}`;
    const schema = param.schema || {};
    const wrap = element("div");
    const label = element("label", param.name);
    label.htmlFor = id;
    let input;
    if (schema.type === "boolean") {
      wrap.className = "check";
      input = element("input");
      input.type = "checkbox";
    } else if (schema.enum) {
      input = element("select");
      input.appendChild(element("option", "(default)")).value = "";
      for (const value of schema.enum) input.appendChild(element("option", value)).value = String(value);
    } else {
      input = element("input");
      if (schema.type === "integer") {
        input.type = "number";
        input.min = schema.minimum;
        input.max = schema.maximum;
        input.step = 1;
      } else {
        input.type = "text";
        input.spellcheck = false;
      }
    }
    input.id = id;
    input.name = param.name;
    label.appendChild(element("span", null, "doc")).appendChild(inline(param.description));
    if (schema.type === "boolean") wrap.append(input, label);
    else wrap.append(label, input);
    controls.set(param.name, input);
    return wrap;
  }

  function readControl(input) {
    if (input.type === "checkbox") return input.checked ? "true" : "";
    return input.value.trim();
  }

  function writeControl(input, value) {
    if (input.type === "checkbox") input.checked = ["1", "true", "yes", "on"].includes(value);
    else input.value = value;
  }

  // Current state as query pairs, in the order of the optimizer's table.
  function state() {
    const params = new URLSearchParams();
    for (const [name, input] of controls) {
      const value = readControl(input);
      if (value !== "") params.set(name, value);
    }
    return params;
  }

  function publicUrl(file, params) {
    const path = file.split("/").map(encodeURIComponent).join("/");
    const query = params.toString();
    return `/${path}${query ? `?${query}` : ""}`;
  }

  function absolute(url) {
    return new URL(url, window.location.origin).href;
  }

  // The width an answer really has (the optimizer never enlarges unless upscaling=resampling):
  // a srcset descriptor must say it, or the browser picks by a width the file does not have.
  async function measure(url) {
    const response = await fetch(url, { headers: { Accept: ACCEPT } });
    if (!response.ok) throw new Error(await errorText(response));
    const bitmap = await createImageBitmap(await response.blob());
    const width = bitmap.width;
    bitmap.close();
    return width;
  }

  async function updateSnippet(file, params) {
    const mine = ++snippetGeneration;
    const list = widths.value.split(",").map((w) => Number.parseInt(w, 10))
      .filter((w) => Number.isInteger(w) && w > 0 && w <= 50000);
    if (!file || !list.length || TEXT_FILE.test(file)) {
      snippet.textContent = "";
      return;
    }
    const base = new URLSearchParams(params);
    base.delete("width");
    base.delete("w");
    const at = (width) => {
      const query = new URLSearchParams(base);
      query.set("width", String(width));
      return absolute(publicUrl(file, query));
    };
    const asked = [...new Set(list)].sort((a, b) => a - b).slice(0, MAX_WIDTHS);
    snippet.textContent = "Measuring each width…";
    let real;
    try {
      real = await Promise.all(asked.map((w) => measure(at(w))));
    } catch (error) {
      if (mine === snippetGeneration) snippet.textContent = `No snippet: ${error.message}`;
      return;
    }
    if (mine !== snippetGeneration) return;
    // One entry per real width (the narrowest width asked that gives it): a 960 px source asked
    // for 1280 is one "960w" entry, not a "1280w" that would be a lie.
    const entries = [];
    asked.forEach((w, i) => {
      if (!entries.some(([, width]) => width === real[i])) entries.push([at(w), real[i]]);
    });
    const middle = entries[Math.floor((entries.length - 1) / 2)][0];
    const srcset = entries.map(([url, width]) => `${url} ${width}w`).join(",\n             ");
    const largest = entries[entries.length - 1][1];
    snippet.textContent =
      `<img src="${middle}"\n     srcset="${srcset}"\n` +
      `     sizes="(max-width: ${largest}px) 100vw, ${largest}px"\n     alt="">`;
  }

  function clearResult() {
    if (resultUrl) URL.revokeObjectURL(resultUrl);
    resultUrl = "";
    result.removeAttribute("src");
    result.hidden = true;
    textResult.hidden = true;
    resultFigure.hidden = true;
    for (const id of ["bytes-before", "bytes-after", "ratio", "output-format", "time"]) {
      document.getElementById(id).textContent = "–";
    }
    document.getElementById("result-dims").textContent = "";
  }

  function show(id, text) {
    document.getElementById(id).textContent = text;
  }

  async function run() {
    const file = fileInput.value.trim().replace(/^\/+/, "");
    const params = state();
    const page = new URLSearchParams(params);
    if (file) page.set("file", file);
    history.replaceState(null, "", `/ui/optimizer${page.toString() ? `?${page}` : ""}`);
    snippetGeneration += 1;
    snippet.textContent = "";
    if (!file) {
      status.textContent = "Choose a file.";
      return;
    }
    const url = publicUrl(file, params);
    liveUrl.textContent = absolute(url);
    liveUrl.href = url;
    const mine = ++generation;
    status.className = "status";
    status.textContent = "Working…";
    explain.hidden = true;
    const text = TEXT_FILE.test(file);
    // The original shows once it has loaded (a missing file is no broken-image icon); a CSS or
    // JavaScript file has no picture, only the text of the answer.
    originalFigure.hidden = true;
    snippetSection.hidden = text;
    const source = publicUrl(file, new URLSearchParams());
    if (text) original.removeAttribute("src");
    else if (original.getAttribute("src") === source && original.complete) {
      originalFigure.hidden = original.naturalWidth === 0;
    } else original.src = source;
    const started = performance.now();
    let response;
    try {
      response = await fetch(url, { headers: { Accept: ACCEPT } });
    } catch (error) {
      status.className = "status error";
      status.textContent = "The service could not be reached.";
      return;
    }
    const elapsed = performance.now() - started;
    if (mine !== generation) return;
    clearResult();
    if (!response.ok) {
      const message = await errorText(response);
      status.className = "status error";
      status.textContent = `HTTP ${response.status}: ${message}`;
      snippetSection.hidden = true;
      if (response.status === 403 && message.startsWith("s: ")) {
        explain.textContent = SIGNING_NOTE;
        explain.hidden = false;
      }
      return;
    }
    const blob = await response.blob();
    if (mine !== generation) return;
    const headers = response.headers;
    const before = Number.parseInt(headers.get("X-Original-Size") || "", 10);
    const after = Number.parseInt(headers.get("X-Compressed-Size") || "", 10);
    const passthrough = headers.get("X-Optimizer-Status") === "passthrough";
    show("bytes-before", bytes(before));
    show("bytes-after", passthrough ? `${bytes(blob.size)} (unchanged)` : bytes(Number.isNaN(after) ? blob.size : after));
    show("ratio", headers.get("X-Compression-Ratio") || (passthrough ? "0 % (passed through)" : "–"));
    show("output-format", headers.get("X-Output-Format") || headers.get("Content-Type") || "–");
    // quality=auto (and max_bytes) say which quality they settled on; auto also its score.
    show("output-quality", headers.get("X-Output-Quality") || "–");
    show("output-score", headers.get("X-Output-Score") || "–");
    const server = headers.get("Server-Timing");
    show("time", `${Math.round(elapsed)} ms in the browser${server ? ` (server: ${server})` : ""}`);
    resultFigure.hidden = false;
    if (text) {
      textResult.textContent = (await blob.text()).slice(0, 4000);
      textResult.hidden = false;
      result.hidden = true;
    } else {
      result.hidden = false;
      resultUrl = URL.createObjectURL(blob);
      result.src = resultUrl;
      updateSnippet(file, params);
    }
    status.textContent = `Done: ${file}.`;
  }

  function dims(img, target) {
    img.addEventListener("load", () => {
      document.getElementById(target).textContent = `${img.naturalWidth} × ${img.naturalHeight}`;
    });
  }

  original.addEventListener("load", () => { originalFigure.hidden = false; });
  original.addEventListener("error", () => { originalFigure.hidden = true; });

  async function complete() {
    try {
      const response = await fetch(`/ui/files?q=${encodeURIComponent(fileInput.value.trim())}&limit=50`);
      if (response.status === 404) {
        listingNote.textContent = "File listing is turned off on this server: type the path.";
        return;
      }
      if (!response.ok) return;
      const data = await response.json();
      datalist.replaceChildren(...data.files.map((name) => {
        const option = element("option");
        option.value = name;
        return option;
      }));
      listingNote.textContent = data.truncated ? "More files match: keep typing to narrow." : "";
    } catch (error) {
      // Completion is a convenience; typing still works.
    }
  }

  async function build() {
    try {
      const response = await fetch("/openapi.json", { headers: { Accept: "application/json" } });
      const doc = await response.json();
      const params = doc.paths["/"].get.parameters.filter((p) => p.name !== "file" && !isAlias(p));
      for (const param of params) fieldset.appendChild(control(param));
    } catch (error) {
      status.className = "status error";
      status.textContent = "The optimizer's parameters could not be loaded from /openapi.json.";
      return;
    }
    const initial = new URLSearchParams(window.location.search);
    fileInput.value = initial.get("file") || "";
    for (const [name, input] of controls) {
      const value = initial.get(name);
      if (value !== null) writeControl(input, value);
    }
    complete();
    if (fileInput.value) run();
  }

  dims(original, "original-dims");
  dims(result, "result-dims");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
  form.addEventListener("change", (event) => {
    if (event.target !== fileInput) run();
  });
  fileInput.addEventListener("input", () => {
    clearTimeout(listingTimer);
    listingTimer = setTimeout(complete, 150);
  });
  fileInput.addEventListener("change", run);
  widths.addEventListener("input", () => {
    clearTimeout(snippetTimer);
    snippetTimer = setTimeout(() => updateSnippet(fileInput.value.trim(), state()), 300);
  });
  document.getElementById("reset").addEventListener("click", () => {
    for (const input of controls.values()) writeControl(input, "");
    run();
  });
  copyButton(document.getElementById("copy-url"), liveUrl, status);
  copyButton(document.getElementById("copy-snippet"), snippet, status);
  build();
})();
